/**
 * The mocks' capacity model (lambdas/mocks/capacity.ts) as arithmetic: FIFO starts on the
 * earliest free slot, and the predictions its doc comment states (saturation at slots / S,
 * the mean wait of M/D/c) against the model itself run on seeded Poisson arrivals.
 */
import { describe, expect, it } from 'vitest';
import { GenerationSlots, meanWaitMs, saturationRate, serviceTimeMs } from '../../../lambdas/mocks/capacity';
import { seededRandom } from '../../../lambdas/core/random';

/** Poisson arrivals at `ratePerSecond` (ms), from a seeded generator. */
function poissonArrivals(ratePerSecond: number, count: number, seed: number): number[] {
  const random = seededRandom(seed);
  const out: number[] = [];
  let t = 0;
  for (let i = 0; i < count; i++) {
    t += (-Math.log(1 - random()) / ratePerSecond) * 1000;
    out.push(t);
  }
  return out;
}

/** The waits the model gives these arrivals, each needing `serviceMs`. */
function waits(slots: number, arrivals: readonly number[], serviceMs: number): number[] {
  const model = new GenerationSlots(slots);
  return arrivals.map((a) => model.start(a, serviceMs) - a);
}

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

describe('GenerationSlots', () => {
  it(
    'starts requests FIFO on the earliest free slot: with 2 slots and S = 100 ms, simultaneous arrivals wait ' +
      '0, 0, 100, 100, 200, 200',
    () => {
      expect(waits(2, [0, 0, 0, 0, 0, 0], 100)).toEqual([0, 0, 100, 100, 200, 200]);
    },
  );

  it('never leaves a slot idle while a request waits, whatever the service times', () => {
    const model = new GenerationSlots(2);
    // Slot a busy to 300, slot b to 50: the third request takes b at 50, the fourth b again at 50 + 10.
    expect([
      model.start(0, 300),
      model.start(0, 50),
      model.start(10, 10),
      model.start(20, 500),
      model.start(30, 1),
    ]).toEqual([0, 0, 50, 60, 300]);
  });

  it('starts a request on arrival when a slot is free, and always without slots', () => {
    expect(waits(3, [0, 10, 20, 1000], 100)).toEqual([0, 0, 0, 0]);
    expect(waits(Infinity, [0, 0, 0, 0, 0], 1e6)).toEqual([0, 0, 0, 0, 0]);
    expect(new GenerationSlots().start(5, 1e9)).toBe(5);
  });

  it("lays a request's tokens at start + TTFT + k * ITL, and takes its slot for TTFT + (n - 1) * ITL", () => {
    const model = new GenerationSlots(1);
    const first = model.timeline(0, 30, 10, 8);
    expect([0, 1, 7].map(first)).toEqual([30, 40, 100]);
    const second = model.timeline(5, 30, 10, 8);
    expect([0, 1, 7].map(second)).toEqual([130, 140, 200]);
    expect(serviceTimeMs(30, 10, 8)).toBe(100);
    expect(serviceTimeMs(30, 10, 1)).toBe(30);
  });

  it.each([0, -1, 1.5, NaN])('refuses %s slots', (slots) => {
    expect(() => new GenerationSlots(slots)).toThrow(/slots must be a whole number >= 1/);
  });
});

describe('predictions', () => {
  it('saturates at slots / S: above it the wait grows by (λS/c - 1) per unit of time', () => {
    expect(saturationRate(2, 100)).toBe(20);
    // Evenly spaced arrivals at 1.5 x saturation for 10 s: the last one waits about 0.5 x 10 s.
    const serviceMs = 100;
    const rate = 1.5 * saturationRate(2, serviceMs);
    const arrivals = Array.from({ length: rate * 10 }, (_, i) => (i * 1000) / rate);
    const last = waits(2, arrivals, serviceMs).at(-1)!;
    expect(last / arrivals.at(-1)!).toBeCloseTo(0.5, 1);
    // Just below saturation, evenly spaced arrivals never wait.
    const below = 0.99 * saturationRate(2, serviceMs);
    expect(
      Math.max(
        ...waits(
          2,
          Array.from({ length: 1000 }, (_, i) => (i * 1000) / below),
          serviceMs,
        ),
      ),
    ).toBe(0);
  });

  it('meanWaitMs is Infinity at or above saturation and 0 without slots or arrivals', () => {
    expect(meanWaitMs(2, 20, 100)).toBe(Infinity);
    expect(meanWaitMs(2, 25, 100)).toBe(Infinity);
    expect(meanWaitMs(Infinity, 1000, 100)).toBe(0);
    expect(meanWaitMs(2, 0, 100)).toBe(0);
  });

  it('one slot: Pollaczek-Khinchine, ρS / (2(1 - ρ))', () => {
    expect(meanWaitMs(1, 8, 100)).toBeCloseTo((0.8 * 100) / (2 * 0.2), 9);
  });

  // The model run on 200,000 seeded Poisson arrivals (the first 10 % dropped as warm-up):
  // its mean wait is within 5 % of the formula at every load where the wait is not negligible.
  it.each([
    [1, 0.5],
    [1, 0.8],
    [2, 0.5],
    [2, 0.8],
    [4, 0.7],
    [8, 0.8],
  ])('matches the model simulated: %i slots at utilisation %f', (slots, rho) => {
    const serviceMs = 100;
    const rate = (rho * slots * 1000) / serviceMs;
    const simulated = mean(waits(slots, poissonArrivals(rate, 200_000, 7), serviceMs).slice(20_000));
    const predicted = meanWaitMs(slots, rate, serviceMs);
    expect(Math.abs(predicted / simulated - 1)).toBeLessThan(0.05);
  });
});
