#!/usr/bin/env node
// Launcher: registers tsx so the TypeScript CLI runs as-is on Node 20 and 22 (no build step).
import { register } from 'tsx/esm/api';

register();
await import('./capture-replay.ts');
