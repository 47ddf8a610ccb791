/**
 * How long an S3 request takes, for every S3 call the simulated handlers time: a documented
 * median, an assumed lognormal spread; requests made together end with the slowest.
 *
 * The rules, each with its source (DOCUMENTED, ASSUMED or MEASURED):
 * docs/simulator-model.md#s3-request-times.
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
