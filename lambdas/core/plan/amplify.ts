/**
 * Amplified replay (`amplify` k > 1): k times the captured requests per unit of time, with the
 * captured traffic's shape. Copies are spread through the gaps between consecutive captured
 * requests: the captured count curve, interpolated within each gap, multiplied by k; a copy of
 * request i = floor(τ) at every τ = m / k of "request time" (τ = i + f is the instant a fraction
 * f of the way from request i to i + 1). No randomness.
 *
 * What that gives for whole and fractional k, the count, the last request's gap, and why not
 * k shifted copies of the whole schedule: docs/capacity.md#how-copies-are-placed-amplify-also-replay---amplify.
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
