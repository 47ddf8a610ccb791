// A fire worker that crashes on purpose (test/unit/run/workers.test.ts): the real worker
// (lambdas/local/fire-worker.ts), and in the worker given request index 0 (worker 1 of the
// round-robin) an uncaught exception CRASH_AFTER_MS after its job arrives, while part of its
// share is still unsent. The other workers are the real one, untouched.
import { fileURLToPath } from 'node:url';
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

const CRASH_AFTER_MS = 400;
register({ tsconfig: fileURLToPath(new URL('../../tsconfig.json', import.meta.url)) });
parentPort.on('message', (message) => {
  if (message.type === 'run' && message.requests[0]?.index === 0) {
    setTimeout(() => {
      throw new Error('fire worker crashed on purpose');
    }, CRASH_AFTER_MS);
  }
});
await import('../../lambdas/local/fire-worker.ts');
