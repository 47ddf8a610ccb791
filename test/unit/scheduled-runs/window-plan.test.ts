/**
 * The plan function (scheduled A/B windows) through its handler, against memory stores and
 * queues and an in-memory capture bucket: which files it lists and reads, which requests it
 * schedules to each target and when, what it records, and what it refuses.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { MemoryQueue } from '../../../lambdas/adapters/local/memory-queue';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { INGEST_SHARD, runRecordSchema } from '../../../lambdas/core/pipeline/common';
import { runPrefix, runRecordKey, runStartKey } from '../../../lambdas/core/pipeline/keys';
import { shardMessageSchema, type ShardMessage } from '../../../lambdas/core/pipeline/shards';
import { scheduledRunInfoSchema, windowRunId } from '../../../lambdas/core/scheduled-runs/contract';
import type { recordEmptyRun } from '../../../lambdas/core/scheduled-runs/history';
import { discoverCaptureFolders } from '../../../lambdas/core/scheduled-runs/window-plan';
import { eventIdHash, sampleKeeps } from '../../../lambdas/core/plan/plan';
import { makePlanHandler, windowFilesKey, type PlanDeps } from '../../../lambdas/handlers/plan';
import { ENV, parseRuntimeConfig } from '../../../lambdas/runtime/config';
import { MemoryCaptureObjects } from '../../support/memory-captures';
import { VirtualClock } from '../../support/virtual-clock';

const NOW_NS = BigInt(Date.parse('2026-04-29T02:00:00Z')) * 1_000_000n;
/** Fired 2026-04-29 02:00 UTC, window "yesterday 10:15-11:45": 1.5 hours of 2026-04-28. */
const FIRED = '2026-04-29T02:00:00Z';
const WINDOW_START = Date.parse('2026-04-28T10:15:00Z');
const WINDOW_END = Date.parse('2026-04-28T11:45:00Z');
const LEAD_MS = 20_000;
const TIMEOUT_MS = 60_000;

type Line = { id: string; at: number; data?: string; type?: string };

const lineOf = ({ id, at, data, type }: Line) =>
  JSON.stringify({
    captureData: {
      endpointInput: {
        observedContentType: type ?? 'application/json',
        mode: 'INPUT',
        data: data ?? JSON.stringify({ messages: [{ role: 'user', content: `hello ${id}` }] }),
        encoding: type === 'text/csv' ? 'CSV' : 'JSON',
      },
    },
    eventMetadata: { eventId: id, inferenceTime: new Date(at).toISOString().replace('.000Z', 'Z') },
    eventVersion: '0',
  });
const fileOf = (lines: Line[]) => lines.map(lineOf).join('\n') + '\n';
const minute = (iso: string, n: number) => Date.parse(iso) + n * 60_000;

/**
 * Data Capture under `datacapture/`: endpoint `ep-a` (variant AllTraffic) and `ep-b`
 * (variant v2), one record a minute from 10:00 to 11:59 on 2026-04-28 in two hour
 * partitions (two files each), and a file written in the 12:00 partition holding a
 * straggler from 11:30:30 (in the window) and one from 12:00:10 (not).
 */
function bucket(endpoint = 'ep-a', variant = 'AllTraffic'): { captures: MemoryCaptureObjects; expected: Line[] } {
  const captures = new MemoryCaptureObjects();
  const all: Line[] = [];
  const base = `datacapture/${endpoint}/${variant}/2026/04/28/`;
  for (const [hour, half, from] of [
    ['10', 'a', 0],
    ['10', 'b', 30],
    ['11', 'a', 60],
    ['11', 'b', 90],
  ] as const) {
    const lines = Array.from({ length: 30 }, (_, k) => ({
      id: `${endpoint}-${from + k}`,
      at: minute('2026-04-28T10:00:00Z', from + k),
    }));
    all.push(...lines);
    captures.put(`${base}${hour}/${hour}-${half}-file.jsonl`, fileOf(lines));
  }
  const stragglers = [
    { id: `${endpoint}-late-in`, at: Date.parse('2026-04-28T11:30:30Z') },
    { id: `${endpoint}-late-out`, at: Date.parse('2026-04-28T12:00:10Z') },
  ];
  all.push(...stragglers);
  captures.put(`${base}12/00-file.jsonl`, fileOf(stragglers));
  captures.put(`${base}11/notes.txt`, 'not a capture');
  const expected = all.filter((l) => l.at >= WINDOW_START && l.at < WINDOW_END).sort((a, b) => a.at - b.at);
  return { captures, expected };
}

interface Setup {
  handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
  store: MemoryObjectStore;
  replay: MemoryQueue;
  collect: MemoryQueue;
  clock: VirtualClock;
  captures: MemoryCaptureObjects;
  empties: Parameters<typeof recordEmptyRun>[0][];
  logs: { level: string; message: string; fields: Record<string, unknown> }[];
}

function setup(
  schedule: Record<string, unknown>,
  captures: MemoryCaptureObjects,
  env: Record<string, string> = {},
): Setup {
  const clock = new VirtualClock(NOW_NS);
  const store = new MemoryObjectStore();
  const replay = new MemoryQueue(() => clock.nowNs());
  const collect = new MemoryQueue(() => clock.nowNs());
  const config = parseRuntimeConfig({
    [ENV.resultsBucket]: 'results',
    [ENV.replayQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/replay',
    [ENV.collectQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/collect',
    [ENV.targets]: JSON.stringify([
      { name: 'A', url: 'http://a.example' },
      { name: 'B', url: 'http://b.example' },
    ]),
    [ENV.leadMs]: String(LEAD_MS),
    [ENV.requestTimeoutMs]: String(TIMEOUT_MS),
    [ENV.schedules]: JSON.stringify([
      {
        name: 'nightly',
        expression: 'cron(0 2 * * ? *)',
        window: { daysAgo: 1, from: '10:15', to: '11:45' },
        targets: ['A', 'B'],
        ...schedule,
      },
    ]),
    [ENV.captureBucket]: 'captures',
    [ENV.capturePrefix]: 'datacapture/',
    ...env,
  });
  const empties: Setup['empties'] = [];
  const logs: Setup['logs'] = [];
  const log = (level: string) => (message: unknown, fields?: unknown) =>
    void logs.push({ level, message: String(message), fields: (fields ?? {}) as Record<string, unknown> });
  const deps: PlanDeps = {
    config,
    store,
    replayQueue: replay,
    collectQueue: collect,
    clock,
    logger: { info: log('info'), warn: log('warn'), error: log('error') } as unknown as PlanDeps['logger'],
    notifier: null,
    captures,
    recordEmptyRun: async (args) => void empties.push(args),
  };
  return { handler: makePlanHandler(() => deps), store, replay, collect, clock, captures, empties, logs };
}

const context = {} as Context;
const event = (...bodies: string[]): SQSEvent => ({
  Records: bodies.map((body, i) => ({ messageId: `m${i}`, body }) as SQSEvent['Records'][number]),
});
const planMessage = (schedule = 'nightly', scheduledTime = FIRED) =>
  JSON.stringify({ v: 1, kind: 'window', schedule, scheduledTime });

function shardsOf(queue: MemoryQueue): ShardMessage[] {
  return queue.messages.map((m) => shardMessageSchema.parse(JSON.parse(m.body)));
}

/** Each target's requests in due order: [eventId, due epoch ns]. */
function scheduledByTarget(messages: ShardMessage[]): Map<string, { eventId: string; dueNs: bigint; index: number }[]> {
  const out = new Map<string, { eventId: string; dueNs: bigint; index: number }[]>();
  for (const m of messages) {
    const list = out.get(m.target) ?? [];
    for (const r of m.requests)
      list.push({
        eventId: r.eventId,
        dueNs: BigInt(m.startNs) + BigInt(Math.round(r.offsetMs * 1e6)),
        index: r.index,
      });
    out.set(m.target, list);
  }
  for (const list of out.values()) list.sort((a, b) => a.index - b.index);
  return out;
}

/** The parts of the ingest report the tests read. */
type Report = {
  totals: Record<string, number>;
  window: Record<string, unknown>;
  captures: string[];
  skippedFiles: { file: string; reason: string }[];
};

const runRecord = (store: MemoryObjectStore, runId: string) =>
  runRecordSchema.parse(JSON.parse(store.text(runRecordKey(runId)) as string));

describe('plan function: one window run per scheduled time', () => {
  it(
    "schedules exactly the window's requests, read across two hour partitions and the hour after, to A and B " +
      'in the same due order',
    async () => {
      const { captures, expected } = bucket();
      const s = setup({}, captures);
      const out = await s.handler(event(planMessage()), context);
      expect(out.batchItemFailures).toEqual([]);
      const runId = windowRunId('nightly', FIRED);
      // 10:15-11:44 at one a minute (90) and the straggler written in the 12:00 partition.
      expect(expected).toHaveLength(91);
      const byTarget = scheduledByTarget(shardsOf(s.replay));
      expect([...byTarget.keys()].sort()).toEqual(['A', 'B']);
      for (const target of ['A', 'B']) {
        const list = byTarget.get(target) ?? [];
        expect(list.map((r) => r.eventId)).toEqual(expected.map((l) => l.id));
        expect(list.map((r) => r.index)).toEqual(expected.map((_, i) => i));
      }
      // Same instants for both (parallel), on the captured pace, starting `lead` from now.
      const a = byTarget.get('A') ?? [];
      const b = byTarget.get('B') ?? [];
      expect(b.map((r) => r.dueNs)).toEqual(a.map((r) => r.dueNs));
      expect(a[0]?.dueNs).toBe(NOW_NS + BigInt(LEAD_MS) * 1_000_000n);
      expect(a.map((r) => Number(r.dueNs - (a[0] as { dueNs: bigint }).dueNs) / 1e6)).toEqual(
        expected.map((l) => l.at - (expected[0] as Line).at),
      );

      // Listed: the variant's 10, 11 and 12 partitions; read: the five .jsonl files, the note skipped.
      const base = 'datacapture/ep-a/AllTraffic/2026/04/28/';
      expect(s.captures.calls.listObjects).toEqual([`${base}10/`, `${base}11/`, `${base}12/`]);
      expect(s.captures.calls.open).toHaveLength(5);

      const record = runRecord(s.store, runId);
      const input = record.inputConfig as Record<string, unknown>;
      expect(input.mode).toBe('window');
      expect(input.tool).toBe('capture-replay');
      expect(input.captures).toEqual(
        [
          '10/10-a-file.jsonl',
          '10/10-b-file.jsonl',
          '11/11-a-file.jsonl',
          '11/11-b-file.jsonl',
          '12/00-file.jsonl',
        ].map((f) => `s3://captures/${base}${f}`),
      );
      expect(input.targets).toEqual([
        { name: 'A', url: 'http://a.example', path: '/v1/chat/completions' },
        { name: 'B', url: 'http://b.example', path: '/v1/chat/completions' },
      ]);
      expect(input).toMatchObject({ model_override: null, streaming: false, request_timeout_ms: TIMEOUT_MS });
      expect(scheduledRunInfoSchema.parse(input.schedule)).toEqual({
        name: 'nightly',
        scheduledTime: '2026-04-29T02:00:00.000Z',
        timezone: 'UTC',
        window: { start: '2026-04-28T10:15:00.000Z', end: '2026-04-28T11:45:00.000Z' },
        targets: ['A', 'B'],
        dispatch: 'parallel',
      });
      expect(record.notScheduledByReason).toEqual({});

      // The ingest report: every line of the files read counted; the window's own accounting.
      const report = JSON.parse(s.store.text(`${runPrefix(runId)}ingest_report.json`) as string) as Report;
      expect(report.totals).toMatchObject({ files: 5, accepted: 122, rejected: 0 });
      expect(report.window).toEqual({
        start: '2026-04-28T10:15:00.000Z',
        end: '2026-04-28T11:45:00.000Z',
        inWindow: 91,
        outsideWindow: 31,
        duplicates: 0,
        sampledOut: 0,
      });
      expect(report.captures).toEqual(input.captures);
      expect(report.skippedFiles).toEqual([{ file: `s3://captures/${base}11/notes.txt`, reason: 'not a .jsonl file' }]);

      // One deadline collect message per target.
      expect(s.collect.messages.map((m) => JSON.parse(m.body).target).sort()).toEqual(['A', 'B']);
      expect(s.empties).toEqual([]);
    },
  );

  it('sample keeps the same requests by event id; limit keeps the first N in due order', async () => {
    const { captures, expected } = bucket();
    const sample = 0.5;
    // The plan's own sampling rule (plan.ts rule 4), as the CLI's --sample: by event id.
    const kept = expected.filter((l) => sampleKeeps(eventIdHash(l.id), sample));
    expect(kept.length).toBeGreaterThan(20);
    expect(kept.length).toBeLessThan(71);
    const s1 = setup({ sample, limit: 20 }, captures);
    await s1.handler(event(planMessage()), context);
    const first = scheduledByTarget(shardsOf(s1.replay));
    expect(first.get('A')?.map((r) => r.eventId)).toEqual(kept.slice(0, 20).map((l) => l.id));
    expect(first.get('B')?.map((r) => r.eventId)).toEqual(kept.slice(0, 20).map((l) => l.id));
    const record = runRecord(s1.store, windowRunId('nightly', FIRED));
    expect(record.notScheduledByReason).toEqual({ sample: expected.length - kept.length, limit: kept.length - 20 });

    // Planned again from scratch (another store), without the limit: the same sampled requests.
    const s2 = setup({ sample }, captures);
    await s2.handler(event(planMessage()), context);
    expect(
      scheduledByTarget(shardsOf(s2.replay))
        .get('A')
        ?.map((r) => r.eventId),
    ).toEqual(kept.map((l) => l.id));
  });

  it(
    'a redelivered message schedules nothing twice; a retry after a crash mid-scheduling sends the same shards ' +
      'on the same timeline',
    async () => {
      const { captures } = bucket();
      const s = setup({}, captures);
      await s.handler(event(planMessage()), context);
      const firstMessages = s.replay.messages.map((m) => m.body);
      const opened = s.captures.calls.open.length;
      // Redelivered (same schedule and time, even written differently): the run record answers.
      s.clock.advanceTo(NOW_NS + 5_000_000_000n);
      const again = await s.handler(event(planMessage('nightly', '2026-04-29T02:00:00.000Z')), context);
      expect(again.batchItemFailures).toEqual([]);
      expect(s.replay.messages.map((m) => m.body)).toEqual(firstMessages);
      expect(s.collect.messages).toHaveLength(2);
      expect(s.captures.calls.open).toHaveLength(opened);
      expect(s.logs.some((l) => l.message === 'window run already scheduled')).toBe(true);

      // A crash after the shards were sent but before the run record: the retry must send the
      // same shards (ids, contents) with the same start, though a new capture file has
      // appeared in the window's partitions since: the first attempt's files are pinned.
      const runId = windowRunId('nightly', FIRED);
      s.store.objects.delete(runRecordKey(runId));
      expect(s.store.text(runStartKey(runId))).not.toBeNull();
      expect(s.store.text(windowFilesKey(runId))).not.toBeNull();
      captures.put(
        'datacapture/ep-a/AllTraffic/2026/04/28/11/99-new-file.jsonl',
        fileOf([{ id: 'arrived-later', at: Date.parse('2026-04-28T11:00:30Z') }]),
      );
      const before = s.replay.messages.length;
      await s.handler(event(planMessage()), context);
      const retried = s.replay.messages.slice(before).map((m) => m.body);
      expect(retried).toEqual(firstMessages);
      expect(runRecord(s.store, runId).startNs).toBe((NOW_NS + BigInt(LEAD_MS) * 1_000_000n).toString());
    },
  );

  it('sequential dispatch: B gets the whole schedule after A, starting after its last due time plus the request timeout', async () => {
    const { captures, expected } = bucket();
    const s = setup({ dispatch: 'sequential' }, captures);
    await s.handler(event(planMessage()), context);
    const byTarget = scheduledByTarget(shardsOf(s.replay));
    const a = byTarget.get('A') ?? [];
    const b = byTarget.get('B') ?? [];
    expect(b.map((r) => r.eventId)).toEqual(a.map((r) => r.eventId));
    const durationMs = (expected[expected.length - 1] as Line).at - (expected[0] as Line).at;
    const shiftNs = BigInt(durationMs + TIMEOUT_MS) * 1_000_000n;
    expect(b.map((r) => r.dueNs)).toEqual(a.map((r) => r.dueNs + shiftNs));
    expect((b[0] as { dueNs: bigint }).dueNs).toBeGreaterThan(
      (a[a.length - 1] as { dueNs: bigint }).dueNs + BigInt(TIMEOUT_MS - 1) * 1_000_000n,
    );
    const record = runRecord(s.store, windowRunId('nightly', FIRED));
    // The deadline covers B's last request: its start + duration + the grace.
    expect(BigInt(record.deadlineNs)).toBe(
      BigInt(record.startNs) + shiftNs + BigInt(durationMs + TIMEOUT_MS + 120_000) * 1_000_000n,
    );
    expect((record.inputConfig as Record<string, unknown>).start_offsets_ms).toEqual({
      A: 0,
      B: durationMs + TIMEOUT_MS,
    });
    // Every message of B is due after every message of A.
    const firstDues = (t: string) =>
      shardsOf(s.replay)
        .filter((m) => m.target === t)
        .map((m) => BigInt(m.firstDueNs));
    const lastOfA = firstDues('A').reduce((x, y) => (y > x ? y : x));
    expect(firstDues('B').every((due) => due > lastOfA)).toBe(true);
  });

  it(
    'targets of different kinds: the SageMaker endpoint takes every record, the chat target the chat ones, its ' +
      'drops counted at their due times',
    async () => {
      const captures = new MemoryCaptureObjects();
      const lines: Line[] = [
        { id: 'chat-1', at: Date.parse('2026-04-28T10:20:00Z') },
        { id: 'csv-2', at: Date.parse('2026-04-28T10:20:01Z'), type: 'text/csv', data: '1,2,3' },
        { id: 'chat-3', at: Date.parse('2026-04-28T10:20:02Z') },
      ];
      captures.put('datacapture/ep-a/AllTraffic/2026/04/28/10/f.jsonl', fileOf(lines));
      const s = setup({ targets: ['A', 'S'], dispatch: 'sequential' }, captures, {
        [ENV.targets]: JSON.stringify([
          { name: 'A', url: 'http://a.example' },
          { name: 'S', kind: 'sagemaker', endpointName: 'ep-b' },
        ]),
      });
      await s.handler(event(planMessage()), context);
      const byTarget = scheduledByTarget(shardsOf(s.replay));
      expect(byTarget.get('A')?.map((r) => [r.eventId, r.index])).toEqual([
        ['chat-1', 0],
        ['chat-3', 2],
      ]);
      expect(byTarget.get('S')?.map((r) => [r.eventId, r.index])).toEqual([
        ['chat-1', 0],
        ['csv-2', 1],
        ['chat-3', 2],
      ]);
      const runId = windowRunId('nightly', FIRED);
      const drops = (s.store.text(`work/${runId}/A/_results/${INGEST_SHARD}.jsonl`) ?? '')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { index: number; dropReason: string; scheduledNs: string });
      const record = runRecord(s.store, runId);
      expect(drops).toEqual([
        expect.objectContaining({
          index: 1,
          dropReason: 'unsupported_content_type',
          scheduledNs: (BigInt(record.startNs) + 1_000_000_000n).toString(),
        }),
      ]);
      // S, second in a sequential run, starts after A's last due time (2 s) plus the timeout.
      expect(byTarget.get('S')?.[0]?.dueNs).toBe(BigInt(record.startNs) + BigInt(2_000 + TIMEOUT_MS) * 1_000_000n);
      // Each waits for its own shards (one-second slots): A's hold 2 requests, S's 3.
      const sum = (list: { requests: number }[] | undefined) => (list ?? []).reduce((n, x) => n + x.requests, 0);
      expect(sum(record.targetShards?.A)).toBe(2);
      expect(sum(record.targetShards?.S)).toBe(3);
    },
  );

  it('an empty window is recorded as an empty run, not an error: no files, no records in the window, none the targets take', async () => {
    // No captures at all in the window's partitions.
    const none = setup({}, new MemoryCaptureObjects());
    expect((await none.handler(event(planMessage()), context)).batchItemFailures).toEqual([]);
    expect(none.empties.map((e) => e.reason)).toEqual(['no captures in the window']);
    expect(none.empties[0]).toMatchObject({
      runId: windowRunId('nightly', FIRED),
      resultsBucket: 'results',
      notifier: null,
    });
    expect(scheduledRunInfoSchema.parse(none.empties[0]?.info).window).toEqual({
      start: '2026-04-28T10:15:00.000Z',
      end: '2026-04-28T11:45:00.000Z',
    });
    expect(none.replay.messages).toEqual([]);
    expect(none.store.text(runRecordKey(windowRunId('nightly', FIRED)))).toBeNull();

    // Files in the partitions, records only outside the window.
    const outside = new MemoryCaptureObjects();
    outside.put(
      'datacapture/ep-a/AllTraffic/2026/04/28/10/f.jsonl',
      fileOf([{ id: 'early', at: Date.parse('2026-04-28T10:05:00Z') }]),
    );
    const o = setup({}, outside);
    await o.handler(event(planMessage()), context);
    expect(o.empties.map((e) => e.reason)).toEqual(['no captures in the window']);
    const report = JSON.parse(
      o.store.text(`${runPrefix(windowRunId('nightly', FIRED))}ingest_report.json`) as string,
    ) as Report;
    expect(report.window).toMatchObject({ inWindow: 0, outsideWindow: 1 });

    // Records in the window that no chat target takes (CSV).
    const csv = new MemoryCaptureObjects();
    csv.put(
      'datacapture/ep-a/AllTraffic/2026/04/28/10/f.jsonl',
      fileOf([{ id: 'csv', at: Date.parse('2026-04-28T10:20:00Z'), type: 'text/csv', data: '1,2,3' }]),
    );
    const c = setup({}, csv);
    await c.handler(event(planMessage()), context);
    expect(c.empties.map((e) => e.reason)).toEqual(['no requests in the window that the targets take']);
    expect(c.replay.messages).toEqual([]);
  });

  it('malformed messages and unknown schedules are logged and acknowledged, not retried', async () => {
    const { captures } = bucket();
    const s = setup({}, captures);
    const out = await s.handler(
      event(
        'not json',
        JSON.stringify({ v: 1, kind: 'window', schedule: 'nightly', scheduledTime: 'yesterday' }),
        JSON.stringify({ v: 2, kind: 'window', schedule: 'nightly', scheduledTime: FIRED }),
        planMessage('weekly'),
      ),
      context,
    );
    expect(out.batchItemFailures).toEqual([]);
    expect(s.replay.messages).toEqual([]);
    expect(s.logs.filter((l) => l.level === 'warn').map((l) => l.fields.reason)).toEqual([
      'not JSON',
      'scheduledTime: an ISO 8601 time',
      'v: Invalid input: expected 1',
    ]);
    expect(s.logs.filter((l) => l.level === 'error').map((l) => l.fields.reason)).toEqual([
      'no schedule named weekly in this deployment (nightly)',
    ]);
    expect(s.captures.calls.open).toEqual([]);
  });

  it('a schedule naming a target the deployment lacks is acknowledged with the reason; an AWS failure is retried', async () => {
    const { captures } = bucket();
    const s = setup({ targets: ['A', 'C'] }, captures);
    expect((await s.handler(event(planMessage()), context)).batchItemFailures).toEqual([]);
    expect(s.logs.find((l) => l.level === 'error')?.fields.reason).toMatch(
      /names target C, which is not one of the deployment's \(A, B\)/,
    );

    const failing = setup({}, captures);
    failing.store.putIfAbsent = async () => {
      throw new Error('SlowDown');
    };
    // The malformed one is acknowledged, the one that met the error is retried alone.
    expect((await failing.handler(event('not json', planMessage()), context)).batchItemFailures).toEqual([
      { itemIdentifier: 'm1' },
    ]);
  });
});

describe('discovering the Data Capture folders under the capture prefix', () => {
  const objects = new MemoryCaptureObjects();
  for (const key of [
    'dc/ep-a/AllTraffic/2026/04/28/10/f.jsonl',
    'dc/ep-a/canary/2026/04/28/10/f.jsonl',
    'dc/ep-b/AllTraffic/2026/04/28/10/f.jsonl',
    'dc/ep-b/stray/readme/x.txt',
  ])
    objects.put(key, '{}');

  it('from the root: endpoints, then variants; a folder without years is ignored, visibly', async () => {
    const { folders, ignored } = await discoverCaptureFolders(objects, 'dc', {});
    expect(folders).toEqual([
      { prefix: 'dc/ep-a/AllTraffic/', endpoint: 'ep-a', variant: 'AllTraffic' },
      { prefix: 'dc/ep-a/canary/', endpoint: 'ep-a', variant: 'canary' },
      { prefix: 'dc/ep-b/AllTraffic/', endpoint: 'ep-b', variant: 'AllTraffic' },
    ]);
    expect(ignored).toEqual(['dc/ep-b/stray/']);
  });

  it('filtered by endpoints and variants', async () => {
    expect(
      (await discoverCaptureFolders(objects, 'dc/', { endpoints: ['ep-a'], variants: ['canary'] })).folders,
    ).toEqual([{ prefix: 'dc/ep-a/canary/', endpoint: 'ep-a', variant: 'canary' }]);
  });

  it("from inside an endpoint's folder, and from a variant's", async () => {
    expect((await discoverCaptureFolders(objects, 'dc/ep-a/', { variants: ['AllTraffic'] })).folders).toEqual([
      { prefix: 'dc/ep-a/AllTraffic/', endpoint: 'ep-a', variant: 'AllTraffic' },
    ]);
    expect((await discoverCaptureFolders(objects, 'dc/ep-b/AllTraffic/', {})).folders).toEqual([
      { prefix: 'dc/ep-b/AllTraffic/', endpoint: 'ep-b', variant: 'AllTraffic' },
    ]);
    expect((await discoverCaptureFolders(objects, 'dc/ep-b/AllTraffic/', { endpoints: ['ep-a'] })).folders).toEqual([]);
  });
});
