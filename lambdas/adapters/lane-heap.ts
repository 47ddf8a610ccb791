/**
 * A fire lane's V8 heap (why: docs/deploy.md, "A lane's heap"; what each costs: bench/RESULTS.md).
 *
 * No major collection while a lane fires but the one the warm-up runs before its first due time:
 * - the old generation's limit at ten times what a mark-compact leaves live, not V8's own factor
 *   (at most four), which a lane's answers in flight reach again and again within its slot;
 * - no memory reducer collections, which V8 starts when the heap looks idle and, as a watchdog,
 *   100 s after the last mark-compact: in the middle of a slot that has no other.
 * Both are read when V8 uses them, so setting them at run time takes effect from then on; neither
 * is a flag NODE_OPTIONS accepts. The reducer's count is set before the reducer can have run a
 * collection (8 s after the process's first mark-compact at the soonest): V8 checks that the
 * collections it started do not exceed it.
 *
 * Short minor collections: FIRE_NODE_OPTIONS, set where the function is defined.
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

/**
 * The fire function's NODE_OPTIONS flags (beside `--enable-source-maps`): a young generation of
 * 4 MB semi-spaces, not V8's 16. Each scavenge copies what is still alive of what was allocated
 * since the last one, and in a lane most of that is the requests sent meanwhile, alive for their
 * whole answers: the pause grows with the young generation, and a request due during one waits
 * for all of it. More, smaller scavenges copy about the same objects in all; each pause is
 * shorter (bench/RESULTS.md). V8 sizes the heap at the process's start, so this is a flag
 * NODE_OPTIONS accepts, not one set at run time.
 */
export const FIRE_NODE_OPTIONS: readonly string[] = ['--max-semi-space-size=4'];
