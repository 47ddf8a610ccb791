/**
 * The serverless pipeline on emulated AWS: the real handlers and the real AWS SDK clients
 * against moto_server, event sources that behave like Lambda's SQS mapping, and the mock
 * target over real HTTP. A capture file put into the capture bucket must come out as
 * AIPerf artifacts in the results bucket, each replayable request sent once, on time.
 */
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutBucketNotificationConfigurationCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ENV } from '../../lambdas/runtime/config';
import { createDeps } from '../../lambdas/runtime/deps';
import { makeCollectHandler } from '../../lambdas/handlers/collect';
import { makeFireHandler } from '../../lambdas/handlers/fire';
import { makeIngestHandler } from '../../lambdas/handlers/ingest';
import { startMockServer, type MockServer } from '../../lambdas/mocks/mock-server';
import { awsClientConfig, describeWithMoto, startMoto, type Moto } from '../support/moto';
import { REPO_ROOT } from '../support/processes';
import { startSqsEventSource, type EventSource } from '../support/sqs-event-source';
import { tolerance } from '../support/timing';

const CAPTURE_FILE = join(
  REPO_ROOT,
  'samples/datacapture/demo-endpoint/AllTraffic/2026/04/29/00/14-03-887-0a1b2c3d.jsonl',
);
const KEY = 'datacapture/demo-endpoint/AllTraffic/2026/04/29/00/capture file+1.jsonl';
/** On a machine with a CPU to spare; widened with its load (test/support/timing.ts), as the other timing checks are. */
const OFFSET_TOLERANCE_MS = 25;

describeWithMoto('pipeline on emulated AWS (moto)', () => {
  let moto: Moto;
  let s3: S3Client;
  let sqs: SQSClient;
  let mock: MockServer;
  let sources: EventSource[] = [];
  let ingestQueueUrl = '';
  let mirrorDeps: ReturnType<typeof createDeps>;
  let useMirror = false;

  async function queueWithDlq(name: string, visibility: number): Promise<string> {
    const dlq = (await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }))).QueueUrl!;
    const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ['QueueArn'] })))
      .Attributes!.QueueArn!;
    return (
      await sqs.send(
        new CreateQueueCommand({
          QueueName: name,
          Attributes: {
            VisibilityTimeout: String(visibility),
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }),
          },
        }),
      )
    ).QueueUrl!;
  }

  async function text(bucket: string, key: string): Promise<string> {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return out.Body!.transformToString();
  }

  async function waitForKey(bucket: string, suffix: string, timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const keys = ((await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'runs/' }))).Contents ?? []).map(
        (o) => o.Key!,
      );
      const hit = keys.find((k) => k.endsWith(suffix));
      if (hit) return hit;
      if (Date.now() > deadline)
        throw new Error(`no ${suffix} in ${bucket} after ${timeoutMs} ms; have: ${keys.join(', ')}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  beforeAll(async () => {
    moto = await startMoto();
    s3 = new S3Client(awsClientConfig(moto.endpoint));
    sqs = new SQSClient(awsClientConfig(moto.endpoint));
    mock = await startMockServer({ ttftMs: 20, itlMs: 4, outputTokens: 6 });
    await s3.send(new CreateBucketCommand({ Bucket: 'capture-bucket' }));
    await s3.send(new CreateBucketCommand({ Bucket: 'results-bucket' }));
    ingestQueueUrl = await queueWithDlq('ingest', 60);
    const replayQueueUrl = await queueWithDlq('replay', 120);
    const collectQueueUrl = await queueWithDlq('collect', 60);
    const ingestArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: ingestQueueUrl, AttributeNames: ['QueueArn'] }))
    ).Attributes!.QueueArn!;
    await s3.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: 'capture-bucket',
        NotificationConfiguration: {
          QueueConfigurations: [
            {
              QueueArn: ingestArn,
              Events: ['s3:ObjectCreated:*'],
              Filter: {
                Key: {
                  FilterRules: [
                    { Name: 'prefix', Value: 'datacapture/' },
                    { Name: 'suffix', Value: '.jsonl' },
                  ],
                },
              },
            },
          ],
        },
      }),
    );
    const env = {
      [ENV.resultsBucket]: 'results-bucket',
      [ENV.replayQueueUrl]: replayQueueUrl,
      [ENV.collectQueueUrl]: collectQueueUrl,
      [ENV.targets]: JSON.stringify([{ name: 'A', url: mock.url }]),
      [ENV.leadMs]: '2500',
      [ENV.graceMs]: '30000',
      [ENV.forceStreaming]: 'true',
      [ENV.modelOverride]: 'replay-model',
    };
    const deps = createDeps({ env, s3, sqs });
    // Mirror mode shares the queues and functions: the ingest decides by its configuration.
    mirrorDeps = createDeps({ env: { ...env, [ENV.mode]: 'mirror', [ENV.lagMs]: '6000' }, s3, sqs });
    useMirror = false;
    sources = [
      await startSqsEventSource({
        client: sqs,
        queueUrl: ingestQueueUrl,
        handler: makeIngestHandler(() => (useMirror ? mirrorDeps : deps)),
        batchSize: 10,
      }),
      await startSqsEventSource({
        client: sqs,
        queueUrl: replayQueueUrl,
        handler: makeFireHandler(() => deps),
        batchSize: 10,
        maxConcurrency: 10,
        visibilityTimeoutSeconds: 120,
      }),
      await startSqsEventSource({
        client: sqs,
        queueUrl: collectQueueUrl,
        handler: makeCollectHandler(() => deps),
        batchSize: 10,
      }),
    ];
  }, 60_000);

  afterAll(async () => {
    await Promise.all(sources.map((s) => s.stop()));
    await mock?.close();
    await moto?.stop();
  });

  it('turns a capture file into AIPerf results, each request sent once at its captured offset', async () => {
    await s3.send(
      new PutObjectCommand({ Bucket: 'capture-bucket', Key: 'datacapture/notes.txt', Body: 'not a capture' }),
    );
    await s3.send(new PutObjectCommand({ Bucket: 'capture-bucket', Key: KEY, Body: readFileSync(CAPTURE_FILE) }));
    const manifestKey = await waitForKey('results-bucket', '/A/run_manifest.json', 60_000);
    const runDir = manifestKey.slice(0, -'A/run_manifest.json'.length);

    const ingest = JSON.parse(await text('results-bucket', `${runDir}ingest_report.json`));
    expect(ingest.files[0].file).toBe(`s3://capture-bucket/${KEY}`); // URL-decoded key, space and plus intact
    expect(ingest.totals).toMatchObject({ rejectedByReason: { invalid_json: 1, duplicate: 1 }, blankLines: 1 });
    const accepted = ingest.totals.accepted as number;

    const manifest = JSON.parse(await text('results-bucket', manifestKey));
    expect(manifest).toMatchObject({
      scheduled: accepted,
      succeeded: accepted,
      failed: 0,
      dropped: 0,
      balanced: true,
      notScheduledByReason: { duplicate: 1 },
    });

    const records = (await text('results-bucket', `${runDir}A/profile_export.jsonl`))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records).toHaveLength(accepted);
    const aggregates = JSON.parse(await text('results-bucket', `${runDir}A/profile_export_aiperf.json`));
    expect(aggregates.request_count.avg).toBe(accepted);
    expect(aggregates.time_to_first_token.count).toBe(accepted);
    // The run's settings reach AIPerf's input_config: model, endpoint, streaming, timeout.
    expect(aggregates.input_config).toMatchObject({
      models: { items: [{ name: 'replay-model' }] },
      endpoint: { type: 'chat', streaming: true, timeout: 600 },
    });

    // The target's view: each request once, at its planned offset.
    expect(mock.requests).toHaveLength(accepted);
    expect(new Set(mock.requests.map((r) => r.headers['x-request-id'])).size).toBe(accepted);
    const byId = new Map(records.map((r) => [r.metadata.x_request_id, r]));
    const firstCapture = Math.min(...records.map((r) => r.capture_replay.capture_time_ms));
    const errors = mock.requests.map(
      (r) =>
        Number(r.arrivalNs / 1000n) / 1000 -
        (byId.get(r.headers['x-request-id']!)!.capture_replay.capture_time_ms - firstCapture),
    );
    const base = Math.min(...errors);
    expect(Math.max(...errors.map((e) => e - base))).toBeLessThan(
      tolerance('pipeline arrival offsets', OFFSET_TOLERANCE_MS),
    );
  }, 90_000);

  it('mirror mode: replays each request at its inferenceTime + lag and rolls results up per hour', async () => {
    useMirror = true;
    const before = mock.requests.length;
    // Captures stamped one second ago (whole seconds, as SageMaker writes): due at +5 s.
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 1000;
    const line = (id: string, ms: number) =>
      JSON.stringify({
        captureData: {
          endpointInput: {
            observedContentType: 'application/json',
            mode: 'INPUT',
            data: JSON.stringify({ messages: [{ role: 'user', content: id }] }),
            encoding: 'JSON',
          },
        },
        eventMetadata: { eventId: id, inferenceTime: new Date(t0 + ms).toISOString().replace('.000Z', 'Z') },
        eventVersion: '0',
      });
    const body = [line('m-1', 0), line('m-2', 0), line('m-3', 1000)].join('\n') + '\n';
    await s3.send(
      new PutObjectCommand({
        Bucket: 'capture-bucket',
        Key: 'datacapture/demo-endpoint/AllTraffic/mirror.jsonl',
        Body: body,
      }),
    );
    const hour = new Date(t0).toISOString().slice(0, 13);
    await waitForKey('results-bucket', '/A/run_manifest.json', 60_000); // the earlier run's
    const deadline = Date.now() + 60_000;
    let hourly: { scheduled: number; succeeded: number; balanced: boolean; runs: string[] } | null = null;
    while (!hourly && Date.now() < deadline) {
      try {
        hourly = JSON.parse(await text('results-bucket', `hours/${hour}/A/run_manifest.json`));
      } catch {
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    expect(hourly).toMatchObject({ scheduled: 3, succeeded: 3, balanced: true });
    expect(hourly!.runs).toHaveLength(1);
    const sent = mock.requests.slice(before);
    expect(sent).toHaveLength(3);
    // Each one at its inferenceTime + 6 s lag (spread: m-1 at +0, m-2 at +500 ms, m-3 at +1 s).
    const offsets = sent.map((r) => Number(r.arrivalNs / 1_000_000n) - (t0 + 6000));
    for (const [i, want] of [0, 500, 1000].entries())
      expect(Math.abs(offsets[i]! - want)).toBeLessThan(
        tolerance('pipeline arrival offsets', OFFSET_TOLERANCE_MS + 10),
      );
    useMirror = false;
  }, 90_000);

  it('schedules nothing again when the same S3 event is delivered twice', async () => {
    const before = mock.requests.length;
    const etag = (await s3.send(new GetObjectCommand({ Bucket: 'capture-bucket', Key: KEY }))).ETag!.replace(/"/g, '');
    const event = {
      Records: [
        {
          eventName: 'ObjectCreated:Put',
          s3: {
            bucket: { name: 'capture-bucket' },
            object: { key: encodeURIComponent(KEY).replace(/%20/g, '+'), eTag: etag },
          },
        },
      ],
    };
    await sqs.send(new SendMessageCommand({ QueueUrl: ingestQueueUrl, MessageBody: JSON.stringify(event) }));
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: ingestQueueUrl,
        MessageBody: JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent', Bucket: 'capture-bucket' }),
      }),
    );
    await new Promise((r) => setTimeout(r, 1000));
    await Promise.all(sources.map((s) => s.idle(4000)));
    expect(mock.requests.length).toBe(before);
    expect(sources[0]!.stats.failedRecords).toBe(0);
  }, 60_000);
});
