/**
 * Fewer major collections while a lane fires: V8's old-generation limit set at ten times what a
 * mark-compact leaves live, where V8's own factor (about 1.1 to 4, from its measured GC and
 * allocation speeds) gives a lane's heap a mark-compact every 2-3 s of firing.
 *
 * Each of those is tens of ms with its incremental marking steps and final pause, and the
 * requests due meanwhile wait: they were most of a lane's requests more than 20 ms late inside
 * its CPU share (bench:fire-lateness, bench/RESULTS.md). At ten times, what a lane promotes while
 * it fires (its answers in flight, 1.5-2.5 MB/s) stays under the limit for a whole slot: no
 * mark-compact in it but the full collection the warm-up runs before its first due time, which
 * sets the limit from what is live then (45-80 MB); at five times, SageMaker's lane still had one
 * in its slot. The heap stays far under a function's memory (300 MB at the end of a 120 s slot),
 * and V8 keeps the limit under its maximum old generation whatever the factor.
 *
 * `--heap-growing-percent` is read each time V8 sets the limit, so setting it at run time
 * takes effect at the next collection; it is not one of the flags NODE_OPTIONS accepts.
 */
import { setFlagsFromString } from 'node:v8';

/** The old generation's limit after a mark-compact: (1 + this / 100) times what it left live. */
export const HEAP_GROWING_PERCENT = 900;

/** Sets the growth for this process; false when the runtime refuses the flag (nothing changes then). */
export function spaceOutMajorCollections(percent = HEAP_GROWING_PERCENT): boolean {
  try {
    setFlagsFromString(`--heap-growing-percent=${percent}`);
    return true;
  } catch {
    return false;
  }
}
