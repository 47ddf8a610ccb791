/**
 * The collector's batch, coalesced (lambdas/core/pipeline/collect-batch.ts and the handler over
 * it), on the memory store: one look per run and target whatever the number of its records,
 * what the look does with a deadline message among them (due, early by less than a second,
 * not yet due), one analysis per run, and every record's outcome: a malformed one rejected
 * alone, an AWS error failing its group's records only, a failed analysis failing the records
 * that asked for it. Store calls are counted, so the old record-by-record collector fails here.
 */
import type { Context, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { BUNDLED_CHART_ASSETS } from '../../../lambdas/adapters/bundled-chart-assets';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { MemoryQueue } from '../../../lambdas/adapters/local/memory-queue';
import { collectBatch, type CollectOutcome } from '../../../lambdas/core/pipeline/collect-batch';
import { collectMessage, collectRun, lookPlan } from '../../../lambdas/core/pipeline/collect';
import { resultsPrefix } from '../../../lambdas/core/pipeline/keys';
import { analyseRunIfFinal } from '../../../lambdas/core/pipeline/run-analysis';
import { makeCollectHandler } from '../../../lambdas/handlers/collect';
import type { Log } from '../../../lambdas/ports';
import type { Deps } from '../../../lambdas/runtime/deps';
import { MS, START, writeRun } from '../../support/scheduled-run';
import { VirtualClock } from '../../support/virtual-clock';

const DEADLINE = START + 3_600_000n * MS; // writeRun's
const PAST_DEADLINE = DEADLINE + 1000n * MS;

/** The memory store, its calls counted, and S3 made to fail on a chosen prefix. */
class CountingStore extends MemoryObjectStore {
  readonly calls = { get: 0, put: 0, list: 0 };
  failPrefix: string | null = null;

  private check(key: string): void {
    if (this.failPrefix !== null && key.startsWith(this.failPrefix))
      throw Object.assign(new Error('ServiceUnavailable: S3 is down'), { name: 'ServiceUnavailable' });
  }

  override async get(key: string) {
    this.calls.get++;
    this.check(key);
    return super.get(key);
  }

  override async getVersioned(key: string) {
    this.calls.get++;
    this.check(key);
    return super.getVersioned(key);
  }

  override async put(key: string, body: string | Uint8Array, contentType?: string) {
    this.calls.put++;
    this.check(key);
    return super.put(key, body, contentType);
  }

  override async putIfMatch(key: string, body: string | Uint8Array, etag: string | null, contentType?: string) {
    this.calls.put++;
    this.check(key);
    return super.putIfMatch(key, body, etag, contentType);
  }

  override async list(prefix: string) {
    this.calls.list++;
    this.check(prefix);
    return super.list(prefix);
  }
}

function recordingLog(): Log & { lines: { level: string; message: string; fields: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (message: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, message, fields });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function setUp(nowNs: bigint) {
  const store = new CountingStore();
  const clock = new VirtualClock(nowNs);
  const queue = new MemoryQueue(() => clock.nowNs());
  const log = recordingLog();
  const analysed: string[] = [];
  const analyse = async (runId: string) => {
    analysed.push(
      (
        await analyseRunIfFinal(runId, {
          store,
          clock,
          notifier: null,
          resultsBucket: 'results',
          chartAssets: BUNDLED_CHART_ASSETS,
        })
      ).status,
    );
  };
  return { store, clock, queue, log, analysed, deps: { store, clock, queue, log, analyse } };
}

const lane = (runId: string, target: string, id: string) => ({ id, body: collectMessage(runId, target, 0n).body });
const deadlineMessage = (runId: string, target: string, id: string) => ({
  id,
  body: collectMessage(runId, target, DEADLINE).body,
});
const kinds = (outcomes: Map<string, CollectOutcome>) =>
  Object.fromEntries([...outcomes].map(([id, o]) => [id, o.kind === 'done' ? o.action : o.kind]));

describe('a batch of collect messages, coalesced', () => {
  it('looks once at a target whatever the number of its lane messages, and analyses the run once', async () => {
    const { store, deps, analysed } = setUp(START + 100_000n * MS);
    await writeRun(store, 'r1', { requests: 100, shardSize: 25 });
    const single = new CountingStore();
    await writeRun(single, 'r1', { requests: 100, shardSize: 25 });
    single.calls.get = single.calls.put = single.calls.list = 0;
    store.calls.get = store.calls.put = store.calls.list = 0;

    const outcomes = await collectBatch(
      [
        lane('r1', 'A', 'a1'),
        lane('r1', 'B', 'b1'),
        lane('r1', 'A', 'a2'),
        lane('r1', 'B', 'b2'),
        lane('r1', 'A', 'a3'),
        lane('r1', 'B', 'b3'),
      ],
      deps,
    );
    expect(kinds(outcomes)).toEqual({
      a1: 'complete',
      a2: 'complete',
      a3: 'complete',
      b1: 'complete',
      b2: 'complete',
      b3: 'complete',
    });
    expect(analysed).toEqual(['analysed']);
    // The same calls as one collectRun per target and one analysis, made by hand.
    const clock = new VirtualClock(START + 100_000n * MS);
    await collectRun('r1', 'A', { store: single, clock });
    await collectRun('r1', 'B', { store: single, clock });
    await analyseRunIfFinal('r1', {
      store: single,
      clock,
      notifier: null,
      resultsBucket: 'results',
      chartAssets: BUNDLED_CHART_ASSETS,
    });
    expect(store.calls).toEqual(single.calls);
    expect(store.calls.list).toBe(4); // each target's results listed by its look and by the analysis
  });

  it('finalises with the missing shards counted lost when a deadline message has arrived among lane messages', async () => {
    const { store, deps, analysed } = setUp(PAST_DEADLINE);
    await writeRun(store, 'r1', { requests: 100, shardSize: 25, unreported: [{ target: 'B', shardId: '2-0' }] });
    const outcomes = await collectBatch(
      [lane('r1', 'B', 'b1'), deadlineMessage('r1', 'B', 'bd'), lane('r1', 'B', 'b2'), lane('r1', 'A', 'a1')],
      deps,
    );
    expect(kinds(outcomes)).toEqual({ b1: 'deadline', bd: 'deadline', b2: 'deadline', a1: 'complete' });
    expect(JSON.parse(store.text('runs/r1/B/run_manifest.json') as string)).toMatchObject({
      scheduled: 100,
      droppedByReason: { lost: 25 },
      balanced: true,
    });
    expect(analysed).toEqual(['analysed']);
  });

  it('a deadline message up to a second early (SQS delays are whole seconds) waits for the deadline, then finalises', async () => {
    const { store, deps, clock } = setUp(DEADLINE - 400n * MS);
    await writeRun(store, 'r1', { requests: 100, shardSize: 25, unreported: [{ target: 'B', shardId: '2-0' }] });
    const outcomes = await collectBatch([deadlineMessage('r1', 'B', 'bd')], deps);
    expect(kinds(outcomes)).toEqual({ bd: 'deadline' });
    expect(clock.nowNs()).toBeGreaterThan(DEADLINE);
    expect(JSON.parse(store.text('runs/r1/B/run_manifest.json') as string)).toMatchObject({
      droppedByReason: { lost: 25 },
    });
  });

  it(
    'sends a deadline message not yet due on once (copies of it are one chain), writes interim results, and ' +
      'does not analyse',
    async () => {
      const { store, deps, queue, analysed } = setUp(START + 100_000n * MS);
      await writeRun(store, 'r1', { requests: 100, shardSize: 25, unreported: [{ target: 'A', shardId: '3-0' }] });
      const outcomes = await collectBatch(
        [deadlineMessage('r1', 'A', 'd1'), lane('r1', 'A', 'a1'), deadlineMessage('r1', 'A', 'd2')],
        deps,
      );
      expect(kinds(outcomes)).toEqual({ d1: 'interim', a1: 'interim', d2: 'interim' });
      expect(queue.messages).toHaveLength(1);
      expect(JSON.parse(queue.messages[0]!.body)).toMatchObject({
        runId: 'r1',
        target: 'A',
        notBeforeNs: DEADLINE.toString(),
      });
      expect(queue.messages[0]!.delaySeconds).toBe(900);
      expect(JSON.parse(store.text('runs/r1/A/interim/run_manifest.json') as string)).toMatchObject({
        interim: true,
        pendingShards: 1,
        pendingRequests: 25,
      });
      expect(store.text('runs/r1/A/run_manifest.json')).toBeNull();
      expect(analysed).toEqual([]);
    },
  );

  it('rejects a malformed record alone, logged, and handles the others', async () => {
    const { store, deps, log } = setUp(START + 100_000n * MS);
    await writeRun(store, 'r1', { requests: 50 });
    const outcomes = await collectBatch(
      [
        lane('r1', 'A', 'a1'),
        { id: 'bad', body: '{"v":1,"kind":"collect","runId":"r1"}' },
        { id: 'junk', body: 'not json' },
        lane('r1', 'A', 'a2'),
      ],
      deps,
    );
    expect(kinds(outcomes)).toEqual({ a1: 'complete', a2: 'complete', bad: 'rejected', junk: 'rejected' });
    const rejected = log.lines.filter((l) => l.message === 'collect message rejected');
    expect(rejected.map((l) => l.fields.messageId)).toEqual(['bad', 'junk']);
    expect(String(rejected[1]!.fields.reason)).toMatch(/not a collect message: body is not JSON/);
  });

  it("an AWS error fails its group's records only; the other targets are done", async () => {
    const { store, deps } = setUp(START + 100_000n * MS);
    await writeRun(store, 'r1', { requests: 50 });
    store.failPrefix = resultsPrefix('r1', 'B');
    const outcomes = await collectBatch(
      [lane('r1', 'A', 'a1'), lane('r1', 'B', 'b1'), lane('r1', 'B', 'b2'), lane('r1', 'A', 'a2')],
      deps,
    );
    expect(kinds(outcomes)).toEqual({ a1: 'complete', a2: 'complete', b1: 'failed', b2: 'failed' });
    expect((outcomes.get('b1') as { error: Error }).error.message).toMatch(/ServiceUnavailable/);
  });

  it('a failed analysis fails the records of the groups that asked for it, not the others', async () => {
    const { store, deps } = setUp(START + 100_000n * MS);
    await writeRun(store, 'r1', { requests: 100, shardSize: 25, unreported: [{ target: 'B', shardId: '1-0' }] });
    const calls: string[] = [];
    const analyse = async (runId: string) => {
      calls.push(runId);
      throw new Error('ServiceUnavailable: S3 is down');
    };
    const outcomes = await collectBatch([lane('r1', 'A', 'a1'), lane('r1', 'B', 'b1'), lane('r1', 'A', 'a2')], {
      ...deps,
      analyse,
    });
    // A finalised and asked; B is pending (a shard out, before the deadline) and did not.
    expect(kinds(outcomes)).toEqual({ a1: 'failed', a2: 'failed', b1: 'pending' });
    expect(calls).toEqual(['r1']);
  });
});

describe('the collect handler', () => {
  const context = { functionName: 'collect', getRemainingTimeInMillis: () => 300_000 } as unknown as Context;
  const event = (records: { id: string; body: string }[]): SQSEvent => ({
    Records: records.map((r) => ({
      messageId: r.id,
      receiptHandle: r.id,
      body: r.body,
      attributes: {} as never,
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:collect',
      awsRegion: 'us-east-1',
    })),
  });

  function handlerOn(store: CountingStore, clock: VirtualClock) {
    const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
    const deps = {
      config: { resultsBucket: 'results' },
      store,
      clock,
      collectQueue: new MemoryQueue(() => clock.nowNs()),
      notifier: null,
      logger,
    } as unknown as Deps;
    return makeCollectHandler(() => deps);
  }

  it('reads and writes for three lane messages of a target what one message alone does', async () => {
    const clock = new VirtualClock(START + 100_000n * MS);
    const one = new CountingStore();
    const three = new CountingStore();
    for (const store of [one, three]) {
      await writeRun(store, 'r1', { requests: 100, shardSize: 25 });
      await collectRun('r1', 'B', { store, clock }); // B final already: A's look makes the run final
      store.calls.get = store.calls.put = store.calls.list = 0;
    }
    expect(await handlerOn(one, clock)(event([lane('r1', 'A', 'a1')]), context)).toEqual({ batchItemFailures: [] });
    expect(
      await handlerOn(three, clock)(
        event([lane('r1', 'A', 'a1'), lane('r1', 'A', 'a2'), lane('r1', 'A', 'a3')]),
        context,
      ),
    ).toEqual({ batchItemFailures: [] });
    expect(three.calls).toEqual(one.calls);
    expect(three.text('runs/r1/comparison.json')).not.toBeNull();
  });

  it("reports the failed group's records as batch item failures, not the malformed one", async () => {
    const clock = new VirtualClock(START + 100_000n * MS);
    const store = new CountingStore();
    await writeRun(store, 'r1', { requests: 50 });
    store.failPrefix = resultsPrefix('r1', 'B');
    const response = await handlerOn(store, clock)(
      event([lane('r1', 'A', 'a1'), lane('r1', 'B', 'b1'), { id: 'bad', body: '[]' }, lane('r1', 'B', 'b2')]),
      context,
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'b1' }, { itemIdentifier: 'b2' }] });
  });
});

describe("lookPlan: what a target's messages ask of one look", () => {
  const S = 1_000_000_000n;
  it('sends each distinct not-yet-due time on once, and takes the latest due time', () => {
    const now = 100n * S;
    const plan = lookPlan([0n, now + 5n * S, now + 5n * S, now + 30n * S, now - S, now + S / 2n], (t) => t, now);
    expect(plan.hops.map((h) => [h.notBeforeNs, h.delaySeconds])).toEqual([
      [now + 5n * S, 5],
      [now + 30n * S, 30],
    ]);
    // Under a second ahead is due (SQS delays are whole seconds): the look waits for it.
    expect(plan.dueAtNs).toBe(now + S / 2n);
  });
  it('has no due time when every message is still a second or more away', () => {
    expect(lookPlan([10n * S], (t) => t, 0n)).toEqual({
      hops: [{ message: 10n * S, notBeforeNs: 10n * S, delaySeconds: 10 }],
      dueAtNs: null,
    });
  });
});
