/**
 * The simulator's traffic comes from the pipeline's own planner and sharder: planning in
 * chunks of seconds gives the whole plan's offsets, the shards are cutShards' lanes over the
 * whole plan, each inline or by reference as the ingest decides, and a shard message is the
 * size of the real wire format.
 */
import { describe, expect, it } from 'vitest';
import { partRequests } from '../../../lambdas/core/pipeline/shard-parts';
import { cutShards, DEFAULT_SHARDING } from '../../../lambdas/core/pipeline/shards';
import { Rng } from '../../../sim/random';
import { settingsFor } from '../../../sim/settings';
import { buildWorkload, planOffsets, planSeconds } from '../../../sim/workload';

describe('planOffsets', () => {
  it('planned a second at a time, the offsets are those of the whole plan', () => {
    const rng = new Rng(5);
    const counts = Uint32Array.from({ length: 25 }, (_, s) => (s === 3 ? 0 : s === 7 ? 40 : rng.poisson(40)));
    const whole = planSeconds(counts, 0, 25, 0);
    const chunked = Array.from(planOffsets(counts, 0));
    // Equal up to float rounding: spread + shift against s + spread.
    expect(chunked.length).toBe(whole.length);
    expect(Math.max(...chunked.map((o, i) => Math.abs(o - (whole[i] as number))))).toBeLessThan(1e-9);
    // The spread rule: the k records of a second at +i*1000/k ms.
    expect(whole.slice(0, 3)).toEqual([0, 1000 / (counts[0] as number), 2000 / (counts[0] as number)]);
  });
});

describe('buildWorkload', () => {
  const { settings } = settingsFor({ ratePerTarget: 333, targets: 2, seconds: 37, latencyP50S: 1, latencyP99S: 2 });

  it(
    'has exactly rate x seconds requests (even arrivals) in the lanes cutShards makes of the whole plan, in 1 ' +
      's slots and in the derived ones',
    () => {
      for (const slotS of [1, settings.stack.slotS]) {
        const s = { ...settings, stack: { ...settings.stack, slotS } };
        const w = buildWorkload(s, new Rng(1));
        expect(w.requests).toBe(333 * 37);
        const counts = Uint32Array.from({ length: 37 }, (_, k) => Math.floor((k + 1) * 333) - Math.floor(k * 333));
        const sharding = {
          ...DEFAULT_SHARDING,
          slotMs: slotS * 1000,
          maxShardRequests: settings.stack.maxShardRequests,
        };
        const items = planSeconds(counts, 0, 37, 0).map((offsetMs) => ({ offsetMs }));
        const expected = cutShards(items, sharding);
        expect(w.shards.map((x) => x.shardId)).toEqual(expected.map((x) => x.shardId));
        const got = w.shards.flatMap((x) => Array.from(x.offsets));
        const want = expected.flatMap((x) => x.requests.map((r) => r.offsetMs));
        expect(w.shards.map((x) => x.offsets.length)).toEqual(expected.map((x) => x.requests.length));
        expect(Math.max(...got.map((o, i) => Math.abs(o - (want[i] as number))))).toBeLessThan(1e-9);
        expect(w.durationMs).toBeCloseTo(Math.max(...want), 9);
        expect(w.fileBytes).toBe(333 * 37 * settings.workload.recordBytes);
      }
    },
  );

  it('a lane over the message budget travels by reference, in parts of partRequests(lanes); a small one inline', () => {
    // 37 s at 333/s in one 120 s slot: 4 lanes of ~3,080 requests (~7 MB each).
    const w = buildWorkload(settings, new Rng(1));
    expect(w.slots).toHaveLength(1);
    expect(w.shards).toHaveLength(4);
    for (const s of w.shards) expect(s.parts).toBe(Math.ceil(s.offsets.length / partRequests(4)));
    expect(w.shardMessageBytes(w.shards[0]!, false)).toBeLessThan(1000);
    const small = buildWorkload(
      { ...settings, stack: { ...settings.stack, slotS: 1, maxShardRequests: 200 } },
      new Rng(1),
    );
    expect(small.shards.every((s) => s.parts === 0)).toBe(true);
    expect(small.shardMessageBytes(small.shards[0]!, false)).toBe(small.messageBytes(small.shards[0]!.offsets.length));
  });

  it('a shard message of 200 requests of ~1.3 KB bodies is ~440 KB (bench/RESULTS.md, moto), and grows with its requests', () => {
    const w = buildWorkload(settings, new Rng(1));
    expect(w.messageBytes(200)).toBeGreaterThan(400_000);
    expect(w.messageBytes(200)).toBeLessThan(480_000);
    expect(w.messageBytes(201) - w.messageBytes(200)).toBeGreaterThan(1353 * (4 / 3));
  });

  it('poisson arrivals: a different count per second, reproducible by seed', () => {
    const poisson = { ...settings, workload: { ...settings.workload, arrivals: 'poisson' as const } };
    const a = buildWorkload(poisson, new Rng(9));
    const b = buildWorkload(poisson, new Rng(9));
    expect(a.requests).toBe(b.requests);
    expect(a.requests).not.toBe(333 * 37);
    expect(Math.abs(a.requests - 333 * 37)).toBeLessThan(5 * Math.sqrt(333 * 37));
  });
});
