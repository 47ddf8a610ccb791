/**
 * Large response bodies for the hostile test servers (fault-server.ts, sagemaker-faults.ts),
 * written as fast as the client reads them and no faster.
 */
import type { ServerResponse } from 'node:http';

const MIB = Buffer.alloc(1024 * 1024, 'x');

/** Writes `total` filler bytes after `head`, then `tail`, respecting backpressure; stops when the client goes. */
export function writeLarge(res: ServerResponse, head: string | Uint8Array, total: number, tail: string): void {
  let left = total;
  res.write(head);
  const pump = () => {
    while (left > 0) {
      const n = Math.min(left, MIB.length);
      left -= n;
      if (!res.write(n === MIB.length ? MIB : MIB.subarray(0, n))) {
        res.once('drain', pump);
        return;
      }
    }
    res.end(tail);
  };
  res.on('close', () => (left = 0));
  pump();
}
