/**
 * The mocks' capacity model (`--slots <n>`): a server that generates for at most `slots`
 * requests at once, with a first-in first-out queue in front, so that a test or the demo can
 * give a target a capacity and predict where it breaks.
 *
 * The model, exactly as the mocks run it:
 * - A request that reaches generation (past routing, authentication, parsing and error
 *   injection; the requests refused there take no slot and answer at once) holds one slot
 *   for its service time S = TTFT + (n - 1) * ITL, from its start to its last token, n its
 *   output tokens (the mock's setting, capped by the request's max_tokens).
 * - Requests start in the order the server has read them (FIFO), each at max(arrival, the
 *   time the earliest slot frees); a slot is never idle while a request waits. The wait is
 *   W = start - arrival.
 * - Its tokens are then written on the unloaded server's timeline shifted by W: token k at
 *   arrival + W + TTFT + k * ITL. So time to first token = W + TTFT, request latency = W + S,
 *   and the inter-token latency does not depend on the load (a pool of identical, independent
 *   generators: no batching slowdown).
 * - Slots free at their scheduled end (start + S), computed from due times rather than from
 *   when a timer fires: a busy machine that writes a token late delays that write only, never
 *   the next request's start. A request whose client goes away keeps its slot to its
 *   scheduled end.
 * - Without `--slots` (unlimited, the default) W = 0 for every request.
 *
 * With Poisson arrivals at rate λ and one output length for every request (S fixed) this is
 * the M/D/c queue, c = slots. Predictions (meanWaitMs, saturationRate below):
 * - utilisation ρ = λ·S/c; the server saturates at λ_max = c/S requests per unit of time:
 *   below it the wait stays bounded, at or above it the queue grows without end (a replay
 *   at λ > λ_max for t seconds leaves about (λ - λ_max)·t requests waiting).
 * - mean wait: for c = 1 exactly ρ·S / (2(1 - ρ)) (Pollaczek-Khinchine); for c > 1,
 *   Cosmetatos' approximation: half the M/M/c wait, C(c, λS)·S / (c - λS) with C Erlang's
 *   C formula, times 1 + (1 - ρ)(c - 1)(√(4 + 5c) - 2) / (16ρc) (G. P. Cosmetatos, "Some
 *   approximate equilibrium results for the multi-server queue (M/G/r)", Operational
 *   Research Quarterly 27, 1976). test/unit/mocks/capacity.test.ts checks it against this
 *   model run on seeded Poisson arrivals.
 * - mean time to first token = TTFT + mean wait. The p99 of the wait has no closed form for
 *   M/D/c: measure it (GenerationSlots on seeded arrivals, as the test does).
 * - A replay's arrivals are the captured ones, not Poisson; against a replay the mean-wait
 *   formula is a guide, while λ_max holds whatever the arrivals.
 */
import { MinHeap } from './min-heap';

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
