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
 * Short minor collections, and the old space Lambda would give: fireNodeOptions, set where the
 * function is defined.
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
 * The heap Lambda's Node.js runtime gives a function whose NODE_OPTIONS name neither size: its
 * bootstrap (/var/runtime/bootstrap) passes a new space of a tenth of the function's memory, in
 * semi-spaces of half that, and an old space of the rest; when NODE_OPTIONS names either flag, it
 * passes neither, and V8's own default holds for the other
 * (https://dev.to/wonderfulsoap/deep-dive-into-aws-lambda-3-official-nodejs-runtime-analysis-43je,
 * the runtime's script as extracted; the semi-space's half is from copies of earlier runtimes'
 * scripts, which the fire function does not depend on: it names both).
 */
export function lambdaBootstrapHeap(memoryMb: number): { semiSpaceMb: number; oldSpaceMb: number } {
  const newSpaceMb = Math.floor(memoryMb / 10);
  return { semiSpaceMb: Math.floor(newSpaceMb / 2), oldSpaceMb: memoryMb - newSpaceMb };
}

/**
 * The fire function's NODE_OPTIONS flags (beside `--enable-source-maps`) for its memory:
 * - a young generation of 4 MB semi-spaces, where Lambda's bootstrap would give a tenth of the
 *   memory (160 MB semi-spaces at 3,197 MB) and V8 alone 16. Each scavenge copies what is still
 *   alive of what was allocated since the last one, and in a lane most of that is the requests
 *   sent meanwhile, alive for their whole answers: the pause grows with the young generation,
 *   and a request due during one waits for all of it. More, smaller scavenges copy about the
 *   same objects in all; each pause is shorter (bench/RESULTS.md).
 * - the old space the bootstrap would have given, which it no longer passes once NODE_OPTIONS
 *   names the semi-space (V8's own default is a fraction of the machine's memory).
 * V8 sizes the heap at the process's start: flags NODE_OPTIONS accepts, not set at run time.
 */
export function fireNodeOptions(memoryMb: number): string[] {
  return ['--max-semi-space-size=4', `--max-old-space-size=${lambdaBootstrapHeap(memoryMb).oldSpaceMb}`];
}
