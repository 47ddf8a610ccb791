/**
 * The ingest handler on one large capture file, as Lambda would run it: a generated capture
 * (default 1 GB) is uploaded to moto_server's S3 by multipart upload, then the real ingest
 * handler is invoked once with the SQS event carrying the S3 notification. Nothing fires: no
 * event source reads the replay queue. Measured: wall time of the invocation, this process's
 * peak RSS and heap (sampled every 50 ms), the shard messages sent, and the AWS requests the
 * handler made (metered SDK clients).
 *
 * The options, and why --ranges-from-file: beside the flags below.
 */
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeIngestHandler } from '../lambdas/handlers/ingest';
import { ENV } from '../lambdas/runtime/config';
import { createDeps } from '../lambdas/runtime/deps';
import { fileURLToPath } from 'node:url';
import { AwsMeter } from '../test/support/aws-meter';
import { createBucket, createQueue } from '../test/support/aws-fixtures';
import { writeCaptureFile } from '../test/support/capture-gen';
import { awsClientConfig, startMoto } from '../test/support/moto';
import { flag } from './args';

process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';

/**
 *   npm run bench:ingest -- [--size-mb 1024] [--rate 200] [--seed 1] [--keep] [--timeout-s 3600] [--ranges-from-file]
 *
 * --ranges-from-file: moto copies the whole object for every ranged GET (FakeKey.value reads
 * the full buffer), so the ingest's second pass (one ranged GET per window of shards) costs
 * O(file size) per request on moto, ~1 GB each at 1 GB: not what S3 does. With this flag the
 * handler's ranged GETs of the capture object are answered from the local file by the SDK
 * client's HTTP layer (same bytes, same ETag, still metered); everything else, the first full
 * read included, goes to moto.
 *
 * The capture file is written to the temp folder (bounded memory) and deleted afterwards
 * unless --keep; a kept file of the same size and seed is reused. The process RSS includes
 * the benchmark's own baseline (SDK, tsx), reported separately; the ingest function's memory
 * and timeout, read from the synthesized stack (lib/stateless.ts), are what the peak and the
 * wall time must stay under.
 */
const sizeMb = flag('--size-mb', 1024);
const rate = flag('--rate', 200);
const seed = flag('--seed', 1);
const timeoutS = flag('--timeout-s', 3600);
const keep = process.argv.includes('--keep');
const rangesFromFile = process.argv.includes('--ranges-from-file');
const MB = 1024 * 1024;
const PART_BYTES = 16 * MB;
const KEY = `datacapture/bench-endpoint/AllTraffic/2026/04/29/00/ingest-large-${sizeMb}mb.jsonl`;
const START = Date.UTC(2026, 3, 29, 0, 0, 0);
const file = join(tmpdir(), `capture-ingest-large-${sizeMb}mb-seed${seed}-rate${rate}.jsonl`);
const gc = (globalThis as { gc?: () => void }).gc;
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

interface HttpRequestLike {
  method: string;
  path: string;
  headers: Record<string, string>;
}
interface RequestHandlerLike {
  handle(request: HttpRequestLike, options?: unknown): Promise<{ response: unknown }>;
}

/**
 * Answers ranged GETs of `bucket/key` from the local file (206, Content-Range, the upload's
 * ETag), everything else through the client's own handler. See --ranges-from-file.
 */
function serveRangesFromFile(
  client: S3Client,
  bucket: string,
  key: string,
  fh: FileHandle,
  size: number,
  etag: string,
): { served: () => number } {
  const config = client.config as unknown as { requestHandler: RequestHandlerLike };
  const inner = config.requestHandler;
  const path = `/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
  let served = 0;
  config.requestHandler = {
    async handle(request, options) {
      const range = /^bytes=(\d+)-(\d+)$/.exec(request.headers.range ?? request.headers.Range ?? '');
      if (request.method !== 'GET' || !range || decodeURIComponent(request.path) !== decodeURIComponent(path))
        return inner.handle(request, options);
      const start = Number(range[1]);
      const end = Math.min(Number(range[2]), size - 1);
      const bytes = Buffer.alloc(end - start + 1);
      await fh.read(bytes, 0, bytes.length, start);
      served++;
      return {
        response: {
          statusCode: 206,
          headers: {
            'content-range': `bytes ${start}-${end}/${size}`,
            'content-length': String(bytes.length),
            etag: `"${etag}"`,
            'accept-ranges': 'bytes',
            'content-type': 'application/jsonl',
          },
          body: Readable.from([bytes]),
        },
      };
    },
  };
  return { served: () => served };
}

/**
 * The ingest function's MemorySize and Timeout as synthesized (default configuration, no
 * bundling), in a child process: the CDK library would otherwise sit in this process's RSS.
 */
async function printIngestFunction(): Promise<void> {
  const { App } = await import('aws-cdk-lib');
  const { Template } = await import('aws-cdk-lib/assertions');
  const { CaptureReplayStack } = await import('../lib/capture-replay-stack');
  const { parseDeploymentConfig } = await import('../lib/config');
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-ingest-'));
  try {
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const functions = Template.fromStack(
      new CaptureReplayStack(app, 'IngestBench', { config: parseDeploymentConfig({}) }),
    ).findResources('AWS::Lambda::Function') as Record<
      string,
      { Properties: { MemorySize?: number; Timeout?: number } }
    >;
    const hit = Object.entries(functions).find(([id]) => id.startsWith('StatelessIngest'));
    if (!hit) throw new Error('no StatelessIngest* function in the template');
    console.log(
      JSON.stringify({ memoryMb: hit[1].Properties.MemorySize ?? 128, timeoutSeconds: hit[1].Properties.Timeout ?? 3 }),
    );
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
if (process.argv.includes('--print-ingest-function')) {
  await printIngestFunction();
  process.exit(0);
}
function ingestFunction(): { memoryMb: number; timeoutSeconds: number } {
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), '--print-ingest-function'],
    { encoding: 'utf8', timeout: 120_000 },
  );
  if (child.status !== 0) throw new Error(`synthesizing the stack failed: ${child.stderr.slice(-2000)}`);
  return JSON.parse(child.stdout.trim().split('\n').pop() ?? '') as { memoryMb: number; timeoutSeconds: number };
}
const deployed = ingestFunction();

// ---- the capture file ---------------------------------------------------------------------

let generated: { records: number | null; bytes: number; seconds: number; reused: boolean };
if (keep && existsSync(file) && statSync(file).size >= sizeMb * MB) {
  generated = { records: null, bytes: statSync(file).size, seconds: 0, reused: true };
} else {
  const t0 = performance.now();
  // Long enough at this rate for the size; generation stops at the size.
  const written = await writeCaptureFile(file, {
    ratePerSecond: rate,
    durationSeconds: 10 * 86_400,
    startTime: START,
    seed,
    maxBytes: sizeMb * MB,
  });
  generated = { ...written, seconds: round((performance.now() - t0) / 1000), reused: false };
}
console.error(
  `capture: ${file} (${round(generated.bytes / MB)} ` +
    `MB${generated.reused ? ', reused' : `, ${generated.records} records in ${generated.seconds} s`})`,
);

// ---- emulated AWS ----------------------------------------------------------------------------

const moto = await startMoto();
let exitCode = 0;
try {
  const setupS3 = new S3Client(awsClientConfig(moto.endpoint));
  const setupSqs = new SQSClient(awsClientConfig(moto.endpoint));
  await createBucket(setupS3, 'capture-bucket');
  await createBucket(setupS3, 'results-bucket');
  const replay = await createQueue(setupSqs, 'replay');
  const collect = await createQueue(setupSqs, 'collect');

  // Multipart upload by hand, one reused part buffer: memory stays at one part.
  const uploadStart = performance.now();
  const upload = await setupS3.send(
    new CreateMultipartUploadCommand({ Bucket: 'capture-bucket', Key: KEY, ContentType: 'application/jsonl' }),
  );
  const parts: CompletedPart[] = [];
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(PART_BYTES);
    for (let partNumber = 1, position = 0; ; partNumber++) {
      const { bytesRead } = await handle.read(buffer, 0, PART_BYTES, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const out = await setupS3.send(
        new UploadPartCommand({
          Bucket: 'capture-bucket',
          Key: KEY,
          UploadId: upload.UploadId,
          PartNumber: partNumber,
          Body: buffer.subarray(0, bytesRead),
        }),
      );
      parts.push({ PartNumber: partNumber, ETag: out.ETag });
    }
  } finally {
    await handle.close();
  }
  const done = await setupS3.send(
    new CompleteMultipartUploadCommand({
      Bucket: 'capture-bucket',
      Key: KEY,
      UploadId: upload.UploadId,
      MultipartUpload: { Parts: parts },
    }),
  );
  const etag = (done.ETag ?? '').replace(/"/g, '');
  const uploadSeconds = round((performance.now() - uploadStart) / 1000);
  console.error(`uploaded in ${parts.length} parts in ${uploadSeconds} s, ETag ${etag}`);

  // ---- the handler, with metered clients ---------------------------------------------------

  const meter = new AwsMeter();
  const s3 = meter.attach(new S3Client(awsClientConfig(moto.endpoint)), 'ingest');
  const rangeFile = rangesFromFile ? await open(file, 'r') : null;
  const local = rangeFile ? serveRangesFromFile(s3, 'capture-bucket', KEY, rangeFile, generated.bytes, etag) : null;
  const sqs = meter.attach(new SQSClient(awsClientConfig(moto.endpoint)), 'ingest');
  const deps = createDeps({
    env: {
      [ENV.resultsBucket]: 'results-bucket',
      [ENV.replayQueueUrl]: replay.url,
      [ENV.collectQueueUrl]: collect.url,
      [ENV.targets]: JSON.stringify([{ name: 'A', url: 'http://127.0.0.1:9/' }]),
      [ENV.leadMs]: '20000',
      [ENV.forceStreaming]: 'true',
    },
    s3,
    sqs,
  });
  const handler = makeIngestHandler(() => deps);
  const notification = {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: 'us-east-1',
        eventName: 'ObjectCreated:CompleteMultipartUpload',
        s3: {
          s3SchemaVersion: '1.0',
          bucket: { name: 'capture-bucket', arn: 'arn:aws:s3:::capture-bucket' },
          object: {
            key: encodeURIComponent(KEY).replace(/%2F/g, '/').replace(/%20/g, '+'),
            size: generated.bytes,
            eTag: etag,
          },
        },
      },
    ],
  };
  const event: SQSEvent = {
    Records: [
      {
        messageId: 'bench-1',
        receiptHandle: 'bench-1',
        body: JSON.stringify(notification),
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: String(Date.now()),
          SenderId: 'bench',
          ApproximateFirstReceiveTimestamp: String(Date.now()),
        },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:ingest',
        awsRegion: 'us-east-1',
      },
    ],
  };
  const deadline = Date.now() + deployed.timeoutSeconds * 1000;
  const context = {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'ingest',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:ingest',
    memoryLimitInMB: String(deployed.memoryMb),
    awsRequestId: 'bench-ingest-1',
    logGroupName: '/aws/lambda/ingest',
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  } satisfies Context;

  // ---- measurement -------------------------------------------------------------------------

  gc?.();
  const baseline = process.memoryUsage();
  let peakRss = baseline.rss;
  let peakHeap = baseline.heapUsed;
  let firstSendMs: number | null = null;
  const t0 = performance.now();
  const timeline: { s: number; rssMb: number; heapMb: number; s3Gets: number; shardMessages: number }[] = [];
  const shardMessages = () =>
    meter
      .operations({ service: 'SQS', resource: 'replay' })
      .reduce((n, c) => n + (c.operation.startsWith('Send') ? c.messages : 0), 0);
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
    if (firstSendMs === null && shardMessages() > 0) firstSendMs = performance.now() - t0;
  };
  const sampler = setInterval(sample, 50);
  const tracer = setInterval(() => {
    const m = process.memoryUsage();
    const point = {
      s: round((performance.now() - t0) / 1000),
      rssMb: round(m.rss / MB),
      heapMb: round(m.heapUsed / MB),
      s3Gets: meter.totals().s3.get,
      shardMessages: shardMessages(),
    };
    timeline.push(point);
    console.error(`progress ${JSON.stringify(point)}`);
  }, 10_000);

  let outcome: { ok: true; response: SQSBatchResponse | void } | { ok: false; error: string };
  let timer: NodeJS.Timeout | undefined;
  try {
    const response = await Promise.race([
      handler(event, context),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`benchmark timeout: the handler ran longer than ${timeoutS} s`)),
          timeoutS * 1000,
        );
      }),
    ]);
    outcome = { ok: true, response };
  } catch (error) {
    const inner = (error as { recordErrors?: unknown[] }).recordErrors ?? [];
    const text = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    outcome = { ok: false, error: [text(error), ...inner.map(text)].join(' | ') };
  } finally {
    clearTimeout(timer);
  }
  const wallSeconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  clearInterval(tracer);
  sample();
  await rangeFile?.close();

  const attrs =
    (
      await setupSqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: replay.url,
          AttributeNames: [
            'ApproximateNumberOfMessages',
            'ApproximateNumberOfMessagesDelayed',
            'ApproximateNumberOfMessagesNotVisible',
          ],
        }),
      )
    ).Attributes ?? {};
  const inQueue =
    Number(attrs.ApproximateNumberOfMessages ?? 0) +
    Number(attrs.ApproximateNumberOfMessagesDelayed ?? 0) +
    Number(attrs.ApproximateNumberOfMessagesNotVisible ?? 0);
  const totals = meter.totals();
  const failedItems = outcome.ok ? (outcome.response?.batchItemFailures ?? []).length : 1;
  const result = {
    benchmark: 'ingest-large',
    node: process.version,
    capture: {
      file,
      megabytes: round(generated.bytes / MB),
      records: generated.records,
      ratePerSecond: rate,
      generateSeconds: generated.seconds,
      reused: generated.reused,
    },
    upload: { parts: parts.length, partMb: PART_BYTES / MB, seconds: uploadSeconds },
    rangedGetsFromLocalFile: local ? local.served() : 0,
    ingest: {
      ok: outcome.ok && failedItems === 0,
      ...(outcome.ok ? { batchItemFailures: failedItems } : { error: outcome.error }),
      wallSeconds: round(wallSeconds, 2),
      firstShardSentAfterSeconds: firstSendMs === null ? null : round(firstSendMs / 1000, 2),
      baselineRssMb: round(baseline.rss / MB),
      peakRssMb: round(peakRss / MB),
      peakRssAboveBaselineMb: round((peakRss - baseline.rss) / MB),
      baselineHeapMb: round(baseline.heapUsed / MB),
      peakHeapUsedMb: round(peakHeap / MB),
      functionMemoryMb: deployed.memoryMb,
      functionTimeoutSeconds: deployed.timeoutSeconds,
    },
    shardMessages: { sent: shardMessages(), inReplayQueue: inQueue },
    aws: {
      sqsBilledRequests: totals.sqs.billed,
      sqsPayloadMb: round(totals.sqs.payloadBytes / MB),
      s3PutClass: totals.s3.put,
      s3GetClass: totals.s3.get,
      operations: meter.operations().map(({ service, operation, resource, calls, errors, billed, messages }) => ({
        service,
        operation,
        resource,
        calls,
        errors,
        billed,
        messages,
      })),
    },
    timeline,
  };
  console.log(JSON.stringify(result, null, 2));
  if (!result.ingest.ok) exitCode = 1;
} finally {
  await moto.stop();
  if (!keep) rmSync(file, { force: true });
}
process.exit(exitCode);
