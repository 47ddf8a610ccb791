/**
 * No major collection while a lane fires but the one the warm-up runs before its first due time
 * (why: docs/deploy.md, "A lane's heap"; what each costs: bench/RESULTS.md):
 * - the old generation's limit at ten times what a mark-compact leaves live, not V8's own factor
 *   (at most four), which a lane's answers in flight reach again and again within its slot;
 * - no memory reducer collections, which V8 starts when the heap looks idle and, as a watchdog,
 *   100 s after the last mark-compact: in the middle of a slot that has no other.
 * Both are read when V8 uses them, so setting them at run time takes effect from then on; neither
 * is a flag NODE_OPTIONS accepts. The reducer's count is set before the reducer can have run a
 * collection (8 s after the process's first mark-compact at the soonest): V8 checks that the
 * collections it started do not exceed it.
 */
import { setFlagsFromString } from 'node:v8';

/** The old generation's limit after a mark-compact: (1 + this / 100) times what it left live. */
export const HEAP_GROWING_PERCENT = 900;

/**
 * Sets both for this process, at its start (the fire handler's module load, in Lambda); false
 * when the runtime refuses a flag.
 */
export function spaceOutMajorCollections(percent = HEAP_GROWING_PERCENT): boolean {
  try {
    setFlagsFromString(`--heap-growing-percent=${percent}`);
    setFlagsFromString('--memory-reducer-gc-count=0');
    return true;
  } catch {
    return false;
  }
}
