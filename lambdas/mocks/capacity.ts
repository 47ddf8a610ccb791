/**
 * The mocks' capacity model (`--slots <n>`): a server that generates for at most `slots`
 * requests at once, with a first-in first-out queue in front, so that a test or the demo can
 * give a target a capacity and predict where it breaks.
 *
 * The model exactly as the mocks run it, and what queueing theory predicts of it (where it
 * saturates, the mean wait, and how far those hold for a replay's arrivals):
 * docs/capacity.md#the-mocks-capacity-model. test/unit/mocks/capacity.test.ts checks the
 * prediction against this model run on seeded Poisson arrivals.
 */
import { MinHeap } from '../core/min-heap';

/** Service time of a request of `tokens` output tokens: TTFT + (tokens - 1)·ITL, in ms. */
export function serviceTimeMs(ttftMs: number, itlMs: number, tokens: number): number {
  return ttftMs + (Math.max(1, tokens) - 1) * itlMs;
}

/** λ_max = slots / S: the arrival rate (per second) at which the server saturates. */
export function saturationRate(slots: number, serviceMs: number): number {
  return (slots * 1000) / serviceMs;
}

/** Erlang's C formula: the probability that an arrival waits in an M/M/c queue with offered load a = λS < c. */
function erlangC(c: number, a: number): number {
  // Erlang B by its recursion (stable for any c), then C from B.
  let b = 1;
  for (let k = 1; k <= c; k++) b = (a * b) / (k + a * b);
  return (c * b) / (c - a * (1 - b));
}

/**
 * The mean wait for a slot (ms) at `ratePerSecond` Poisson arrivals, each needing `serviceMs`:
 * exact for one slot, Cosmetatos' approximation for more (see above); Infinity at or above
 * saturation, 0 with unlimited slots.
 */
export function meanWaitMs(slots: number, ratePerSecond: number, serviceMs: number): number {
  if (!Number.isFinite(slots) || ratePerSecond <= 0) return 0;
  const a = (ratePerSecond * serviceMs) / 1000;
  if (a >= slots) return Infinity;
  const rho = a / slots;
  const mmc = (erlangC(slots, a) * serviceMs) / (slots - a);
  return 0.5 * mmc * (1 + ((1 - rho) * (slots - 1) * (Math.sqrt(4 + 5 * slots) - 2)) / (16 * rho * slots));
}

/** The slots of one mock: when each request starts. */
export class GenerationSlots {
  /** Each slot's free time (ms, performance.now's timeline); empty when unlimited. */
  private readonly freeAt = new MinHeap<null>();

  /** `slots`: a whole number >= 1, or Infinity for unlimited (every request starts on arrival). */
  constructor(readonly slots: number = Infinity) {
    if (slots !== Infinity && !(Number.isInteger(slots) && slots >= 1))
      throw new RangeError(`slots must be a whole number >= 1 or Infinity (got ${slots})`);
    if (Number.isFinite(slots)) for (let i = 0; i < slots; i++) this.freeAt.push(-Infinity, null);
  }

  /** Takes the earliest free slot for a request that arrived at `arrivalMs` and needs it for `serviceMs`; returns its start. */
  start(arrivalMs: number, serviceMs: number): number {
    if (this.freeAt.size === 0) return arrivalMs;
    const start = Math.max(arrivalMs, this.freeAt.peekKey()!);
    this.freeAt.pop();
    this.freeAt.push(start + serviceMs, null);
    return start;
  }

  /**
   * When token k of a request is due (ms): its start, after any wait for a slot, + TTFT + k·ITL.
   * Takes the request's slot, so it is called once per request that generates.
   */
  timeline(arrivalMs: number, ttftMs: number, itlMs: number, tokens: number): (k: number) => number {
    const startMs = this.start(arrivalMs, serviceTimeMs(ttftMs, itlMs, tokens));
    return (k) => startMs + ttftMs + k * itlMs;
  }
}
