/**
 * Lambda's rules in sim/aws/lambda.ts: the concurrency cap (reserved, and the account's
 * unreserved pool shared by functions without reservation), the scaling rate of 1,000 new
 * environments per 10 s per function, warm reuse, and INIT billed like duration.
 */
import { describe, expect, it } from 'vitest';
import { Account, FunctionModel, type FunctionModelOptions } from '../../../sim/aws/lambda';
import { Rng } from '../../../sim/random';

const options = (o: Partial<FunctionModelOptions> = {}): FunctionModelOptions => ({
  name: 'fire',
  memoryMb: 2048,
  reservedConcurrency: null,
  init: { mu: Math.log(200), sigma: 0 },
  scalePer10s: 1000,
  invokeOverheadMs: 5,
  coldPlatformMs: 100,
  envReclaimMinutes: 10,
  ...o,
});

describe('concurrency cap', () => {
  it('reserved concurrency caps the function: the next invocation is throttled', () => {
    const fn = new FunctionModel(options({ reservedConcurrency: 3 }), new Account(1000), new Rng(1));
    expect([0, 1, 2].map(() => fn.start(0).ok)).toEqual([true, true, true]);
    expect(fn.start(0)).toEqual({ ok: false, reason: 'concurrency' });
    fn.finish(10, 10);
    expect(fn.start(10).ok).toBe(true);
    expect(fn.bill.throttles).toBe(1);
    expect(fn.bill.peakConcurrency).toBe(3);
  });

  it('functions without reservation share what the reserved ones leave of the account', () => {
    const account = new Account(10);
    const reserved = new FunctionModel(options({ reservedConcurrency: 6 }), account, new Rng(1));
    const a = new FunctionModel(options({ name: 'a' }), account, new Rng(2));
    const b = new FunctionModel(options({ name: 'b' }), account, new Rng(3));
    expect([1, 2, 3].map(() => a.start(0).ok)).toEqual([true, true, true]);
    expect(b.start(0).ok).toBe(true);
    expect(b.start(0)).toEqual({ ok: false, reason: 'concurrency' });
    expect(a.start(0)).toEqual({ ok: false, reason: 'concurrency' });
    // The reserved function's own 6 are untouched by the others.
    expect(Array.from({ length: 6 }, () => reserved.start(0).ok).every(Boolean)).toBe(true);
  });
});

describe('scaling rate', () => {
  it('creates at most 1,000 environments at once, then 100 a second (refilled continuously)', () => {
    const fn = new FunctionModel(options(), new Account(5000), new Rng(1));
    const started = Array.from({ length: 1001 }, () => fn.start(0));
    expect(started.filter((s) => s.ok).length).toBe(1000);
    expect(started[1000]).toEqual({ ok: false, reason: 'scaling-rate' });
    expect(Array.from({ length: 101 }, () => fn.start(1000).ok).filter(Boolean).length).toBe(100);
  });

  it('reuses a warm environment without spending the rate or running INIT', () => {
    const fn = new FunctionModel(options({ scalePer10s: 1 }), new Account(5000), new Rng(1));
    expect(fn.start(0).ok).toBe(true);
    fn.finish(50, 45);
    const warm = fn.start(60);
    expect(warm).toEqual({ ok: true, handlerStartsAt: 65, initMs: 0 });
    expect(fn.bill.coldStarts).toBe(1);
  });

  it('an environment idle longer than the reclaim time is gone: the next start is cold', () => {
    const fn = new FunctionModel(options(), new Account(5000), new Rng(1));
    fn.start(0);
    fn.finish(10, 5);
    const later = fn.start(10 + 10 * 60_000 + 1);
    expect(later.ok && later.initMs).toBe(200);
    expect(fn.bill.coldStarts).toBe(2);
  });
});

describe('cold start and INIT billing', () => {
  it('a cold start runs INIT before the handler and bills it like duration', () => {
    const fn = new FunctionModel(options(), new Account(1000), new Rng(1));
    const cold = fn.start(1000);
    // invoke overhead 5 + platform 100 + INIT 200 (sigma 0).
    expect(cold).toEqual({ ok: true, handlerStartsAt: 1305, initMs: 200 });
    fn.finish(3305, 2000);
    expect(fn.bill.initMs).toBe(200);
    expect(fn.bill.initGbSeconds).toBeCloseTo(0.2 * 2, 10);
    expect(fn.bill.gbSeconds).toBeCloseTo(2 * 2, 10);
    expect(fn.bill.invocations).toBe(1);
  });

  it('bills duration rounded up to the millisecond', () => {
    const fn = new FunctionModel(options({ memoryMb: 1024 }), new Account(1000), new Rng(1));
    fn.start(0);
    fn.finish(1, 0.2);
    expect(fn.bill.billedMs).toBe(1);
  });
});
