/**
 * How many requests one capacity step may plan. A step is a replay, and a replay holds every
 * request's plan, outcome and record until its results are written: peak RSS grows by about
 * 12 KB per request (measured: a 60 s window of 600 streamed requests at 1x, 10x and 40x, 122,
 * 197 and 406 MB; `replay --amplify 40` on the same window 487 MB). A step larger than the heap
 * holds ends in an out-of-memory crash minutes into the search, its results unwritten; so the
 * search goes no higher than the factor whose step fits in three quarters of V8's heap limit
 * (`node --max-old-space-size` raises it), and says so before it starts.
 */
import { getHeapStatistics } from 'node:v8';
import { MIN_FACTOR, roundTo } from '../../core/capacity/search';
import { amplifiedCount } from '../../core/plan/amplify';

/** Peak memory per planned request of a step, bytes (measured, above). */
export const STEP_BYTES_PER_REQUEST = 12 * 1024;
/** The share of V8's heap limit one step may take. */
const HEAP_SHARE = 0.75;
/** A lower bound than the heap's, for the tests and for a machine whose memory is shared: a whole number >= 1. */
export const MAX_STEP_REQUESTS_ENV = 'CAPTURE_REPLAY_MAX_STEP_REQUESTS';

/** The most requests one step may plan (all its targets together), or what is wrong with the variable. */
export function maxStepRequests(
  env: NodeJS.ProcessEnv = process.env,
  heapLimit = getHeapStatistics().heap_size_limit,
): number | string {
  const byHeap = Math.floor((heapLimit * HEAP_SHARE) / STEP_BYTES_PER_REQUEST);
  const raw = env[MAX_STEP_REQUESTS_ENV];
  if (raw === undefined || raw.trim() === '') return byHeap;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) return `${MAX_STEP_REQUESTS_ENV} must be a whole number >= 1 (got "${raw}")`;
  return Math.min(n, byHeap);
}

/** Requests a step plans at `factor` from the window's `n`: n at 1x, ceil(k·n) above (amplify's copies), about k·n below (a sample). */
export function plannedRequests(n: number, factor: number): number {
  if (factor > 1) return amplifiedCount(n, factor);
  return factor === 1 ? n : Math.round(factor * n);
}

/**
 * The largest factor whose step plans at most `max` requests per target, on the resolution's
 * grid (on MIN_FACTOR's when that is below one resolution); null when not even MIN_FACTOR fits.
 */
export function largestFactorFor(n: number, max: number, resolution: number): number | null {
  const grid = max / n >= resolution ? resolution : MIN_FACTOR;
  let f = roundTo(Math.floor(max / n / grid) * grid, grid);
  while (f >= MIN_FACTOR && plannedRequests(n, f) > max) f = roundTo(f - grid, grid);
  return f >= MIN_FACTOR ? f : null;
}

/** Memory in a few characters: `780 MB`, `2.1 GB`. */
export function memoryText(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${Math.max(1, Math.round(bytes / 1e6))} MB`;
}
