/**
 * How long an S3 request takes, for every S3 call the simulated handlers time.
 *
 * The median is DOCUMENTED: for small requests (under 512 KB) "median latencies are often in
 * the tens of milliseconds range", and a GET or PUT is worth retrying after 2 s
 * (https://docs.aws.amazon.com/whitepapers/latest/s3-optimizing-performance-best-practices/timeouts-and-retries-for-latency-sensitive-applications.html).
 * It is every request's round trip here; a larger object's transfer is added by the caller
 * where the model has it (a shard's parts, at `getMBps`).
 * The spread is ASSUMED (AWS publishes no percentile beyond the median): a lognormal through
 * the median and `requestP99Ms`. The same page advises retrying the slowest 1 % of
 * fixed-size requests, so the 99th percentile is a tail worth cutting, several times the
 * median; and its 2 s retry for requests whose median is tens of ms puts anything near 2 s
 * among rare outliers. A p99 of 5x the median (100 ms at 20 ms) is such a tail: the lognormal
 * through it reaches 2 s about once in 10^11 requests, so retries are not modelled.
 *
 * Requests the handlers make together end when the slowest of them does; a pool of `limit`
 * workers (mapLimited) hands each its next request as it finishes.
 */
import { lognormalFromP50P99, type Lognormal, type Rng } from '../random';

export interface S3TimingSettings {
  /** One request's median round trip, ms. */
  requestMs: number;
  /** Its 99th percentile, ms (>= requestMs; equal: every request takes requestMs). */
  requestP99Ms: number;
}

export class S3Timing {
  private readonly d: Lognormal | null;
  private readonly constantMs: number;

  constructor(
    s: S3TimingSettings,
    private readonly rng: Rng,
  ) {
    // Without a spread (or with S3 taking no time) every request takes the median exactly, without a draw.
    this.d =
      s.requestMs > 0 && s.requestP99Ms !== s.requestMs ? lognormalFromP50P99(s.requestMs, s.requestP99Ms) : null;
    this.constantMs = s.requestMs;
  }

  /** One request, ms. */
  one(): number {
    return this.d === null ? this.constantMs : this.rng.lognormal(this.d);
  }

  /** `n` requests one after another, ms. */
  sequence(n: number): number {
    let t = 0;
    for (let i = 0; i < n; i++) t += this.one();
    return t;
  }

  /** `n` requests through `limit` workers, each taking the next request when it is free: until the last ends, ms. */
  pool(n: number, limit: number): number {
    const free = new Float64Array(Math.max(1, Math.min(limit, n)));
    for (let i = 0; i < n; i++) {
      let w = 0;
      for (let k = 1; k < free.length; k++) if ((free[k] as number) < (free[w] as number)) w = k;
      free[w] = (free[w] as number) + this.one();
    }
    return n === 0 ? 0 : Math.max(...free);
  }
}
