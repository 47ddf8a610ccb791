/**
 * What a fire invocation waits for after its slot: the target's responses, as a lognormal
 * through the declared median and 99th percentile, cut at the request timeout. Pure arithmetic
 * for the sizing (lib/sizing.ts): the mean response (how many requests a lane holds in flight)
 * and the expected wait after the slot for a lane's slowest response (how long the invocation
 * lives).
 */
import { normalSf } from '../lambdas/core/stats/special-functions';

/** The standard normal's 0.99 quantile. */
const Z99 = 2.3263478740408408;
/** Integration step, seconds. */
const STEP_S = 0.05;

export interface ResponseTimes {
  medianSeconds: number;
  p99Seconds: number;
  /** Responses end here at the latest (the request timeout). */
  timeoutSeconds: number;
}

/** P(response > v): lognormal through (median, p99), none past the timeout. */
function survival(r: ResponseTimes): (v: number) => number {
  const mu = Math.log(r.medianSeconds);
  const sigma = Math.log(Math.max(r.p99Seconds, r.medianSeconds) / r.medianSeconds) / Z99;
  return (v) => {
    if (v >= r.timeoutSeconds) return 0;
    if (v <= 0) return 1;
    if (sigma === 0) return v < r.medianSeconds ? 1 : 0;
    return normalSf((Math.log(v) - mu) / sigma);
  };
}

/** G(v) = integral of the survival function from 0 to v, on a grid of STEP_S up to the timeout. */
function cumulativeSurvival(r: ResponseTimes): Float64Array {
  const sf = survival(r);
  const n = Math.ceil(r.timeoutSeconds / STEP_S) + 1;
  const g = new Float64Array(n + 1);
  for (let i = 1; i <= n; i++) g[i] = (g[i - 1] as number) + sf((i - 0.5) * STEP_S) * STEP_S;
  return g;
}

const at = (g: Float64Array, v: number) => g[Math.min(g.length - 1, Math.max(0, Math.round(v / STEP_S)))] as number;

/**
 * The response-time arithmetic of one declaration (median, p99, timeout), its survival function
 * integrated once (a grid of timeout / STEP_S points) for each of the figures below.
 */
export interface ResponseTail {
  /** The mean response time, seconds (the integral of the survival function). */
  meanSeconds: number;
  /**
   * How long after the end of its slot a lane's last response ends, for a lane that sent `rate`
   * requests a second, evenly, through a slot of `slotSeconds`: P(tail > tau) as a function. The
   * lane ends within tau of the slot unless a request sent u before the slot's end took longer
   * than tau + u; with requests independent, P(tail <= tau) = exp(-rate * integral over the slot
   * of P(response > tau + u) du).
   */
  tailSurvival(rate: number, slotSeconds: number): (tau: number) => number;
  /** The expected tail: the integral of P(tail > tau) up to the timeout. */
  expectedTailSeconds(rate: number, slotSeconds: number): number;
}

export function responseTail(r: ResponseTimes): ResponseTail {
  const g = cumulativeSurvival(r);
  const tailSurvival = (rate: number, slotSeconds: number) => (tau: number) =>
    tau < 0 ? 1 : tau >= r.timeoutSeconds ? 0 : 1 - Math.exp(-rate * (at(g, tau + slotSeconds) - at(g, tau)));
  return {
    meanSeconds: g[g.length - 1] as number,
    tailSurvival,
    expectedTailSeconds(rate, slotSeconds) {
      const survives = tailSurvival(rate, slotSeconds);
      let tail = 0;
      for (let tau = 0; tau < r.timeoutSeconds; tau += STEP_S) tail += survives(tau + STEP_S / 2) * STEP_S;
      return tail;
    },
  };
}
