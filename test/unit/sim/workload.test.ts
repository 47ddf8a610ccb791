/**
 * The simulator's traffic comes from the pipeline's own planner and sharder: planning in
 * chunks of seconds gives the whole plan's offsets, the shards are cutShards' over the whole
 * plan, and a shard message is the size of the real wire format.
 */
import { describe, expect, it } from 'vitest';
import { cutShards, DEFAULT_SHARDING, wireBytes } from '../../../lambdas/core/pipeline/shards';
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

  it('has exactly rate x seconds requests (even arrivals) in the shards cutShards makes of the whole plan', () => {
    const w = buildWorkload(settings, new Rng(1));
    expect(w.requests).toBe(333 * 37);
    const counts = Uint32Array.from({ length: 37 }, (_, s) => Math.floor((s + 1) * 333) - Math.floor(s * 333));
    const sharding = { ...DEFAULT_SHARDING, slotMs: 1000, maxShardRequests: settings.stack.maxShardRequests };
    const items = planSeconds(counts, 0, 37, 0).map((offsetMs) => ({ offsetMs }));
    const expected = cutShards(items, sharding, () => wireBytes(1353, 's3://b/k.jsonl', sharding));
    expect(w.shards.map((s) => s.shardId)).toEqual(expected.map((s) => s.shardId));
    const got = w.shards.flatMap((s) => Array.from(s.offsets));
    const want = expected.flatMap((s) => s.requests.map((r) => r.offsetMs));
    expect(w.shards.map((s) => s.offsets.length)).toEqual(expected.map((s) => s.requests.length));
    expect(Math.max(...got.map((o, i) => Math.abs(o - (want[i] as number))))).toBeLessThan(1e-9);
    expect(w.durationMs).toBeCloseTo(want.at(-1) as number, 9);
    expect(w.fileBytes).toBe(333 * 37 * settings.workload.recordBytes);
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
