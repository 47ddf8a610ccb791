/**
 * The collector's calls as sim/collect.ts counts them, coalesced as the collector runs a
 * batch: a target's messages in one batch are one look, and the run is analysed once after
 * the batch's looks; finalised one after the other, the second batch analyses and a third
 * finds the analysis done. A missing shard before the deadline is pending, after it lost; a
 * deadline message early by under a second waits for the deadline; one not yet due is sent
 * on once, however many copies of it the batch holds.
 */
import { describe, expect, it } from 'vitest';
import { S3Timing } from '../../../sim/aws/s3';
import { CollectHandler } from '../../../sim/collect';
import type { ShardState } from '../../../sim/fire';
import { Rng } from '../../../sim/random';
import { settingsFor } from '../../../sim/settings';
import { buildWorkload } from '../../../sim/workload';

const { settings } = settingsFor({ ratePerTarget: 100, targets: 2, seconds: 10, latencyP50S: 0.01, latencyP99S: 0.01 });
const workload = buildWorkload(settings, new Rng(1));
const s3 = () => new S3Timing(settings.aws.s3, new Rng(2));

function collector(resultsAt: (target: number, shard: number) => number) {
  const states = [0, 1].map(
    (target) =>
      new Map<number, ShardState>(
        workload.shards.map((s) => [s.index, { claimedAt: 0, resultsAt: resultsAt(target, s.index) }]),
      ),
  );
  const c = new CollectHandler(settings, workload, states, s3(), () => undefined);
  c.deadlineMs = 100_000;
  return c;
}

const apply = (run: { effects: { run: () => void }[] }) => run.effects.forEach((e) => e.run());

describe('collect', () => {
  it("a target's messages in one batch are one look, and the run is analysed once", () => {
    const lane = (target: number) => ({ kind: 'collect' as const, target, notBeforeMs: 0 });
    const c = collector(() => 0);
    apply(c.handle([lane(0), lane(1), lane(0), lane(1), lane(0), lane(1)], 50_000));
    expect(c.counters.finals).toBe(2);
    expect(c.counters.analyses).toBe(1);
    expect(c.lost).toEqual([0, 0]);
    // Per target its look (run record, each shard's results, the ingest's); once the analysis (run record, both
    // manifests, the marker, each target's results again) and each target's aggregates for its metrics.
    const shards = workload.shards.length;
    expect(c.counters.s3Get).toBe(2 * (1 + shards + 1) + (1 + 2 + 1) + 2 * (shards + 1) + 2);
    // The same calls as one message per target.
    const one = collector(() => 0);
    apply(one.handle([lane(0), lane(1)], 50_000));
    expect(c.counters).toEqual(one.counters);
  });

  it('finalised one after the other: the first finds the other target not final, the second analyses; finalised again, nothing new', () => {
    const c = collector(() => 0);
    apply(c.handle([{ kind: 'collect', target: 0, notBeforeMs: 0 }], 50_000));
    expect(c.counters.analyses).toBe(0);
    apply(c.handle([{ kind: 'collect', target: 1, notBeforeMs: 0 }], 51_000));
    expect(c.counters.analyses).toBe(1);
    // The deadline's messages finalise again; the accounting is unchanged: no new analysis.
    const gets = c.counters.s3Get;
    apply(
      c.handle(
        [
          { kind: 'collect', target: 0, notBeforeMs: 0 },
          { kind: 'collect', target: 1, notBeforeMs: 0 },
        ],
        120_000,
      ),
    );
    expect(c.counters.finals).toBe(4);
    expect(c.counters.analyses).toBe(1);
    // Per target: the run record, one results object per shard and the ingest's; once: the run record, both manifests, the marker.
    expect(c.counters.s3Get - gets).toBe(2 * (1 + workload.shards.length + 1) + (1 + 2 + 1));
  });

  it('a shard without results is pending before the deadline and counted lost after it', () => {
    const c = collector((target, shard) => (target === 0 && shard === 1 ? Infinity : 0));
    apply(c.handle([{ kind: 'collect', target: 0, notBeforeMs: 0 }], 50_000));
    expect(c.counters.pendings).toBe(1);
    expect(c.lost[0]).toBeNull();
    apply(c.handle([{ kind: 'collect', target: 0, notBeforeMs: 0 }], 100_001));
    expect(workload.shards.length).toBeGreaterThan(1);
    expect(c.lost[0]).toBe(workload.shards[1]?.offsets.length);
  });

  it('a deadline message early by under a second waits for the deadline, then counts the missing shard lost', () => {
    const c = collector((target, shard) => (target === 0 && shard === 1 ? Infinity : 0));
    const run = c.handle([{ kind: 'collect', target: 0, notBeforeMs: 100_000 }], 99_600);
    apply(run);
    expect(run.endMs).toBeGreaterThan(100_000);
    expect(c.counters.pendings).toBe(0);
    expect(c.lost[0]).toBe(workload.shards[1]?.offsets.length);
  });

  it('a message not yet due is sent on once, however many copies the batch holds, and writes interim results', () => {
    const sent: number[][] = [];
    const states = [0, 1].map(() => new Map<number, ShardState>());
    const c = new CollectHandler(
      settings,
      workload,
      states,
      s3(),
      (_at, entries) => void sent.push(entries.map((e) => e.delaySeconds)),
    );
    c.deadlineMs = 100_000;
    const deadline = { kind: 'collect' as const, target: 0, notBeforeMs: 100_000 };
    apply(c.handle([deadline, { kind: 'collect', target: 0, notBeforeMs: 0 }, deadline], 10_000));
    expect(sent).toEqual([[90]]);
    expect(c.counters.interims).toBe(1);
    expect(c.counters.analyses).toBe(0);
  });
});
