/**
 * The serverless pipeline at a realistic load on emulated AWS: a generated capture file of
 * 60 s at 200 requests/s (12,000 chat requests, ~25 MB) put into the capture bucket goes
 * through the real ingest, fire and collect handlers on moto_server, with Lambda-like SQS
 * event sources, to the bundled mock target. Every request must reach the target exactly once
 * and the run manifest must balance.
 *
 * Real time: the replay itself lasts 60 s after a 20 s lead, so the test takes ~90-120 s.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeCollectHandler } from '../../lambdas/handlers/collect';
import { makeFireHandler } from '../../lambdas/handlers/fire';
import { makeIngestHandler } from '../../lambdas/handlers/ingest';
import { startMockServer, type MockServer } from '../../lambdas/mocks/mock-server';
import { ENV } from '../../lambdas/runtime/config';
import { createDeps } from '../../lambdas/runtime/deps';
import { LambdaMeter } from '../support/aws-meter';
import { createBucket, createQueueWithDlq, notifyQueueOnObjectCreated } from '../support/aws-fixtures';
import { captureBuffer } from '../support/capture-gen';
import { awsClientConfig, describeWithMoto, startMoto, type Moto } from '../support/moto';
import { startSqsEventSource, type EventSource } from '../support/sqs-event-source';

const RATE = 200;
const SECONDS = 60;
const EXPECTED = RATE * SECONDS;
const KEY = 'datacapture/scale-endpoint/AllTraffic/2026/04/29/00/scale-60s-200rps.jsonl';
// The ingest must parse 12,000 records and enqueue every shard before the first one is due.
const LEAD_MS = 20_000;
const GRACE_MS = 120_000;
const REQUEST_TIMEOUT_MS = 30_000;
const MANIFEST_TIMEOUT_MS = 200_000;

type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

/** What an event source's remembered errors say, inner record errors of a full-batch failure included. */
function describeErrors(errors: unknown[]): string {
  return errors
    .map((e) => {
      const inner = (e as { recordErrors?: unknown[] }).recordErrors ?? [];
      const text = (x: unknown) => (x instanceof Error ? `${x.name}: ${x.message}` : String(x));
      return [text(e), ...inner.map((x) => `  - ${text(x)}`)].join('\n');
    })
    .join('\n');
}

describeWithMoto('scale: 60 s of captures at 200 requests/s through the pipeline on moto', () => {
  let moto: Moto;
  let s3: S3Client;
  let sqs: SQSClient;
  let mock: MockServer;
  let ingest: EventSource;
  let fire: EventSource;
  let collect: EventSource;

  beforeAll(async () => {
    moto = await startMoto();
    s3 = new S3Client(awsClientConfig(moto.endpoint));
    sqs = new SQSClient(awsClientConfig(moto.endpoint));
    mock = await startMockServer({ ttftMs: 5, itlMs: 2, outputTokens: 4, preciseTimers: false });
    await createBucket(s3, 'capture-bucket');
    await createBucket(s3, 'results-bucket');
    const ingestQueue = await createQueueWithDlq(sqs, 'ingest', { visibilityTimeoutSeconds: 300 });
    const replayQueue = await createQueueWithDlq(sqs, 'replay', { visibilityTimeoutSeconds: 300 });
    const collectQueue = await createQueueWithDlq(sqs, 'collect', { visibilityTimeoutSeconds: 60 });
    await notifyQueueOnObjectCreated(s3, {
      bucket: 'capture-bucket',
      queueArn: ingestQueue.arn,
      prefix: 'datacapture/',
    });
    const deps = createDeps({
      env: {
        [ENV.resultsBucket]: 'results-bucket',
        [ENV.replayQueueUrl]: replayQueue.url,
        [ENV.collectQueueUrl]: collectQueue.url,
        [ENV.targets]: JSON.stringify([{ name: 'A', url: mock.url }]),
        [ENV.leadMs]: String(LEAD_MS),
        [ENV.graceMs]: String(GRACE_MS),
        [ENV.requestTimeoutMs]: String(REQUEST_TIMEOUT_MS),
        [ENV.forceStreaming]: 'true',
      },
      s3,
      sqs,
    });
    // One event per handler instance at a time, as in Lambda's execution environments.
    const lambdas = new LambdaMeter();
    const fn = (name: string, make: () => Handler) => lambdas.wrap(name, 1024, make);
    ingest = await startSqsEventSource({
      client: sqs,
      queueUrl: ingestQueue.url,
      handler: fn('ingest', () => makeIngestHandler(() => deps)),
      batchSize: 5,
      functionName: 'ingest',
    });
    fire = await startSqsEventSource({
      client: sqs,
      queueUrl: replayQueue.url,
      handler: fn('fire', () => makeFireHandler(() => deps)),
      batchSize: 10,
      maxConcurrency: 20,
      visibilityTimeoutSeconds: 300,
      functionName: 'fire',
    });
    collect = await startSqsEventSource({
      client: sqs,
      queueUrl: collectQueue.url,
      handler: fn('collect', () => makeCollectHandler(() => deps)),
      batchSize: 10,
      functionName: 'collect',
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([ingest, fire, collect].filter(Boolean).map((s) => s.stop()));
    await mock?.close();
    await moto?.stop();
  });

  async function text(bucket: string, key: string): Promise<string> {
    return (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
  }

  /** The run manifest's key; fails at once, with the ingest's errors, if the ingest failed. */
  async function waitForManifest(): Promise<string> {
    const deadline = Date.now() + MANIFEST_TIMEOUT_MS;
    for (;;) {
      if (ingest.stats.failedRecords > 0)
        throw new Error(
          `ingest failed (${ingest.stats.failedRecords} record(s)):\n${describeErrors(ingest.stats.errors)}`,
        );
      const keys = (
        (await s3.send(new ListObjectsV2Command({ Bucket: 'results-bucket', Prefix: 'runs/' }))).Contents ?? []
      ).map((o) => o.Key!);
      const hit = keys.find((k) => k.endsWith('/A/run_manifest.json'));
      if (hit) return hit;
      if (Date.now() > deadline) {
        throw new Error(
          `no run manifest after ${MANIFEST_TIMEOUT_MS} ms; mock saw ${mock.requests.length} requests; ` +
            `fire: ${JSON.stringify({ ...fire.stats, errors: undefined })}\n${describeErrors(fire.stats.errors)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  it(`replays all ${EXPECTED} requests, each exactly once, and the manifest balances`, async () => {
    const body = captureBuffer({
      ratePerSecond: RATE,
      durationSeconds: SECONDS,
      startTime: Date.UTC(2026, 3, 29, 0, 3, 18),
      seed: 7,
    });
    expect(body.length).toBeGreaterThan(15 * 1024 * 1024);
    await s3.send(new PutObjectCommand({ Bucket: 'capture-bucket', Key: KEY, Body: body }));

    const manifestKey = await waitForManifest();
    const runDir = manifestKey.slice(0, -'A/run_manifest.json'.length);
    const report = JSON.parse(await text('results-bucket', `${runDir}ingest_report.json`));
    expect(report.totals).toMatchObject({ accepted: EXPECTED, rejected: 0 });

    const manifest = JSON.parse(await text('results-bucket', manifestKey));
    // Nothing lost, nothing dropped: every scheduled request was fired and accounted for.
    expect(manifest).toMatchObject({ scheduled: EXPECTED, fired: EXPECTED, dropped: 0, balanced: true });
    // The pipeline's part is exact; the target's is a mock sharing 2 cores with moto and the
    // whole pipeline, which on a loaded machine fails a few requests (named here, by type).
    expect(manifest.failed, `failed by type: ${JSON.stringify(manifest.failedByType)}`).toBeLessThanOrEqual(
      EXPECTED * 0.01,
    );

    // The target's view: no request twice, and every request that succeeded was seen there.
    const ids = mock.requests.map((r) => r.headers['x-request-id']);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(manifest.succeeded);
    expect(ids.length).toBeLessThanOrEqual(EXPECTED);

    const records = (await text('results-bucket', `${runDir}A/profile_export.jsonl`)).trim().split('\n');
    expect(records).toHaveLength(EXPECTED);
    const recorded = new Set(
      records.map((l) => (JSON.parse(l) as { metadata: { x_request_id: string } }).metadata.x_request_id),
    );
    expect(recorded.size).toBe(EXPECTED);
    for (const id of ids) expect(recorded.has(id as string)).toBe(true);
    expect(fire.stats.handlerErrors).toBe(0);
  }, 300_000);
});
