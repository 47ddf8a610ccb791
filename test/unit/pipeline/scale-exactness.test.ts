/**
 * The pipeline at production sizes and under AWS's failure modes, on in-memory ports that
 * refuse what SQS refuses (MemoryQueue: 10 entries and 1 MiB per batch). Each case failed
 * on the code before the fix it covers.
 */
import { describe, expect, it } from 'vitest';
import { createSystemClock } from '../../../lambdas/adapters/system-clock';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { MemoryQueue } from '../../../lambdas/adapters/local/memory-queue';
import { DuplicateFilter } from '../../../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { parseCaptureStream } from '../../../lambdas/core/capture/stream';
import { runFireLoop } from '../../../lambdas/core/fire/fire-loop';
import { Semaphore } from '../../../lambdas/core/fire/semaphore';
import { packBatches, SQS_BATCH_MAX_BYTES, withRetries } from '../../../lambdas/core/pipeline/common';
import { resultsKey, runStartKey } from '../../../lambdas/core/pipeline/keys';
import { decodeResultLines } from '../../../lambdas/core/pipeline/results';
import { fromReplayPlan } from '../../../lambdas/core/pipeline/dispatch';
import type { ShardMessage } from '../../../lambdas/core/pipeline/shards';
import { handleShard, dispatchRun, type HandleShardDeps } from '../../../lambdas/core/pipeline/stages';
import { buildPlan, indexRecord, planIndexed, type PlanOptions } from '../../../lambdas/core/plan/plan';
import { coalesceRanges, readBackRequests } from '../../../lambdas/core/plan/read-back';
import type { CaptureRecord, ReplayPlan, ScheduledRequest } from '../../../lambdas/core/types';
import { bearerKeyFromSecret } from '../../../lambdas/runtime/secrets';
import { scheduledRequest } from '../../support/fixtures';
import { FakeTarget, VirtualClock } from '../../support/virtual-clock';

const S = 1_800_000_000_000_000_000n;
const MS = 1_000_000n;
const SEC = 1_000_000_000n;

/** `rate` requests/s for `seconds`, bodies of ~`bodyBytes`, as a plan in memory. */
function productionPlan(rate: number, seconds: number, bodyBytes: number): ReplayPlan {
  const requests: ScheduledRequest[] = [];
  for (let i = 0; i < rate * seconds; i++) {
    const content = 'x'.repeat(Math.max(0, bodyBytes - 60));
    requests.push(
      scheduledRequest(i, (i * 1000) / rate, {
        body: Buffer.from(`{"messages":[{"role":"user","content":"${content}"}],"n":${i}}`),
      }),
    );
  }
  return { requests, incompatible: [], excluded: {}, scheduleZeroMs: 0, durationMs: requests.at(-1)!.offsetMs };
}

function setup() {
  const clock = new VirtualClock(S);
  return { clock, store: new MemoryObjectStore(), queue: new MemoryQueue(() => clock.nowNs()) };
}

const scheduleArgs = (p: ReturnType<typeof setup>, plan: ReplayPlan, targets = ['A']) => ({
  runId: 'run-1',
  plan,
  targets,
  startNs: S + 20n * SEC,
  leadMs: 20_000,
  graceMs: 60_000,
  inputConfig: null,
  notScheduledByReason: {},
  store: p.store,
  queue: p.queue,
  clock: p.clock,
});

describe('SQS batches packed by bytes', () => {
  it('never puts more than 1 MiB or 10 entries in one batch', () => {
    const big = Array.from({ length: 10 }, (_, i) => ({ id: `m${i}`, body: 'x'.repeat(256 * 1024), delaySeconds: 0 }));
    const batches = packBatches(big);
    expect(batches.map((b) => b.length)).toEqual([3, 3, 3, 1]);
    const small = Array.from({ length: 25 }, (_, i) => ({ id: `s${i}`, body: 'y', delaySeconds: 0 }));
    expect(packBatches(small).map((b) => b.length)).toEqual([10, 10, 5]);
    for (const b of [...batches, ...packBatches(small)])
      expect(b.reduce((n, m) => n + m.body.length, 0)).toBeLessThanOrEqual(SQS_BATCH_MAX_BYTES);
    expect(() => packBatches([{ id: 'huge', body: 'z'.repeat(1_048_576), delaySeconds: 0 }])).toThrow(/1 MiB/);
  });

  it('schedules 60 s at 200 requests/s of 1.3 KB bodies (12,000 requests) on a queue that enforces the limits', async () => {
    const p = setup();
    const plan = productionPlan(200, 60, 1300);
    const result = await dispatchRun(scheduleArgs(p, plan, ['A', 'B']));
    expect(result.status).toBe('scheduled');
    const shards = p.queue.messages.map((m) => JSON.parse(m.body) as ShardMessage);
    const perTarget = (t: string) =>
      shards.filter((s) => s.target === t).flatMap((s) => s.requests.map((r) => r.index));
    for (const t of ['A', 'B']) expect(perTarget(t).sort((a, b) => a - b)).toEqual(plan.requests.map((r) => r.index));
    // In due order across targets: each shard's A and B messages leave together.
    expect(shards.slice(0, 4).map((s) => `${s.target}:${s.shardId}`)).toEqual(['A:0-0', 'B:0-0', 'A:1-0', 'B:1-0']);
  });
});

describe('two-pass planning', () => {
  const options: PlanOptions = {
    runId: 'r',
    targetKind: 'openai-chat',
    timeScale: 2,
    intraSecond: 'spread',
    forceStreaming: true,
    modelOverride: 'm2',
  };
  const lines = [
    ...Array.from({ length: 7 }, (_, i) => ({
      id: `a${i}`,
      t: `2026-04-29T00:00:0${i % 3}Z`,
      data: `{"messages":[{"role":"user","content":"hi ${i}"}],"model":"m1"}`,
      type: 'application/json',
    })),
    { id: 'csv', t: '2026-04-29T00:00:01Z', data: '1,2,3', type: 'text/csv' },
    {
      id: 'frac',
      t: '2026-04-29T00:00:00.250Z',
      data: '{"messages":[],"stream":true,"stream_options":{"include_usage":true}}',
      type: 'application/json',
    },
  ].map(({ id, t, data, type }) =>
    JSON.stringify({
      captureData: {
        endpointInput: {
          observedContentType: type,
          mode: 'INPUT',
          data,
          encoding: type === 'text/csv' ? 'CSV' : 'JSON',
        },
      },
      eventMetadata: { eventId: id, inferenceTime: t },
      eventVersion: '0',
    }),
  );
  const file = Buffer.from('\ufeff' + lines.join('\r\n') + '\n');

  async function parse(): Promise<CaptureRecord[]> {
    const out: CaptureRecord[] = [];
    const chunks = (async function* () {
      for (let i = 0; i < file.length; i += 97) yield file.subarray(i, i + 97);
    })();
    for await (const r of parseCaptureStream(chunks, 'f.jsonl', new IngestReportBuilder(), new DuplicateFilter()))
      out.push(r);
    return out;
  }

  it('reads back by byte range exactly the requests the one-pass plan makes', async () => {
    const records = await parse();
    const onePass = buildPlan(records, options);
    const indexed = planIndexed(
      records.map((r) => indexRecord(r, options)),
      options,
    );
    const reads: [number, number][] = [];
    const compatible = indexed.entries.filter((e) => !e.record.incompatible);
    const twoPass = await readBackRequests(
      compatible,
      async (start, end) => {
        reads.push([start, end]);
        return file.subarray(start, end);
      },
      options,
    );
    expect(twoPass).toEqual(onePass.requests);
    expect(
      indexed.entries.filter((e) => e.record.incompatible).map((e) => [e.index, e.record.incompatible!.reason]),
    ).toEqual(onePass.incompatible.map((i) => [i.request.index, i.reason]));
    expect(reads).toHaveLength(1); // neighbouring lines: one range
    expect(indexed.durationMs).toBe(onePass.durationMs);
  });

  it('reads far-apart lines separately, and refuses a file that changed', async () => {
    const records = await parse();
    const entries = planIndexed(
      records.map((r) => indexRecord(r, options)),
      options,
    ).entries;
    expect(coalesceRanges(entries, 0).length).toBeGreaterThan(1);
    const changed = Buffer.from(file);
    changed.write('{"x', entries[0]!.record.span.start);
    await expect(
      readBackRequests(entries.slice(0, 1), async (s, e) => changed.subarray(s, e), options),
    ).rejects.toThrow(/changed/);
    await expect(
      readBackRequests(entries.slice(0, 1), async (s, e) => file.subarray(s, e - 1), options),
    ).rejects.toThrow(/changed/);
  });
});

describe('a retried ingest keeps the run start', () => {
  it('reuses the start an earlier, failed attempt fixed', async () => {
    const p = setup();
    const plan = productionPlan(50, 30, 200);
    let sends = 0;
    const flaky = {
      sendBatch: async (entries: Parameters<MemoryQueue['sendBatch']>[0]) => {
        if (++sends === 3) throw new Error('SQS unavailable');
        return p.queue.sendBatch(entries);
      },
    };
    await expect(dispatchRun({ ...scheduleArgs(p, plan), queue: flaky })).rejects.toThrow(/unavailable/);
    expect(p.store.text(runStartKey('run-1'))).toContain((S + 20n * SEC).toString());
    p.clock.advanceTo(S + 5n * SEC);
    const retried = await dispatchRun({ ...scheduleArgs(p, plan), startNs: S + 25n * SEC });
    expect(retried.status === 'scheduled' && retried.startNs).toBe(S + 20n * SEC);
    expect(new Set(p.queue.messages.map((m) => (JSON.parse(m.body) as ShardMessage).startNs))).toEqual(
      new Set([(S + 20n * SEC).toString()]),
    );
  });
});

describe('fire under redelivery', () => {
  function fireDeps(
    p: ReturnType<typeof setup>,
    target: FakeTarget,
    policy: 'fire' | 'drop' = 'fire',
  ): HandleShardDeps {
    return {
      store: p.store,
      queue: p.queue,
      clock: p.clock,
      leadMs: 20_000,
      claimLeaseMs: 900_000,
      workerId: 'w',
      fire: (requests, message, onOutcome) =>
        runFireLoop(requests, {
          runId: message.runId,
          target,
          clock: p.clock,
          startNs: BigInt(message.startNs),
          workerId: 'w',
          latePolicy: { toleranceMs: 5000, action: policy },
          expireAfterMs: 120_000,
          onOutcome,
        }),
    };
  }

  it('drops a shard redelivered after its due window as expired, even with late policy fire; fires a merely late one', async () => {
    const p = setup();
    const target = new FakeTarget('A', p.clock, () => ({ latencyMs: 5 }));
    await dispatchRun(scheduleArgs(p, productionPlan(2, 2, 100)));
    const [first, second] = p.queue.messages.splice(0).map((m) => m.body);
    p.clock.advanceTo(S + 20n * SEC + 30n * SEC); // 30 s late: fired, lag recorded
    const late = await handleShard(first!, fireDeps(p, target));
    expect(late.counts).toMatchObject({ fired: 2, dropped: 0 });
    p.clock.advanceTo(S + 20n * SEC + 90n * 60n * SEC); // 90 minutes late (old visibility timeout)
    const expired = await handleShard(second!, fireDeps(p, target));
    expect(expired.counts).toMatchObject({ fired: 0, dropped: 2, expired: 2, dropReasons: { expired: 2 } });
    expect(target.sent).toHaveLength(2);
    const lines = decodeResultLines(p.store.text(resultsKey('run-1', 'A', '1-0'))!, 'k');
    expect(lines.map((l) => l.kind === 'drop' && l.dropReason)).toEqual(['expired', 'expired']);
  });

  it('retries a failed results write instead of losing the fired results', async () => {
    const p = setup();
    const target = new FakeTarget('A', p.clock, () => ({ latencyMs: 5 }));
    await dispatchRun(scheduleArgs(p, productionPlan(2, 1, 100)));
    const [message] = p.queue.messages.splice(0);
    const putIfAbsent = p.store.putIfAbsent.bind(p.store);
    let failures = 0;
    p.store.putIfAbsent = async (key, body) => {
      if (key.includes('/_results/') && failures < 2) {
        failures++;
        throw new Error('503 SlowDown');
      }
      return putIfAbsent(key, body);
    };
    p.clock.advanceTo(S + 20n * SEC);
    expect((await handleShard(message!.body, fireDeps(p, target))).action).toBe('fired');
    expect(failures).toBe(2);
    expect(decodeResultLines(p.store.text(resultsKey('run-1', 'A', '0-0'))!, 'k').map((l) => l.kind)).toEqual([
      'record',
      'record',
    ]);
  });

  it('withRetries gives up after its attempts and rethrows the last error', async () => {
    const clock = new VirtualClock(S);
    let calls = 0;
    await expect(
      withRetries(
        async () => {
          calls++;
          throw new Error(`fail ${calls}`);
        },
        clock,
        3,
        100,
      ),
    ).rejects.toThrow('fail 3');
    expect(clock.nowNs() - S).toBe(300n * MS); // 100 + 200 ms of backoff
  });
});

describe('connections shared by the shards of one invocation', () => {
  it('never has more requests in flight to a target than the shared permits', async () => {
    const clock = new VirtualClock(S);
    let inFlight = 0;
    let peak = 0;
    const target = new FakeTarget('A', clock, () => ({ latencyMs: 500 }));
    const send = target.send.bind(target);
    target.send = async (request) => {
      peak = Math.max(peak, ++inFlight);
      try {
        return await send(request);
      } finally {
        inFlight--;
      }
    };
    const shared = new Semaphore(3);
    const shard = (base: number) => Array.from({ length: 5 }, (_, i) => scheduledRequest(base + i, i * 10));
    const loops = [0, 100].map((base) =>
      runFireLoop(shard(base), { runId: 'r', target, clock, startNs: S, workerId: 'w', sharedInFlight: shared }),
    );
    const outcomes = (await Promise.all(loops)).flat();
    expect(outcomes.every((o) => o.result && !o.result.error)).toBe(true);
    expect(peak).toBe(3);
    expect(shared.inUse).toBe(0);
  });
});

describe('secrets', () => {
  it.each([
    ['a plain key', 'sk-123', undefined, 'sk-123'],
    ['a plain key with a newline', 'sk-123\n', undefined, 'sk-123'],
    ['a JSON secret by field', '{"api_key":"sk-9","user":"u"}', 'api_key', 'sk-9'],
  ])('%s', (_name, secret, field, want) => {
    expect(bearerKeyFromSecret(secret, 'id', field)).toBe(want);
  });

  it.each([
    [
      'a JSON secret without a field (the console default): never sent as Bearer {...}',
      '{"api_key":"sk-9"}',
      undefined,
      /set apiKeySecretField.*api_key/,
    ],
    ['a missing field', '{"api_key":"sk-9"}', 'token', /no non-empty string field "token"/],
    ['a field on a plain secret', 'sk-1', 'api_key', /not a JSON object/],
    ['no SecretString', undefined, undefined, /no SecretString/],
  ])('refuses %s', (_name, secret, field, error) => {
    expect(() => bearerKeyFromSecret(secret, 'id', field)).toThrow(error);
  });
});

describe('the system clock after a freeze', () => {
  it('follows the wall clock again at resync when the monotonic clock did not advance while frozen', () => {
    let wallMs = 1_800_000_000_000;
    let hr = 5_000_000_000n;
    // The wall clock ticks on every read, so the anchor's wait for a tick ends at once.
    const clock = createSystemClock({ wallMs: () => wallMs++, hrtimeNs: () => hr });
    const before = clock.nowNs();
    hr += 10n * MS; // 10 ms of running
    expect(clock.nowNs() - before).toBe(10n * MS);
    wallMs += 60_000; // frozen for a minute: hrtime stood still
    expect(clock.nowNs() - before).toBe(10n * MS); // fallen behind, unseen
    clock.resync();
    const caughtUp = clock.nowNs();
    expect(Number(caughtUp - before) / 1e6).toBeGreaterThan(60_000);
    expect(Number(clock.lastCorrectionNs) / 1e6).toBeGreaterThan(59_990);
  });
});

describe('fromReplayPlan', () => {
  it('loads the same requests back', async () => {
    const plan = productionPlan(3, 1, 50);
    const s = fromReplayPlan(plan);
    expect(await s.load(s.items)).toEqual(plan.requests);
  });
});

describe('artifacts', () => {
  it('writes run_manifest.json only after every other file is complete, so seeing it means the run is readable', async () => {
    const order: string[] = [];
    const store = {
      put: async (key: string) => {
        await new Promise((r) => setTimeout(r, key.endsWith('.jsonl') ? 20 : 0)); // the big file is slowest
        order.push(key.slice(key.lastIndexOf('/') + 1));
      },
    };
    const { writeTargetArtifacts } = await import('../../../lambdas/core/export/artifacts');
    const { aggregate } = await import('../../../lambdas/core/metrics/aggregate');
    const { buildManifest } = await import('../../../lambdas/core/export/manifest');
    await writeTargetArtifacts(store, 'runs/r/A/', {
      records: [],
      aggregates: aggregate([]),
      manifest: buildManifest({
        runId: 'r',
        target: 'A',
        outcomes: [],
        notScheduledByReason: {},
        startedAt: 'a',
        endedAt: 'b',
      }),
      inputConfig: null,
      wasCancelled: false,
      startTime: 'a',
      endTime: 'b',
    });
    expect(order.at(-1)).toBe('run_manifest.json');
    expect(order).toHaveLength(4);
  });
});
