/**
 * The collector at scale and under concurrency, on the memory store (which has S3's
 * conditional-write semantics): a run of thousands of shards is read with bounded
 * parallelism and gives exactly what reading one by one gives, and the hourly roll-up of
 * mirror mode loses no run when runs of one hour finalise at once, merges a run once, and
 * does not re-read the hour's other runs.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { computeProfileRecord } from '../../../lambdas/core/metrics/record-metrics';
import { collectRun, hourStateKey, RESULT_READ_CONCURRENCY } from '../../../lambdas/core/pipeline/collect';
import { INGEST_SHARD, type RunRecord } from '../../../lambdas/core/pipeline/common';
import { resultsKey, runRecordKey } from '../../../lambdas/core/pipeline/keys';
import { encodeResultLines, type ResultLine } from '../../../lambdas/core/pipeline/results';
import type { ObjectStore } from '../../../lambdas/ports';
import { scheduledRequest } from '../../support/fixtures';
import { VirtualClock } from '../../support/virtual-clock';
import { StallingView } from '../../support/stalling-view';

const S = 1_800_000_000_000_000_000n;
const MS = 1_000_000n;
const START = S + 30_000n * MS;
const HOUR = '2027-01-15T08';

/** A fired request's result line: scheduled `offsetMs` after the run's start, sent 1 ms late. */
function recordLine(runId: string, index: number, offsetMs: number, workerId = 'w'): ResultLine {
  const scheduledNs = START + BigInt(offsetMs) * MS;
  const record = computeProfileRecord(
    {
      request: scheduledRequest(index, offsetMs),
      target: 'A',
      requestId: `${runId}-req-${index}`,
      scheduledNs,
      workerId,
      result: {
        requestStartNs: scheduledNs + MS,
        requestAckNs: scheduledNs + 5n * MS,
        requestEndNs: scheduledNs + 9n * MS,
        contentChunkNs: [],
        httpStatus: 200,
        usage: null,
        error: null,
      },
      dropReason: null,
    },
    workerId,
  );
  return { kind: 'record', record };
}

const dropLine = (runId: string, index: number): ResultLine => ({
  kind: 'drop',
  requestId: `${runId}-req-${index}`,
  index,
  scheduledNs: START + BigInt(index) * MS,
  dropReason: 'unsupported_content_type',
});

/**
 * Writes a run as the schedule and fire stages leave it: the run record, the ingest's
 * results, and the given shards' results (a shard listed in `shards` but absent from
 * `results` has not reported).
 */
async function writeRun(
  store: ObjectStore,
  runId: string,
  shards: { shardId: string; lines: ResultLine[] }[],
  opts: { hour?: string; ingest?: ResultLine[]; unreported?: string[] } = {},
): Promise<void> {
  const record: RunRecord = {
    v: 1,
    runId,
    targets: ['A'],
    startNs: START.toString(),
    deadlineNs: (START + 3_600_000n * MS).toString(),
    createdAt: '2027-01-15T08:00:00.000Z',
    shards: shards.map((s) => ({ shardId: s.shardId, requests: Math.max(1, s.lines.length) })),
    notScheduledByReason: { duplicate: 1 },
    inputConfig: { mode: opts.hour ? 'mirror' : 'file' },
    ...(opts.hour ? { hour: opts.hour } : {}),
  };
  await store.put(resultsKey(runId, 'A', INGEST_SHARD), encodeResultLines(opts.ingest ?? []));
  for (const s of shards)
    if (!opts.unreported?.includes(s.shardId))
      await store.put(resultsKey(runId, 'A', s.shardId), encodeResultLines(s.lines));
  await store.put(runRecordKey(runId), JSON.stringify(record));
}

/** A memory store that counts GETs in flight and completes them in scrambled order. */
class SlowGetStore extends MemoryObjectStore {
  inFlight = 0;
  maxInFlight = 0;
  gets: string[] = [];
  failOn: string | null = null;
  getsAtFailure: number | null = null;

  override async get(key: string): Promise<Uint8Array | null> {
    this.gets.push(key);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      // Deterministic scramble: later keys often finish first.
      await new Promise((r) => setTimeout(r, (this.gets.length * 7919) % 4));
      if (key === this.failOn) {
        this.getsAtFailure = this.gets.length;
        throw new Error(`GET ${key}: connection reset`);
      }
      return await super.get(key);
    } finally {
      this.inFlight--;
    }
  }
}

/** A memory store that lets one GET run at a time: the sequential reading the collector used to do. */
class OneAtATimeStore extends MemoryObjectStore {
  private chain: Promise<unknown> = Promise.resolve();

  override get(key: string): Promise<Uint8Array | null> {
    const next = this.chain.then(() => super.get(key));
    this.chain = next.catch(() => undefined);
    return next;
  }
}

const shardId = (k: number) => `${Math.floor(k / 4)}-${k % 4}`;

/**
 * 2,000 shards of 3 requests. At-least-once leftovers: every 10th shard repeats the previous
 * shard's last request (with another worker id, so which copy won shows), and the ingest's
 * drop of request 0 is repeated by shard 0's record of it: the first copy in shard order wins.
 */
function bigRun(runId: string) {
  const shards: { shardId: string; lines: ResultLine[] }[] = [];
  for (let k = 0; k < 2000; k++) {
    const lines = [0, 1, 2].map((j) => recordLine(runId, 3 * k + j, 3 * k + j));
    if (k % 10 === 9) lines.unshift(recordLine(runId, 3 * k - 1, 3 * k - 1, 'redelivered'));
    shards.push({ shardId: shardId(k), lines });
  }
  return { shards, ingest: [dropLine(runId, 0)] };
}

describe('collecting a run of 2,000 shards', () => {
  it(`reads with at most ${RESULT_READ_CONCURRENCY} GETs in flight and gives what reading one by one gives`, async () => {
    const run = bigRun('big');
    const clock = new VirtualClock(S);
    const parallel = new SlowGetStore();
    const sequential = new OneAtATimeStore();
    for (const store of [parallel, sequential]) await writeRun(store, 'big', run.shards, { ingest: run.ingest });

    const [a, b] = [
      await collectRun('big', 'A', { store: parallel, clock }),
      await collectRun('big', 'A', { store: sequential, clock }),
    ];
    expect(parallel.maxInFlight).toBe(RESULT_READ_CONCURRENCY);
    expect(parallel.gets.filter((k) => k.includes('/_results/'))).toHaveLength(2001);
    expect(a).toEqual(b);
    for (const file of [
      'profile_export.jsonl',
      'run_manifest.json',
      'profile_export_aiperf.json',
      'profile_export_aiperf.csv',
    ]) {
      expect(parallel.text(`runs/big/A/${file}`)).toBe(sequential.text(`runs/big/A/${file}`));
    }

    // The accounting itself: 6,000 requests, request 0 dropped by the ingest (its later
    // record ignored), each repeated request counted once, as its first copy.
    expect(a.manifest).toMatchObject({
      scheduled: 6000,
      succeeded: 5999,
      dropped: 1,
      droppedByReason: { unsupported_content_type: 1 },
      balanced: true,
    });
    const records = parallel
      .text('runs/big/A/profile_export.jsonl')!
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records).toHaveLength(5999);
    expect(records.map((r) => r.metadata.session_num)).toEqual(Array.from({ length: 5999 }, (_, i) => i + 1));
    expect(records.filter((r) => r.metadata.worker_id === 'redelivered')).toEqual([]);
  });

  it('fails on an unreadable shard without starting the remaining reads', async () => {
    const run = bigRun('big');
    const store = new SlowGetStore();
    await writeRun(store, 'big', run.shards, { ingest: run.ingest });
    store.failOn = resultsKey('big', 'A', shardId(100));
    await expect(collectRun('big', 'A', { store, clock: new VirtualClock(S) })).rejects.toThrow(/connection reset/);
    while (store.inFlight > 0) await new Promise((r) => setTimeout(r, 5));
    // The reads in flight when it failed finish; none is started after.
    expect(store.getsAtFailure).not.toBeNull();
    expect(store.gets).toHaveLength(store.getsAtFailure!);
    expect(store.gets.length).toBeLessThan(300);
    expect(store.text('runs/big/A/run_manifest.json')).toBeNull();
  });
});

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}
function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Two mirror runs of one hour: a (2 requests, at 0 and 100 ms), b (3, at 50, 2000, 2100 ms). */
async function twoMirrorRuns(store: ObjectStore) {
  await writeRun(
    store,
    'mirror-a',
    [{ shardId: '0-0', lines: [recordLine('mirror-a', 0, 0), recordLine('mirror-a', 1, 100)] }],
    { hour: HOUR },
  );
  await writeRun(
    store,
    'mirror-b',
    [
      { shardId: '0-0', lines: [recordLine('mirror-b', 0, 50)] },
      { shardId: '2-0', lines: [recordLine('mirror-b', 1, 2000), recordLine('mirror-b', 2, 2100)] },
    ],
    { hour: HOUR },
  );
}

function hourOf(store: MemoryObjectStore) {
  const manifest = JSON.parse(store.text(`hours/${HOUR}/A/run_manifest.json`)!) as {
    scheduled: number;
    succeeded: number;
    balanced: boolean;
    runs: string[];
    notScheduledByReason: Record<string, number>;
  };
  const records = store
    .text(`hours/${HOUR}/A/profile_export.jsonl`)!
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  return { manifest, records };
}

function expectBothRuns(store: MemoryObjectStore) {
  const { manifest, records } = hourOf(store);
  expect(manifest).toMatchObject({
    scheduled: 5,
    succeeded: 5,
    balanced: true,
    runs: ['mirror-a', 'mirror-b'],
    notScheduledByReason: { duplicate: 2 },
  });
  // Renumbered by scheduled time across both runs: a0 (0 ms), b0 (50), a1 (100), b1, b2.
  expect(records.map((r) => [r.metadata.x_request_id, r.metadata.session_num])).toEqual([
    ['mirror-a-req-0', 0],
    ['mirror-b-req-0', 1],
    ['mirror-a-req-1', 2],
    ['mirror-b-req-1', 3],
    ['mirror-b-req-2', 4],
  ]);
}

describe('mirror-mode hourly roll-up under concurrency', () => {
  it.each([
    ['a', 'b'],
    ['b', 'a'],
  ])('loses no run when %s reads the hour, then stalls while %s finalises completely', async (first, second) => {
    const store = new MemoryObjectStore();
    await twoMirrorRuns(store);
    const clock = new VirtualClock(S);
    const secondDone = deferred();
    const stalled = new StallingView(store, secondDone.promise);
    const one = collectRun(`mirror-${first}`, 'A', { store: stalled, clock });
    await stalled.readHour; // the first has read the hour's state...
    await collectRun(`mirror-${second}`, 'A', { store, clock }); // ...the second merges and writes...
    secondDone.resolve(); // ...then the first goes on from what it had read.
    await one;
    expectBothRuns(store);
  });

  it('loses no run when both read the hour before either writes', async () => {
    const store = new MemoryObjectStore();
    await twoMirrorRuns(store);
    const clock = new VirtualClock(S);
    const bothRead = deferred();
    const a = new StallingView(store, bothRead.promise);
    const b = new StallingView(store, bothRead.promise);
    const done = Promise.all([
      collectRun('mirror-a', 'A', { store: a, clock }),
      collectRun('mirror-b', 'A', { store: b, clock }),
    ]);
    await Promise.all([a.readHour, b.readHour]);
    bothRead.resolve();
    await done;
    expectBothRuns(store);
  });

  it('rewrites the artifacts when a finaliser that merged earlier writes its older ones last', async () => {
    const store = new MemoryObjectStore();
    await twoMirrorRuns(store);
    const clock = new VirtualClock(S);
    const aHeld = deferred();
    const bDone = deferred();
    // a merges first, then its artifact writes wait until b has merged and written its own.
    class HoldArtifacts extends StallingView {
      override async put(key: string, body: string | Uint8Array, contentType?: string) {
        if (key === `hours/${HOUR}/A/run_manifest.json`) {
          aHeld.resolve();
          await bDone.promise;
        }
        return store.put(key, body, contentType);
      }
    }
    const one = collectRun('mirror-a', 'A', { store: new HoldArtifacts(store, Promise.resolve()), clock });
    await aHeld.promise;
    expect(JSON.parse(store.text(hourStateKey(HOUR, 'A'))!).runs.map((r: { runId: string }) => r.runId)).toEqual([
      'mirror-a',
    ]);
    await collectRun('mirror-b', 'A', { store, clock });
    bDone.resolve();
    await one;
    expectBothRuns(store);
  });

  it('keeps every run when twelve runs of one hour finalise at once', async () => {
    const store = new MemoryObjectStore();
    // Every operation takes a random 0-2 ms, so the finalisers interleave every which way.
    const jittery: ObjectStore = {
      get: (k) => later(() => store.get(k)),
      getVersioned: (k) => later(() => store.getVersioned(k)),
      list: (p) => later(() => store.list(p)),
      put: (k, b, t) => later(() => store.put(k, b, t)),
      putIfAbsent: (k, b, t) => later(() => store.putIfAbsent(k, b, t)),
      putIfMatch: (k, b, e, t) => later(() => store.putIfMatch(k, b, e, t)),
    };
    const runIds = Array.from({ length: 12 }, (_, i) => `run-${String(i).padStart(2, '0')}`);
    for (const [i, id] of runIds.entries())
      await writeRun(
        store,
        id,
        [{ shardId: '0-0', lines: [recordLine(id, 0, i * 10), recordLine(id, 1, i * 10 + 5)] }],
        { hour: HOUR },
      );
    const clock = new VirtualClock(S);
    // Backoffs pass in virtual time, so losers retry at once: more contention than in a real
    // deployment, hence more attempts than the default (each round, one of them wins).
    await Promise.all(runIds.map((id) => collectRun(id, 'A', { store: jittery, clock }, { rollUp: { attempts: 30 } })));
    const { manifest, records } = hourOf(store);
    expect(manifest).toMatchObject({ scheduled: 24, succeeded: 24, balanced: true, runs: runIds });
    expect(records.map((r) => r.metadata.session_num)).toEqual(Array.from({ length: 24 }, (_, i) => i));
  });

  it('merges a run once, however often it is collected', async () => {
    const store = new MemoryObjectStore();
    await twoMirrorRuns(store);
    const clock = new VirtualClock(S);
    await Promise.all([collectRun('mirror-a', 'A', { store, clock }), collectRun('mirror-a', 'A', { store, clock })]);
    await collectRun('mirror-a', 'A', { store, clock });
    expect(hourOf(store).manifest).toMatchObject({ scheduled: 2, succeeded: 2, balanced: true, runs: ['mirror-a'] });
    expect(JSON.parse(store.text(hourStateKey(HOUR, 'A'))!)).toMatchObject({ generation: 1 });
    await collectRun('mirror-b', 'A', { store, clock });
    await collectRun('mirror-a', 'A', { store, clock });
    expectBothRuns(store);
    expect(JSON.parse(store.text(hourStateKey(HOUR, 'A'))!)).toMatchObject({ generation: 2 });
  });

  it('replaces a run counted with lost shards when it is collected again with them reported', async () => {
    const store = new MemoryObjectStore();
    const shards = [
      { shardId: '0-0', lines: [recordLine('late', 0, 0)] },
      { shardId: '1-0', lines: [recordLine('late', 1, 1000), recordLine('late', 2, 1100)] },
    ];
    await writeRun(store, 'late', shards, { hour: HOUR, unreported: ['1-0'] });
    const clock = new VirtualClock(S);
    clock.advanceTo(START + 3_600_001n * MS); // past the deadline: 1-0 counts as lost
    expect((await collectRun('late', 'A', { store, clock })).status).toBe('deadline');
    expect(hourOf(store).manifest).toMatchObject({ scheduled: 3, succeeded: 1, dropped: 2, runs: ['late'] });
    await store.put(resultsKey('late', 'A', '1-0'), encodeResultLines(shards[1]!.lines)); // it reports after all
    expect((await collectRun('late', 'A', { store, clock })).status).toBe('complete');
    expect(hourOf(store).manifest).toMatchObject({
      scheduled: 3,
      succeeded: 3,
      dropped: 0,
      balanced: true,
      runs: ['late'],
    });
    await writeRun(store, 'late', shards, { hour: HOUR, unreported: ['1-0'] }); // a stale view cannot undo it
    store.objects.delete(resultsKey('late', 'A', '1-0'));
    await collectRun('late', 'A', { store, clock });
    expect(hourOf(store).manifest).toMatchObject({ scheduled: 3, succeeded: 3, dropped: 0, runs: ['late'] });
  });

  it("joins a run to the hour without reading the hour's other runs", async () => {
    const store = new SlowGetStore();
    await twoMirrorRuns(store);
    const clock = new VirtualClock(S);
    await collectRun('mirror-a', 'A', { store, clock });
    store.gets = [];
    await collectRun('mirror-b', 'A', { store, clock });
    expect(store.gets.filter((k) => k.startsWith('runs/mirror-a/'))).toEqual([]);
    expectBothRuns(store);
  });

  it('gives up after a bounded number of lost races, so that the message is redelivered', async () => {
    class AlwaysBeaten extends MemoryObjectStore {
      attempts = 0;
      override async putIfMatch(): Promise<boolean> {
        this.attempts++;
        return false; // somebody else always wrote the hour's state first
      }
    }
    const store = new AlwaysBeaten();
    await twoMirrorRuns(store);
    const collected = collectRun('mirror-a', 'A', { store, clock: new VirtualClock(S) }, { rollUp: { attempts: 3 } });
    await expect(collected).rejects.toThrow(
      /run mirror-a not merged: the hour's state changed under each of 3 attempts/,
    );
    expect(store.attempts).toBe(3);
    expect(store.text(`hours/${HOUR}/A/run_manifest.json`)).toBeNull();
    expect(store.text('runs/mirror-a/A/run_manifest.json')).not.toBeNull(); // the run's own results are out
  });
});

describe('MemoryObjectStore conditional writes (S3 semantics)', () => {
  it('creates only when absent, replaces only the version read', async () => {
    const store = new MemoryObjectStore();
    expect(await store.getVersioned('k')).toBeNull();
    expect(await store.putIfMatch('k', 'v1', null)).toBe(true);
    expect(await store.putIfMatch('k', 'v1-again', null)).toBe(false);
    const v1 = (await store.getVersioned('k'))!;
    expect(v1.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(await store.putIfMatch('k', 'v2', v1.etag)).toBe(true);
    expect(await store.putIfMatch('k', 'v3', v1.etag)).toBe(false); // stale
    expect(store.text('k')).toBe('v2');
    const v2 = (await store.getVersioned('k'))!;
    expect(await store.putIfMatch('k', 'v3', v2.etag.replace(/"/g, ''))).toBe(true); // quotes optional, as on S3
    expect(await store.putIfMatch('absent', 'x', v2.etag)).toBe(false);
    expect(store.text('absent')).toBeNull();
    expect(await store.putIfAbsent('k', 'nope')).toBe(false);
  });
});

async function later<T>(op: () => Promise<T>): Promise<T> {
  await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 3)));
  return op();
}
