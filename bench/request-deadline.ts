/**
 * What a request's deadline leaves on the heap once the request is over: the targets'
 * requestDeadline (timer cleared, listener removed) against AbortSignal.timeout +
 * AbortSignal.any, which live until the timeout would have fired. 100,000 requests with the
 * default 600 s timeout, ended at once; heap used after two full GCs.
 *
 *   node --expose-gc --import tsx bench/request-deadline.ts [--requests 100000]
 */
import { requestDeadline } from '../lambdas/adapters/request-deadline';
import { flag } from './args';

const requests = flag('--requests', 100_000);
const TIMEOUT_MS = 600_000;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

async function heapAfter(make: (cancel: AbortSignal) => void): Promise<number> {
  gc!();
  gc!();
  const before = process.memoryUsage().heapUsed;
  const cancel = new AbortController();
  for (let i = 0; i < requests; i++) {
    make(cancel.signal);
    if (i % 1000 === 0) await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setTimeout(r, 100));
  gc!();
  gc!();
  return process.memoryUsage().heapUsed - before;
}

const released = await heapAfter((cancel) => requestDeadline(TIMEOUT_MS, cancel).release());
const platform = await heapAfter((cancel) => void AbortSignal.any([cancel, AbortSignal.timeout(TIMEOUT_MS)]));
const mb = (n: number) => (n / 1e6).toFixed(1);
console.log(`${requests} requests ended, ${TIMEOUT_MS / 1000} s timeout, heap still held after GC:`);
console.log(
  `  requestDeadline, released:               ${mb(released)} MB (${(released / requests).toFixed(1)} bytes a request)`,
);
console.log(
  `  AbortSignal.timeout + AbortSignal.any:   ${mb(platform)} MB (${(platform / requests).toFixed(1)} bytes a request)`,
);
process.exit(0);
