/**
 * The pipeline's pure core on in-memory ports and virtual time: a 3-hour schedule runs in
 * milliseconds, and every SQS delay, hop and claim is checked exactly.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { MemoryQueue } from '../../../lambdas/adapters/local/memory-queue';
import { runFireLoop } from '../../../lambdas/core/fire/fire-loop';
import { claimKey, resultsKey } from '../../../lambdas/core/pipeline/keys';
import { cutShards, fromWire, toWire, type ShardMessage } from '../../../lambdas/core/pipeline/shards';
import {
  deliveryDelay,
  hopsFor,
  sqsRequestsPerCapturedRequest,
  stillEarly,
} from '../../../lambdas/core/pipeline/sqs-delay';
import {
  collectMessage,
  collectRun,
  handleCollect,
  handleShard,
  dispatchRun,
  type HandleShardDeps,
} from '../../../lambdas/core/pipeline/stages';
import { PermanentError } from '../../../lambdas/core/errors';
import type { ReplayPlan, ScheduledRequest } from '../../../lambdas/core/types';
import { FakeTarget, VirtualClock } from '../../support/virtual-clock';
import { scheduledRequest } from '../../support/fixtures';

const S = 1_800_000_000_000_000_000n;
const MS = 1_000_000n;
const SEC = 1_000_000_000n;

const req = (index: number, offsetMs: number, bodyBytes = 40) =>
  scheduledRequest(index, offsetMs, {
    body: Buffer.alloc(bodyBytes, 97),
    capturedUsage: { promptTokens: 3, completionTokens: null },
  });

const plan = (requests: ScheduledRequest[], incompatible: ReplayPlan['incompatible'] = []): ReplayPlan => ({
  requests,
  incompatible,
  excluded: {},
  scheduleZeroMs: 0,
  durationMs: requests.at(-1)?.offsetMs ?? 0,
});

describe('cutShards', () => {
  it('cuts at slot boundaries, then deals each slot to as many lanes as its count needs (request i to lane i mod n)', () => {
    const requests = [req(0, 0), req(1, 999.9), req(2, 1000), req(3, 1001), req(4, 1002), req(5, 5000)];
    expect(
      cutShards(requests, { slotMs: 1000, maxShardRequests: 2, maxMessageBytes: 1e6, maxInlineBodyBytes: 1e5 }).map(
        (s) => [s.shardId, s.requests.map((r) => r.index)],
      ),
    ).toEqual([
      ['0-0', [0, 1]],
      ['1-0', [2, 4]],
      ['1-1', [3]],
      ['5-0', [5]],
    ]);
  });

  it('a body over the inline limit travels by reference and round-trips exactly', async () => {
    const request = req(7, 12.5, 10);
    const inline = toWire(request, null);
    expect(await fromWire(inline, async () => null)).toEqual({ ...request, body: Buffer.from(request.body) });
    const byRef = toWire(request, 'runs/r/_bodies/7');
    expect(byRef.body).toBeUndefined();
    expect(await fromWire(byRef, async (key) => (key === 'runs/r/_bodies/7' ? request.body : null))).toEqual({
      ...request,
      body: request.body,
    });
    await expect(fromWire(byRef, async () => null)).rejects.toThrow(/missing/);
  });
});

describe('SQS delays', () => {
  it.each([
    ['due now', 0, 20_000, 0, false],
    ['inside the lead', 15_000, 20_000, 0, false],
    ['just over the lead', 20_900, 20_000, 0, false],
    ['30 s away', 30_000, 20_000, 10, false],
    ['rounds down (early, never late)', 31_999, 20_000, 11, false],
    ['exactly 900 s + lead', 920_000, 20_000, 900, false],
    ['beyond 15 minutes', 2 * 3600_000, 20_000, 900, true],
  ])('%s', (_name, aheadMs, leadMs, delaySeconds, deferred) => {
    expect(deliveryDelay(S + BigInt(aheadMs) * MS, S, leadMs)).toEqual({ delaySeconds, deferred });
  });

  it('counts hops and SQS requests per captured request', () => {
    expect(hopsFor(10_000, 20_000)).toBe(1);
    expect(hopsFor(920_000, 20_000)).toBe(1);
    expect(hopsFor(921_000, 20_000)).toBe(2);
    expect(hopsFor(24 * 3600_000, 20_000)).toBe(96);
    // 200 requests of 1,300 B = 260,000 B = 4 chunks of 64 KB: send 4 + receive 4 + 0.1 delete.
    expect(
      sqsRequestsPerCapturedRequest({ requestsPerShard: 200, bytesPerRequest: 1300, msAhead: 30_000, leadMs: 20_000 }),
    ).toBeCloseTo(8.1 / 200, 12);
    expect(
      sqsRequestsPerCapturedRequest({
        requestsPerShard: 200,
        bytesPerRequest: 1300,
        msAhead: 24 * 3600_000,
        leadMs: 20_000,
      }),
    ).toBeCloseTo((96 * 8.1) / 200, 12);
  });
});

/** A miniature of the AWS pipeline: memory store + queue, virtual clock, fake target. */
function pipeline(opts: { latency?: number; lateDrop?: number } = {}) {
  const clock = new VirtualClock(S);
  const store = new MemoryObjectStore();
  const queue = new MemoryQueue(() => clock.nowNs());
  const target = new FakeTarget('A', clock, () => ({ latencyMs: opts.latency ?? 5 }));
  const deps: HandleShardDeps = {
    store,
    queue,
    clock,
    leadMs: 20_000,
    claimLeaseMs: 900_000,
    workerId: 'fire-1',
    fire: (requests, message, onOutcome) =>
      runFireLoop(requests, {
        runId: message.runId,
        target,
        clock,
        startNs: BigInt(message.startNs),
        workerId: 'fire-1',
        onOutcome,
        ...(opts.lateDrop !== undefined ? { latePolicy: { toleranceMs: opts.lateDrop, action: 'drop' as const } } : {}),
      }),
  };
  /** Delivers every message as SQS would, in due order, until the queue is empty. */
  const drain = async (deliver: (body: string) => Promise<unknown> = (b) => handleShard(b, deps)) => {
    const actions: string[] = [];
    for (let next = queue.nextDueNs(); next !== null; next = queue.nextDueNs()) {
      clock.advanceTo(next);
      for (const m of queue.takeDue(clock.nowNs()))
        actions.push(((await deliver(m.body)) as { action: string }).action);
    }
    return actions;
  };
  return { clock, store, queue, target, deps, drain };
}

const schedule = (
  p: ReturnType<typeof pipeline>,
  requests: ScheduledRequest[],
  extra: Partial<Parameters<typeof dispatchRun>[0]> = {},
) =>
  dispatchRun({
    runId: 'run-1',
    plan: plan(requests),
    targets: ['A'],
    startNs: S + 30n * SEC,
    leadMs: 20_000,
    graceMs: 60_000,
    inputConfig: { mode: 'file' },
    notScheduledByReason: {},
    store: p.store,
    queue: p.queue,
    clock: p.clock,
    ...extra,
  });

describe('schedule -> fire -> collect', () => {
  it('replays a 3-hour schedule through deferral hops, each request at its due time, once', async () => {
    const p = pipeline();
    const offsets = [0, 500, 10_000, 1_000_000, 3 * 3600_000];
    const result = await schedule(
      p,
      offsets.map((o, i) => req(i, o)),
    );
    expect(result).toMatchObject({ status: 'scheduled', shards: 4, messages: 4 });
    expect(p.queue.messages.map((m) => m.delaySeconds)).toEqual([10, 20, 900, 900]);
    expect(p.queue.messages.map((m) => (JSON.parse(m.body) as ShardMessage).last)).toEqual([false, false, false, true]);
    const actions = await p.drain();
    expect(actions.filter((a) => a === 'fired')).toHaveLength(4);
    // Due 1,030 s and 10,830 s after scheduling, lead 20 s: ceil(1,010 / 900) = 2 sends and
    // ceil(10,810 / 900) = 13 sends, so 1 + 12 re-delays (the last one a short 10 s hop).
    expect(hopsFor(1_030_000, 20_000) - 1 + hopsFor(10_830_000, 20_000) - 1).toBe(13);
    expect(actions.filter((a) => a === 'deferred')).toHaveLength(13);
    expect(p.target.sent.map((s) => Number((s.atNs - (S + 30n * SEC)) / MS))).toEqual(offsets);
    const collected = await collectRun('run-1', 'A', p);
    expect(collected.status).toBe('complete');
    expect(collected.manifest).toMatchObject({ scheduled: 5, succeeded: 5, failed: 0, dropped: 0, balanced: true });
    const records = p.store
      .text('runs/run-1/A/profile_export.jsonl')!
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records.map((r) => r.metadata.session_num)).toEqual([0, 1, 2, 3, 4]);
    expect(records.every((r) => r.capture_replay.schedule_lag_ms === 0)).toBe(true);
    expect(p.store.text('runs/run-1/A/profile_export_aiperf.json')).toContain('"request_latency"');
  });

  it('is pending until every shard has reported', async () => {
    const p = pipeline();
    await schedule(p, [req(0, 0), req(1, 5000)]);
    expect((await collectRun('run-1', 'A', p)).status).toBe('pending');
    expect((await collectRun('other-run', 'A', p)).status).toBe('unknown-run');
  });

  it('schedules nothing twice when the same capture file event comes again', async () => {
    const p = pipeline();
    await schedule(p, [req(0, 0), req(1, 5000)]);
    const sent = p.queue.messages.length;
    expect(await schedule(p, [req(0, 0), req(1, 5000)])).toEqual({ status: 'duplicate', shards: 0, messages: 0 });
    expect(p.queue.messages).toHaveLength(sent);
  });

  it('fires a shard once when its message is delivered twice', async () => {
    const p = pipeline();
    await schedule(p, [req(0, 0), req(1, 100)]);
    const [message] = p.queue.messages;
    p.queue.messages.push({ ...message! }); // SQS at-least-once
    const actions = await p.drain();
    expect(actions.sort()).toEqual(['duplicate', 'fired']);
    expect(p.target.sent).toHaveLength(2);
  });

  it('counts the requests of a worker that died mid-shard as lost after the deadline, and does not hang', async () => {
    const p = pipeline();
    await schedule(p, [req(0, 0), req(1, 100), req(2, 2000)]);
    let crashes = 0;
    await p.drain(async (body) => {
      const message = JSON.parse(body) as ShardMessage;
      if (message.shardId === '0-0') {
        crashes++;
        return handleShard(body, {
          ...p.deps,
          fire: async () => {
            throw new Error('Lambda timed out');
          },
        }).catch(() => ({ action: 'crashed' }));
      }
      return handleShard(body, p.deps);
    });
    expect(crashes).toBe(1);
    expect(p.store.text(claimKey('run-1', 'A', '0-0'))).not.toBeNull();
    expect(p.store.text(resultsKey('run-1', 'A', '0-0'))).toBeNull();
    // A redelivery finds the claim without results: the claimant died after firing (the
    // requests may have gone out), so nothing is fired again and its requests are recorded
    // as lost now, not left for the deadline.
    const redelivered = JSON.stringify({
      v: 1,
      kind: 'shard',
      runId: 'run-1',
      target: 'A',
      shardId: '0-0',
      startNs: String(S + 30n * SEC),
      firstDueNs: String(S + 30n * SEC),
      hops: 0,
      requests: [toWire(req(0, 0), null), toWire(req(1, 100), null)],
    });
    const sentBefore = p.target.sent.length;
    // While the claim is younger than the fire timeout its worker may still be firing (SQS
    // can deliver a duplicate at once): nothing is written, or its real results would lose.
    expect((await handleShard(redelivered, p.deps)).action).toBe('duplicate');
    expect(p.store.text(resultsKey('run-1', 'A', '0-0'))).toBeNull();
    p.clock.advanceTo(p.clock.nowNs() + 900_001n * MS);
    expect((await handleShard(redelivered, p.deps)).action).toBe('lost-after-claim');
    expect(p.target.sent.length).toBe(sentBefore);
    // A further redelivery finds the results: a plain duplicate.
    expect((await handleShard(redelivered, p.deps)).action).toBe('duplicate');
    const collected = await collectRun('run-1', 'A', p);
    expect(collected).toMatchObject({ status: 'complete', missing: [] });
    expect(collected.manifest).toMatchObject({
      scheduled: 3,
      succeeded: 1,
      dropped: 2,
      droppedByReason: { lost: 2 },
      balanced: true,
    });
  });

  it('counts a shard that never reported as lost at the deadline, and does not hang', async () => {
    const p = pipeline();
    await schedule(p, [req(0, 0), req(1, 100), req(2, 2000)]);
    await p.drain(async (body) => {
      const message = JSON.parse(body) as ShardMessage;
      return message.shardId === '0-0' ? { action: 'swallowed' } : handleShard(body, p.deps);
    });
    expect((await collectRun('run-1', 'A', p)).status).toBe('pending');
    p.clock.advanceTo(S + 30n * SEC + 2000n * MS + 60_001n * MS);
    const collected = await collectRun('run-1', 'A', p);
    expect(collected).toMatchObject({ status: 'deadline', missing: ['0-0'] });
    expect(collected.manifest).toMatchObject({
      scheduled: 3,
      succeeded: 1,
      dropped: 2,
      droppedByReason: { lost: 2 },
      balanced: true,
    });
  });

  it('drops a late shard by policy and counts it', async () => {
    const p = pipeline({ lateDrop: 1000 });
    await schedule(p, [req(0, 0), req(1, 100)]);
    const [message] = p.queue.messages.splice(0);
    p.clock.advanceTo(S + 30n * SEC + 5n * SEC); // SQS or a cold start held it 5 s past due
    expect((await handleShard(message!.body, p.deps)).counts).toMatchObject({
      fired: 0,
      dropped: 2,
      dropReasons: { late_beyond_tolerance: 2 },
    });
    const collected = await collectRun('run-1', 'A', p);
    expect(collected.manifest).toMatchObject({
      scheduled: 2,
      dropped: 2,
      droppedByReason: { late_beyond_tolerance: 2 },
      balanced: true,
    });
  });

  it('records incompatible requests as dropped at scheduling, per target', async () => {
    const p = pipeline();
    const csv = { ...req(1, 50), contentType: 'text/csv' };
    await dispatchRun({
      runId: 'run-2',
      plan: plan([req(0, 0)], [{ request: csv, reason: 'unsupported_content_type', detail: 'csv' }]),
      targets: ['A', 'B'],
      startNs: S + 30n * SEC,
      leadMs: 20_000,
      graceMs: 1000,
      inputConfig: null,
      notScheduledByReason: { duplicate: 1 },
      store: p.store,
      queue: p.queue,
      clock: p.clock,
    });
    expect(p.queue.messages).toHaveLength(2); // one shard, two targets
    await p.drain();
    for (const t of ['A', 'B']) {
      expect((await collectRun('run-2', t, p)).manifest).toMatchObject({
        scheduled: 2,
        succeeded: 1,
        droppedByReason: { unsupported_content_type: 1 },
        notScheduledByReason: { duplicate: 1 },
        balanced: true,
      });
    }
  });

  it('counts a request once even if its results were written twice', async () => {
    const p = pipeline();
    await schedule(p, [req(0, 0)]);
    await p.drain();
    const key = resultsKey('run-1', 'A', '0-0');
    const line = p.store.text(key)!;
    await p.store.put(key, line + line);
    expect((await collectRun('run-1', 'A', p)).manifest).toMatchObject({ scheduled: 1, succeeded: 1, balanced: true });
  });

  it('writes interim results while a long run is under way, then the final ones at the deadline', async () => {
    const p = pipeline();
    const result = await schedule(p, [req(0, 0), req(1, 1_200_000)]); // the second is due 20 minutes later
    if (result.status !== 'scheduled') throw new Error('not scheduled');
    const collectQueue = new MemoryQueue(() => p.clock.nowNs());
    await collectQueue.sendBatch([collectMessage('run-1', 'A', result.deadlineNs)]);
    // Fire what is due in the first 15 minutes only.
    for (let next = p.queue.nextDueNs(); next !== null && next < S + 900n * SEC; next = p.queue.nextDueNs()) {
      p.clock.advanceTo(next);
      for (const m of p.queue.takeDue(p.clock.nowNs())) await handleShard(m.body, p.deps);
    }
    const hop = collectQueue.takeDue(p.clock.nowNs() + 900n * SEC)[0]!;
    p.clock.advanceTo(S + 900n * SEC);
    expect((await handleCollect(hop.body, { store: p.store, queue: collectQueue, clock: p.clock })).action).toBe(
      'interim',
    );
    const interim = JSON.parse(p.store.text('runs/run-1/A/interim/run_manifest.json')!);
    expect(interim).toMatchObject({ interim: true, succeeded: 1, pendingShards: 1, pendingRequests: 1 });
    expect(p.store.text('runs/run-1/A/run_manifest.json')).toBeNull();
    await p.drain();
    p.clock.advanceTo(result.deadlineNs + 1n);
    for (const m of collectQueue.takeDue(p.clock.nowNs()))
      await handleCollect(m.body, { store: p.store, queue: collectQueue, clock: p.clock });
    expect(JSON.parse(p.store.text('runs/run-1/A/run_manifest.json')!)).toMatchObject({
      scheduled: 2,
      succeeded: 2,
      balanced: true,
    });
  });

  it('mirror mode: rolls every finalised run of a capture hour up into hours/<hour>/', async () => {
    const p = pipeline();
    for (const [runId, offsets] of [
      ['mirror-a', [0, 100]],
      ['mirror-b', [50, 2000, 2100]],
    ] as const) {
      await schedule(
        p,
        offsets.map((o, i) => req(i, o)),
        { runId, hour: '2026-04-29T00' },
      );
    }
    await p.drain();
    expect((await collectRun('mirror-a', 'A', p)).status).toBe('complete');
    const partial = JSON.parse(p.store.text('hours/2026-04-29T00/A/run_manifest.json')!);
    expect(partial).toMatchObject({ scheduled: 2, runs: ['mirror-a'] });
    await collectRun('mirror-b', 'A', p);
    await collectRun('mirror-b', 'A', p); // a second finalisation changes nothing
    const hour = JSON.parse(p.store.text('hours/2026-04-29T00/A/run_manifest.json')!);
    expect(hour).toMatchObject({ scheduled: 5, succeeded: 5, balanced: true, runs: ['mirror-a', 'mirror-b'] });
    const lines = p.store.text('hours/2026-04-29T00/A/profile_export.jsonl')!.trim().split('\n');
    const records = lines.map((l) => JSON.parse(l));
    expect(records.map((r) => r.metadata.session_num)).toEqual([0, 1, 2, 3, 4]);
    // Renumbered by scheduled time across the two files: a0 (0 ms), b0 (50), a1 (100), b1, b2.
    expect(records.map((r) => r.capture_replay.capture_event_id)).toEqual(['ev-0', 'ev-0', 'ev-1', 'ev-1', 'ev-2']);
    // Exact ns are exact integers in the file; read them as text, not as floats.
    const scheduled = lines.map((l) => BigInt(/"scheduled_ns":(\d+)/.exec(l)![1]!));
    expect(scheduled.map((ns) => Number(ns - (S + 30n * SEC)) / 1e6)).toEqual([0, 50, 100, 2000, 2100]);
    expect(p.store.text('runs/mirror-a/A/run_manifest.json')).not.toBeNull(); // per-file results stay
  });

  it('rejects a malformed message as permanent', async () => {
    const p = pipeline();
    await expect(handleShard('{"v":1,"kind":"shard"}', p.deps)).rejects.toBeInstanceOf(PermanentError);
  });

  it('a message still early re-delays itself instead of firing', () => {
    expect(stillEarly(S + 60n * SEC, S, 20_000)).toBe(true);
    expect(stillEarly(S + 20n * SEC, S, 20_000)).toBe(false);
  });
});
