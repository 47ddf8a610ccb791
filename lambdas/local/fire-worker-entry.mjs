// Entry of a fire worker thread (fire-workers.ts) when the code runs from its TypeScript
// sources (the tests, the benchmarks; the built CLI starts dist/fire-worker.mjs instead). A
// worker thread does not get the main thread's TypeScript loader (tsx's, or vitest's), so it
// registers tsx itself, with this package's tsconfig, before loading the worker. The worker is
// started with an empty execArgv: a `--import tsx` of the parent is not inherited, and tsx is
// registered once.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../../tsconfig.json', import.meta.url)) });
await import('./fire-worker.ts');
