/**
 * Amplified replay (plan.ts rule 4, `amplify` k > 1): k times the captured requests per unit
 * of time, with the captured traffic's shape.
 *
 * Placement: copies are spread through the gaps between consecutive captured requests.
 * Number the schedule in "request time" τ: τ = i + f, f in [0, 1), is the instant a fraction f
 * of the way from request i to request i + 1 (t_i + f·g_i, g_i = t_{i+1} - t_i). The amplified
 * schedule has a request at every τ_m = m / k for m = 0, 1, ... while τ_m < n: the captured
 * count curve, interpolated linearly within each gap, multiplied by k. The request at τ_m is
 * a copy of request i = floor(τ_m) (its body, its capture event), and its copy index is its
 * rank among the copies of that request.
 *
 * What it gives:
 * - Whole k: copy j of request i at t_i + (j / k)·g_i. Copy 0 is the captured request at its
 *   captured instant; each captured gap g becomes k gaps of g / k, so the amplified
 *   inter-arrival times are exactly the captured ones divided by k (each value k times: the
 *   same empirical distribution), and the rate over any stretch of the capture is k times
 *   what it was: bursts stay bursts, quiet stretches stay quiet. No instant gets k copies at
 *   once unless the capture itself had k requests at that instant (g = 0).
 * - Fractional k (2.5): the same rule; a gap then holds floor(k) or ceil(k) copies, and the
 *   inter-arrival times are the captured ones divided by k blended across neighbouring gaps.
 * - Count: ceil(k·n) requests for n captured, within 1 of k·n.
 * - No randomness: the same requests and k give the same schedule, whatever the seed.
 * - The last request has no next one: its gap is the schedule's mean gap (duration / (n - 1)),
 *   so the amplified schedule lasts that much longer at most, less one copy's share; a lone
 *   request's copies are spread over `loneGapMs`.
 *
 * Why not superpose k shifted copies of the whole schedule: the result tends to a Poisson
 * stream (Palm-Khintchine) whatever the captured arrivals were, so the inter-arrival
 * distribution is no longer the captured one's, scaled.
 */

/** The largest amplification accepted: a bound on the plan's size, not a property of the method. */
export const MAX_AMPLIFY = 1000;

export interface AmplifiedRows {
  /** Per amplified request, in schedule order: the position in the input schedule it copies. */
  source: Uint32Array;
  /** Its copy index among that position's copies (0, 1, ...). */
  copy: Uint32Array;
  offsetMs: Float64Array;
}

/** The number of amplified requests for `n` captured ones: the m >= 0 with m / k < n, i.e. ceil(k·n). */
export function amplifiedCount(n: number, k: number): number {
  // The smallest m with m / k >= n, by the same float comparison `amplify` makes.
  let m = Math.max(0, Math.floor(k * n) - 2);
  while (m / k < n) m++;
  return m;
}

/**
 * The amplified schedule of `offsetsMs` (sorted ascending, the schedule after window,
 * sampling and limit) at `k` > 1, as positions into it, copy indices and offsets.
 */
export function amplify(offsetsMs: ArrayLike<number>, k: number, loneGapMs: number): AmplifiedRows {
  if (!(Number.isFinite(k) && k > 1 && k <= MAX_AMPLIFY))
    throw new RangeError(`amplify must be in (1, ${MAX_AMPLIFY}] (got ${k})`);
  const n = offsetsMs.length;
  const total = amplifiedCount(n, k);
  const source = new Uint32Array(total);
  const copy = new Uint32Array(total);
  const offsetMs = new Float64Array(total);
  if (n === 0) return { source, copy, offsetMs };
  const first = offsetsMs[0] as number;
  const last = offsetsMs[n - 1] as number;
  const meanGap = n > 1 ? (last - first) / (n - 1) : loneGapMs;
  let written = 0;
  let previous = -1;
  let rank = 0;
  for (let m = 0; written < total; m++) {
    const tau = m / k;
    // Whole k: m = i·k + j gives floor(m / k) = i exactly (float division of integers is
    // correctly rounded); fractional k: a boundary rounded either way lands on the same instant.
    const i = Math.min(Math.floor(tau), n - 1);
    const f = tau - i;
    const at = offsetsMs[i] as number;
    const gap = i < n - 1 ? (offsetsMs[i + 1] as number) - at : meanGap;
    rank = i === previous ? rank + 1 : 0;
    previous = i;
    source[written] = i;
    copy[written] = rank;
    offsetMs[written] = at + f * gap;
    written++;
  }
  return { source, copy, offsetMs };
}
