/**
 * Mirror-mode hourly roll-ups on emulated S3 (moto_server): the S3 adapter's conditional
 * writes as moto answers them, and runs of one hour finalised at once by collectRun through
 * the real S3 adapter, ending with every run in hours/<hour>/<target>/run_manifest.json.
 *
 * What moto 5.2.1 does (checked against its PutObject handler): it honours `If-None-Match: *`
 * (412 when the key exists) and `If-Match: <etag>` (412 on another ETag, 404 NoSuchKey when
 * the key is absent), with or without quotes around the ETag, as S3 does. It never answers
 * 409 ConditionalRequestConflict, and its check and write are two steps without a lock, so
 * the atomicity of one conditional write under truly simultaneous requests is S3's promise,
 * not something moto proves; the memory-store tests interleave finalisers deterministically.
 */
import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lambdas/adapters/aws/s3-object-store';
import { computeProfileRecord } from '../../lambdas/core/metrics/record-metrics';
import { collectRun, hourStateKey } from '../../lambdas/core/pipeline/collect';
import { INGEST_SHARD, type RunRecord } from '../../lambdas/core/pipeline/common';
import { resultsKey, runRecordKey } from '../../lambdas/core/pipeline/keys';
import { encodeResultLines, type ResultLine } from '../../lambdas/core/pipeline/results';
import type { ObjectStore } from '../../lambdas/ports';
import { scheduledRequest } from '../support/fixtures';
import { awsClientConfig, describeWithMoto, startMoto, type Moto } from '../support/moto';
import { VirtualClock } from '../support/virtual-clock';
import { StallingView } from '../support/stalling-view';

const BUCKET = 'results-bucket';
const S = 1_800_000_000_000_000_000n;
const MS = 1_000_000n;
const START = S + 30_000n * MS;

function recordLine(runId: string, index: number, offsetMs: number): ResultLine {
  const scheduledNs = START + BigInt(offsetMs) * MS;
  const record = computeProfileRecord(
    {
      request: scheduledRequest(index, offsetMs),
      target: 'A',
      requestId: `${runId}-req-${index}`,
      scheduledNs,
      workerId: 'w',
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
    'w',
  );
  return { kind: 'record', record };
}

/** A mirror run of `hour` as the schedule and fire stages leave it: every shard reported. */
async function writeMirrorRun(store: ObjectStore, runId: string, hour: string, shards: ResultLine[][]): Promise<void> {
  const record: RunRecord = {
    v: 1,
    runId,
    targets: ['A'],
    startNs: START.toString(),
    deadlineNs: (START + 3_600_000n * MS).toString(),
    createdAt: '2027-01-15T08:00:00.000Z',
    shards: shards.map((lines, i) => ({ shardId: `${i}-0`, requests: lines.length })),
    notScheduledByReason: {},
    inputConfig: { mode: 'mirror' },
    hour,
  };
  await store.put(resultsKey(runId, 'A', INGEST_SHARD), '');
  await Promise.all(shards.map((lines, i) => store.put(resultsKey(runId, 'A', `${i}-0`), encodeResultLines(lines))));
  await store.put(runRecordKey(runId), JSON.stringify(record));
}

describeWithMoto('hourly roll-up on emulated S3 (moto)', () => {
  let moto: Moto;
  let s3: S3Client;
  let store: S3ObjectStore;

  async function json<T>(key: string): Promise<T> {
    const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    return JSON.parse(await out.Body!.transformToString()) as T;
  }

  beforeAll(async () => {
    moto = await startMoto();
    s3 = new S3Client(awsClientConfig(moto.endpoint));
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    store = new S3ObjectStore(s3, BUCKET);
  }, 60_000);

  afterAll(async () => {
    s3?.destroy();
    await moto?.stop();
  });

  it('S3ObjectStore.putIfMatch: creates only when absent, replaces only the version read', async () => {
    expect(await store.getVersioned('cas/k')).toBeNull();
    expect(await store.putIfMatch('cas/k', 'v1', null, 'text/plain')).toBe(true);
    expect(await store.putIfMatch('cas/k', 'v1-again', null)).toBe(false); // 412
    const v1 = (await store.getVersioned('cas/k'))!;
    expect(Buffer.from(v1.bytes).toString()).toBe('v1');
    expect(await store.putIfMatch('cas/k', 'v2', v1.etag)).toBe(true);
    expect(await store.putIfMatch('cas/k', 'v3', v1.etag)).toBe(false); // 412: stale ETag
    const v2 = (await store.getVersioned('cas/k'))!;
    expect(Buffer.from(v2.bytes).toString()).toBe('v2');
    expect(v2.etag).not.toBe(v1.etag);
    expect(await store.putIfMatch('cas/absent', 'x', v2.etag)).toBe(false); // 404 NoSuchKey
    expect(await store.get('cas/absent')).toBeNull();
    expect(await store.putIfAbsent('cas/k', 'nope')).toBe(false);
  });

  it('two runs of one hour finalised at once both end up in the hour', async () => {
    const hour = '2027-01-15T08';
    await writeMirrorRun(store, 'race-a', hour, [[recordLine('race-a', 0, 0), recordLine('race-a', 1, 100)]]);
    await writeMirrorRun(store, 'race-b', hour, [
      [recordLine('race-b', 0, 50)],
      [recordLine('race-b', 1, 2000), recordLine('race-b', 2, 2100)],
    ]);
    const clock = new VirtualClock(S);
    const results = await Promise.all([
      collectRun('race-a', 'A', { store, clock }),
      collectRun('race-b', 'A', { store, clock }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['complete', 'complete']);
    const manifest = await json<{ scheduled: number; succeeded: number; balanced: boolean; runs: string[] }>(
      `hours/${hour}/A/run_manifest.json`,
    );
    expect(manifest).toMatchObject({ scheduled: 5, succeeded: 5, balanced: true, runs: ['race-a', 'race-b'] });
  }, 30_000);

  it('a finaliser that read the hour before another one wrote it loses the conditional write on S3, re-reads and merges', async () => {
    const hour = '2027-01-15T09';
    await writeMirrorRun(store, 'stale-a', hour, [[recordLine('stale-a', 0, 0)]]);
    await writeMirrorRun(store, 'stale-b', hour, [[recordLine('stale-b', 0, 10), recordLine('stale-b', 1, 20)]]);
    const clock = new VirtualClock(S);
    let resume!: () => void;
    const view = new StallingView(store, new Promise((r) => (resume = r)));
    const first = collectRun('stale-a', 'A', { store: view, clock });
    await view.readHour; // a has read the hour's state (absent)...
    await collectRun('stale-b', 'A', { store, clock }); // ...b creates it...
    resume(); // ...a's create is refused (412), a re-reads b's state and merges into it.
    await first;
    const manifest = await json<{ scheduled: number; runs: string[] }>(`hours/${hour}/A/run_manifest.json`);
    expect(manifest).toMatchObject({ scheduled: 3, runs: ['stale-a', 'stale-b'] });
    const state = await json<{ generation: number; runs: { runId: string }[] }>(hourStateKey(hour, 'A'));
    expect(state.generation).toBe(2);
    expect(state.runs.map((r) => r.runId)).toEqual(['stale-a', 'stale-b']);
  }, 30_000);

  it('eight runs of one hour finalised at once all end up in the hour', async () => {
    const hour = '2027-01-15T10';
    const runIds = Array.from({ length: 8 }, (_, i) => `many-${i}`);
    for (const [i, id] of runIds.entries())
      await writeMirrorRun(store, id, hour, [[recordLine(id, 0, i), recordLine(id, 1, 100 + i)]]);
    const clock = new VirtualClock(S);
    await Promise.all(runIds.map((id) => collectRun(id, 'A', { store, clock }, { rollUp: { attempts: 20 } })));
    const manifest = await json<{ scheduled: number; succeeded: number; balanced: boolean; runs: string[] }>(
      `hours/${hour}/A/run_manifest.json`,
    );
    expect(manifest).toMatchObject({ scheduled: 16, succeeded: 16, balanced: true, runs: runIds });
  }, 60_000);
});
