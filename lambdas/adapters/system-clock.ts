import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../ports';

/**
 * Epoch nanoseconds from a wall-clock anchor plus the monotonic hrtime since: monotonic
 * between anchors (an NTP step cannot make a latency negative) and sub-millisecond precise.
 *
 * `resync()` takes a new anchor. Lambda freezes an execution environment between
 * invocations and AWS does not promise that the monotonic clock advances while frozen, so a
 * warm container that only ever added hrtime could fall behind real time unseen: the fire
 * handler resyncs at every invocation, before any due time is computed.
 *
 * The wall clock (Date.now) ticks in whole milliseconds: an anchor taken at a random moment
 * would be up to 1 ms early. The anchor waits for the next tick instead (at most ~1 ms of
 * reading both clocks in turn), and pairs the tick with the hrtime read between the two wall
 * reads that saw it turn over. A thread descheduled in that window (a worker starting while
 * others start, a busy machine) would pair the tick with an hrtime read from before its pause
 * and run ahead of real time by the pause, sending its whole share that much early. So the hrtime reads on both sides of the tick
 * must lie within ANCHOR_SPAN_NS of each other; otherwise the anchor waits for the next tick,
 * up to ANCHOR_TICKS of them, and keeps the tightest.
 */
export interface ClockSources {
  wallMs: () => number;
  hrtimeNs: () => bigint;
}

/**
 * The widest hrtime bracket around a wall-clock tick the anchor accepts at once (far wider than a read pair takes:
 * what it catches is a thread paused between the reads).
 */
export const ANCHOR_SPAN_NS = 20_000n;
/** Ticks the anchor tries for a bracket within ANCHOR_SPAN_NS before it keeps the tightest it saw. */
const ANCHOR_TICKS = 20;

const realSources: ClockSources = { wallMs: () => Date.now(), hrtimeNs: () => process.hrtime.bigint() };

/** Below this, timers are too coarse: yield to I/O with setImmediate until the instant. */
const SPIN_WINDOW_MS = 1.5;
/**
 * Inside the spin window the thread naps in slices of at most this (Atomics.wait on a cell
 * nobody notifies: a futex with a timeout, no CPU while it sleeps), yielding to I/O with
 * setImmediate between slices. A pure setImmediate spin holds a core through the end of every
 * wait, most of a core at a high request rate; the naps keep
 * the precision (the kernel wakes a futex within ~0.1 ms) and delay a socket read by at
 * most one slice.
 */
export const NAP_SLICE_MS = 0.2;
const napCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * Sleeps this thread for `ms` (a futex wait with a timeout on a cell nobody notifies): no CPU while it sleeps, awake
 * again within ~0.1 ms of the time.
 */
export function nap(ms: number): void {
  if (ms > 0) Atomics.wait(napCell, 0, 0, ms);
}

/**
 * How `waitUntil` reaches a due time.
 * - `precise` (default): a timer to ~1.5 ms before, then short naps (NAP_SLICE_MS) and
 *   setImmediate turns to the instant (sub-millisecond).
 * - `coarse`: timers only, no spin: the thread sleeps between requests (a laptop's CPU stays
 *   near idle). Node's timers have millisecond granularity and fire no earlier than asked, so
 *   a request goes out 0-2 ms after its due time (more when the event loop is busy), never
 *   before.
 */
export type WaitMode = 'precise' | 'coarse';
/** Node's longest timer (2^31 - 1 ms, ~24.8 days); a longer one fires at once with a TimeoutOverflowWarning. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface SystemClock extends Clock {
  resync(): void;
  /** How far the last resync moved the clock (ns; positive: it had fallen behind). */
  readonly lastCorrectionNs: bigint;
}

interface Tick {
  /** The wall clock's new millisecond. */
  wallMs: number;
  /** An hrtime read between the wall read before the tick and the one that saw it. */
  hrNs: bigint;
  /** How far apart the hrtime reads on either side of the tick were: the anchor's uncertainty. */
  spanNs: bigint;
}

/**
 * Reads the clocks in turn (h0 W0 h1 W1 h2 ...) until the wall clock turns over at Wk: the
 * tick came after W(k-1) and before Wk, so between h(k-1) and h(k+1); hk is its hrtime and
 * h(k+1) - h(k-1) bounds the error. Bounded for a wall clock that never moves (tests).
 */
function nextTick(sources: ClockSources): Tick {
  let hrBefore = sources.hrtimeNs();
  const first = sources.wallMs();
  let hrBetween = sources.hrtimeNs();
  let wall = first;
  let hrAfter = hrBetween;
  for (let i = 0; i < 1_000_000; i++) {
    wall = sources.wallMs();
    hrAfter = sources.hrtimeNs();
    if (wall !== first) break;
    hrBefore = hrBetween;
    hrBetween = hrAfter;
  }
  return { wallMs: wall, hrNs: hrBetween, spanNs: hrAfter - hrBefore };
}

function tightestTick(sources: ClockSources): Tick {
  let best = nextTick(sources);
  for (let i = 1; i < ANCHOR_TICKS && best.spanNs > ANCHOR_SPAN_NS; i++) {
    const tick = nextTick(sources);
    if (tick.spanNs < best.spanNs) best = tick;
  }
  return best;
}

/**
 * Work for the gaps of a precise schedule: `inGap` runs when a wait has at least `gapMs` to go,
 * at most once every `gapMs`, and the wait goes on after it (the CLI's scavenges, full-gc.ts).
 */
export interface ScheduleGaps {
  gapMs: number;
  inGap: () => void;
}

export function createSystemClock(
  sources: ClockSources = realSources,
  wait: WaitMode = 'precise',
  gaps?: ScheduleGaps,
): SystemClock {
  let originNs = 0n;
  let lastGapNs = 0n;
  let originHr = 0n;
  let lastCorrectionNs = 0n;
  const nowNs = () => originNs + (sources.hrtimeNs() - originHr);
  const anchor = (): void => {
    const tick = tightestTick(sources);
    const before = originNs === 0n ? null : nowNs();
    originNs = BigInt(Math.round(tick.wallMs * 1e6));
    originHr = tick.hrNs;
    lastCorrectionNs = before === null ? 0n : nowNs() - before;
  };
  anchor();
  return {
    nowNs,
    resync: anchor,
    get lastCorrectionNs() {
      return lastCorrectionNs;
    },
    async waitUntil(epochNs: bigint, signal?: AbortSignal): Promise<void> {
      for (;;) {
        signal?.throwIfAborted();
        const remainingMs = Number(epochNs - nowNs()) / 1e6;
        if (remainingMs <= 0) return;
        if (wait === 'coarse') {
          // Whole milliseconds, rounded up: a timer never fires early, so neither does the request.
          await sleep(Math.min(Math.ceil(remainingMs), MAX_TIMER_MS), undefined, signal ? { signal } : undefined);
        } else if (remainingMs > SPIN_WINDOW_MS + 0.5) {
          if (gaps && remainingMs >= gaps.gapMs && sources.hrtimeNs() - lastGapNs >= gaps.gapMs * 1e6) {
            lastGapNs = sources.hrtimeNs();
            gaps.inGap();
            continue;
          }
          await sleep(Math.min(remainingMs - SPIN_WINDOW_MS, MAX_TIMER_MS), undefined, signal ? { signal } : undefined);
        } else {
          // A turn of the event loop first, then the nap: pending socket reads run between
          // naps (streams in flight are not starved), and so does whatever the last send left
          // for the check phase. undici writes a request on a reused keep-alive socket from a
          // setImmediate (it first lets the idle socket's pending bytes be read), so a nap
          // taken before that turn would hold the previous request off the wire.
          await new Promise<void>((resolve) => setImmediate(resolve));
          const leftMs = Number(epochNs - nowNs()) / 1e6;
          nap(Math.min(leftMs, NAP_SLICE_MS));
        }
      }
    },
  };
}

export const systemClock: SystemClock = createSystemClock();

export function epochNowNs(): bigint {
  return systemClock.nowNs();
}
