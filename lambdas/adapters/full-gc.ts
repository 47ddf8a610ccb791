/**
 * A full garbage collection on demand, for the moment before a run's first request.
 *
 * At high rates the worst lateness at the server comes from V8's major collections
 * (incremental marking, then a mark-compact pause) in the middle of the schedule, tens of ms
 * for dozens of requests, once the old generation fills with what came before the run (the
 * rehearsal's, the plan's; bench/server-lateness.ts shows it). Collected just before the first due time,
 * the run starts from a compact heap whose next limit is set from what is live, and the
 * requests the fire loop prepared are already promoted (the first scavenge does not copy them).
 *
 * Node exposes `gc()` only under --expose-gc; the flag can be set at run time and the function
 * taken from a fresh context, as Jest's leak detection does. Where that fails (a runtime that
 * refuses the flag), nothing is collected and the run goes on.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | null | undefined;

function gcFunction(): (() => void) | null {
  if (gc !== undefined) return gc;
  try {
    setFlagsFromString('--expose-gc');
    const found: unknown = runInNewContext('gc');
    gc = typeof found === 'function' ? (found as () => void) : null;
  } catch {
    gc = null;
  }
  return gc;
}

/** Runs a full collection; false when this runtime gives no way to. */
export function collectGarbage(): boolean {
  const collect = gcFunction();
  if (!collect) return false;
  collect();
  return true;
}
