/**
 * The simulator's randomness: one seeded stream per concern (lambdas/core/random.ts's
 * mulberry32), so a run is a pure function of its settings and seed, and changing how often
 * one rule draws never moves another rule's draws.
 */
import { seededRandom } from '../lambdas/core/random';

/** The standard normal quantile at 0.99: p99 = p50 * exp(1 sigma * Z99) for a lognormal. */
export const Z99 = 2.3263478740408408;

export interface Lognormal {
  /** Mean of ln(x). */
  mu: number;
  /** Standard deviation of ln(x); 0 is a constant. */
  sigma: number;
}

/** The lognormal with this median and 99th percentile (p99 >= p50 > 0). */
export function lognormalFromP50P99(p50: number, p99: number): Lognormal {
  if (!(Number.isFinite(p50) && p50 > 0)) throw new RangeError(`a lognormal needs a median > 0 (got ${p50})`);
  if (!(Number.isFinite(p99) && p99 >= p50))
    throw new RangeError(`a lognormal needs p99 >= p50 (got p50 ${p50}, p99 ${p99})`);
  return { mu: Math.log(p50), sigma: Math.log(p99 / p50) / Z99 };
}

/** The q-quantile of a lognormal, via the normal quantile z: exp(mu + sigma z). */
export const lognormalAt = (d: Lognormal, z: number) => Math.exp(d.mu + d.sigma * z);

export class Rng {
  private readonly next: () => number;
  private spare: number | null = null;

  constructor(seed: number) {
    this.next = seededRandom(seed);
  }

  /** Uniform in [0, 1). */
  uniform(): number {
    return this.next();
  }

  /** Standard normal (Box-Muller; the second value of each pair is kept for the next call). */
  normal(): number {
    if (this.spare !== null) {
      const z = this.spare;
      this.spare = null;
      return z;
    }
    const u = Math.max(this.next(), Number.MIN_VALUE);
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  lognormal(d: Lognormal): number {
    return d.sigma === 0 ? Math.exp(d.mu) : Math.exp(d.mu + d.sigma * this.normal());
  }

  /** Poisson draw: Knuth below a mean of 50, a rounded normal above (as test/support/capture-gen.ts). */
  poisson(mean: number): number {
    if (mean > 50) return Math.max(0, Math.round(mean + this.normal() * Math.sqrt(mean)));
    const limit = Math.exp(-mean);
    let k = 0;
    let p = this.next();
    while (p > limit) {
      k++;
      p *= this.next();
    }
    return k;
  }
}

/** Independent streams derived from one seed, one per named concern. */
export function streams<const K extends string>(seed: number, names: readonly K[]): Record<K, Rng> {
  return Object.fromEntries(
    names.map((name, i) => [name, new Rng((seed * 0x9e3779b1 + (i + 1) * 0x85ebca6b) >>> 0)]),
  ) as Record<K, Rng>;
}
