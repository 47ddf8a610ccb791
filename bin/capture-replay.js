#!/usr/bin/env node
// Launcher: registers tsx so the TypeScript CLI runs as-is on Node 20 and 22 (no build step),
// with this package's own tsconfig wherever the command is run from (tsx would otherwise
// read a tsconfig.json from the current folder).
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import('./capture-replay.ts');
