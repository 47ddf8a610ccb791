/**
 * What the serverless pipeline costs per million replayed requests, measured end to end on
 * moto_server: a generated capture file (default 60 s at 200 requests/s) goes through the
 * real ingest, fire and collect handlers with metered AWS clients, to the bundled mock
 * target. Counted:
 *
 * What is counted, what is not, and the options: beside the flags below.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCollectHandler } from '../lambdas/handlers/collect';
import { makeFireHandler } from '../lambdas/handlers/fire';
import { makeIngestHandler } from '../lambdas/handlers/ingest';
import { startMockServer } from '../lambdas/mocks/mock-server';
import { ENV } from '../lambdas/runtime/config';
import { createDeps } from '../lambdas/runtime/deps';
import { CaptureReplayStack } from '../lib/capture-replay-stack';
import { parseDeploymentConfig } from '../lib/config';
import { AwsMeter, LambdaMeter } from '../test/support/aws-meter';
import { createBucket, createQueueWithDlq, notifyQueueOnObjectCreated } from '../test/support/aws-fixtures';
import { captureBuffer } from '../test/support/capture-gen';
import { awsClientConfig, startMoto } from '../test/support/moto';
import { startSqsEventSource, type EventSource } from '../test/support/sqs-event-source';
import { flag } from './args';

process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
// The in-process collector's metrics (EMF on stdout) would land inside the JSON this prints.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

/**
 * - SQS billed requests (each 64 KB chunk of a payload is a request; a batch's payload is
 *   its total): the handlers' sends, and the event source mappings' receives that returned
 *   messages and their deletes. Empty receives are reported apart: they are idle polling,
 *   proportional to time, not traffic, and this harness polls far more often than Lambda.
 * - S3 requests by class (PUT, COPY, POST, LIST vs GET and others), by the handlers.
 * - Lambda requests (invocations) and GB-seconds: each invocation's wall time (rounded up to
 *   1 ms, as billed) x the function's configured memory, read from the synthesized CDK
 *   template (lib/stateless.ts).
 *
 * Then dollars at us-east-1 list prices (sources in the output). Not counted: the capture
 * upload (SageMaker's PUT), the S3 -> SQS notification (one per file), free tiers, data
 * transfer, CloudWatch Logs.
 *
 *   npm run bench:cost -- [--rate 200] [--seconds 60] [--seed 7] [--lead-ms 20000] [--fire-concurrency N] [--targets 1]
 *
 * `--targets n` replays the capture to n targets (A, B, ...: the same mock server), as
 * sim/ simulates it (bench/RESULTS.md, "The simulator against moto").
 *
 * The functions run as deployed for the benchmark's rate: memory, batch sizes, batching
 * windows, maximum concurrency and the tuning environment come from the stack synthesized with
 * `peakRequestsPerSecond` = --rate (lib/sizing.ts); --fire-concurrency only lowers the fire
 * function's concurrency on this machine.
 */
const rate = flag('--rate', 200);
const seconds = flag('--seconds', 60);
const seed = flag('--seed', 7);
const leadMs = flag('--lead-ms', 20_000);
const fireConcurrency = flag('--fire-concurrency', 1000);
const bodyBytes = flag('--body-bytes', 1300);
const TARGETS = Array.from({ length: flag('--targets', 1) }, (_, i) => String.fromCharCode(65 + i));
// A short request timeout and grace: the run's deadline message (one per run and target)
// then arrives within the benchmark instead of minutes later; its cost is the same.
const REQUEST_TIMEOUT_MS = 30_000;
const GRACE_MS = 10_000;
const KEY = 'datacapture/cost-endpoint/AllTraffic/2026/04/29/00/pipeline-cost.jsonl';
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
const MB = 1024 * 1024;

/**
 * us-east-1 list prices. The official pages (first source of each) render their price tables
 * from data at view time; the figures were checked against the other sources listed.
 */
const PRICES = {
  sqsStandardPerMillionRequests: {
    usd: 0.4,
    note: 'standard queue, first 100 billion requests/month; each 64 KB chunk of a payload is billed as one request',
    sources: [
      'https://aws.amazon.com/sqs/pricing/',
      'https://unanswered.io/guide/aws-sqs-pricing-and-cost-optimization',
      'https://www.almeta.io/en/blog/aws-lambda-and-sqs-payload-limitation/',
    ],
  },
  s3StandardPutCopyPostListPerThousand: {
    usd: 0.005,
    sources: [
      'https://aws.amazon.com/s3/pricing/',
      'https://c3x.dev/blog/s3-request-fees-explained',
      'https://awsi.click/en/articles/s3-request-pricing-get-put-difference/',
    ],
  },
  s3StandardGetAndOtherPerThousand: {
    usd: 0.0004,
    sources: [
      'https://aws.amazon.com/s3/pricing/',
      'https://c3x.dev/blog/s3-request-fees-explained',
      'https://awsi.click/en/articles/s3-request-pricing-get-put-difference/',
    ],
  },
  lambdaArmPerGbSecond: {
    usd: 0.0000133334,
    note: 'arm64, first 7.5 billion GB-seconds/month',
    sources: [
      'https://aws.amazon.com/lambda/pricing/',
      'https://git.mcrn.ar/mariano/lambda_local_runner/src/branch/main/docs/lambdas-md/lambda-13-cost.md',
      'https://app.unpkg.com/artillery@2.0.28/files/lib/platform/aws-lambda/prices.js',
    ],
  },
  lambdaPerMillionRequests: {
    usd: 0.2,
    sources: [
      'https://aws.amazon.com/lambda/pricing/',
      'https://git.mcrn.ar/mariano/lambda_local_runner/src/branch/main/docs/lambdas-md/lambda-13-cost.md',
    ],
  },
} as const;

type FunctionName = 'ingest' | 'fire' | 'collect';
const FUNCTIONS: readonly FunctionName[] = ['ingest', 'fire', 'collect'];
const LOGICAL_ID_PREFIX: Record<FunctionName, string> = {
  ingest: 'StatelessIngest',
  fire: 'StatelessFire',
  collect: 'StatelessCollect',
};

interface DeployedFunction {
  memoryMb: number;
  batchSize: number;
  /** The event source's MaximumBatchingWindowInSeconds (0: none). */
  batchingWindowS: number;
  maxConcurrency: number;
  /** The literal environment variables (tuning: MAX_SHARD_REQUESTS, SLOT_MS, ...); resource names are replaced locally. */
  env: Record<string, string>;
}

/**
 * Each function as deployed for this rate: the stack synthesized (no bundling) with the
 * benchmark's rate as the declared peak, and each function's MemorySize, its event source's
 * BatchSize, MaximumBatchingWindowInSeconds and MaximumConcurrency, and its literal environment
 * read from the template.
 */
function deployedShape(): { functions: Record<FunctionName, DeployedFunction>; source: string } {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-cost-'));
  try {
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const config = parseDeploymentConfig({
      peakRequestsPerSecond: rate,
      leadSeconds: Math.round(leadMs / 1000),
      requestTimeoutSeconds: REQUEST_TIMEOUT_MS / 1000,
      graceSeconds: GRACE_MS / 1000,
      targets: TARGETS.map((name) => ({ name, url: 'https://target.example.com' })),
    });
    const template = Template.fromStack(new CaptureReplayStack(app, 'CostBench', { config }));
    const lambdas = template.findResources('AWS::Lambda::Function') as Record<
      string,
      { Properties: { MemorySize?: number; Environment?: { Variables?: Record<string, unknown> } } }
    >;
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')) as {
      Properties: {
        FunctionName?: { Ref?: string };
        BatchSize?: number;
        MaximumBatchingWindowInSeconds?: number;
        ScalingConfig?: { MaximumConcurrency?: number };
      };
    }[];
    const functions = {} as Record<FunctionName, DeployedFunction>;
    for (const name of FUNCTIONS) {
      const hit = Object.entries(lambdas).find(([id]) => id.startsWith(LOGICAL_ID_PREFIX[name]));
      if (!hit) throw new Error(`no ${LOGICAL_ID_PREFIX[name]}* function in the template`);
      const [logicalId, fn] = hit;
      const mapping = mappings.find((m) => m.Properties.FunctionName?.Ref === logicalId);
      if (!mapping) throw new Error(`no event source mapping for ${logicalId}`);
      const env = Object.fromEntries(
        Object.entries(fn.Properties.Environment?.Variables ?? {}).filter(
          (e): e is [string, string] => typeof e[1] === 'string',
        ),
      );
      functions[name] = {
        memoryMb: fn.Properties.MemorySize ?? 128, // CloudFormation's default
        batchSize: mapping.Properties.BatchSize ?? 10,
        batchingWindowS: mapping.Properties.MaximumBatchingWindowInSeconds ?? 0,
        maxConcurrency: mapping.Properties.ScalingConfig?.MaximumConcurrency ?? 1000,
        env,
      };
    }
    return {
      functions,
      source: `synthesized CDK template (CaptureReplayStack, peakRequestsPerSecond ${rate}, leadSeconds ${Math.round(leadMs / 1000)})`,
    };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

/** Deletes the s3:TestEvent from the ingest queue, if S3 (moto) sent one within a few seconds. */
async function drainTestEvent(sqsClient: SQSClient, queueUrl: string): Promise<void> {
  const until = Date.now() + 5000;
  while (Date.now() < until) {
    const { Messages = [] } = await sqsClient.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    for (const m of Messages) {
      if (!(m.Body ?? '').includes('"s3:TestEvent"'))
        throw new Error(`unexpected message on the ingest queue before the run: ${(m.Body ?? '').slice(0, 200)}`);
      await sqsClient.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
      return;
    }
  }
}

const { functions: deployed, source: memorySource } = deployedShape();
const memoryMb = Object.fromEntries(FUNCTIONS.map((f) => [f, deployed[f].memoryMb])) as Record<FunctionName, number>;
console.error(
  `as deployed (${memorySource}): ` +
    FUNCTIONS.map(
      (f) =>
        `${f} ${deployed[f].memoryMb} MB, batch ${deployed[f].batchSize}, window ${deployed[f].batchingWindowS} ` +
        `s, concurrency ${deployed[f].maxConcurrency}`,
    ).join('; '),
);

const capture = captureBuffer({
  ratePerSecond: rate,
  durationSeconds: seconds,
  startTime: Date.UTC(2026, 3, 29, 0, 3, 18),
  seed,
  bodyBytes,
});
const expected = Math.floor(rate * seconds);
console.error(`capture: ${expected} requests, ${round(capture.length / MB, 1)} MB`);

const moto = await startMoto();
const mock = await startMockServer({ ttftMs: 5, itlMs: 2, outputTokens: 4, preciseTimers: false });
const sources: EventSource[] = [];
let exitCode = 0;
try {
  const setupS3 = new S3Client(awsClientConfig(moto.endpoint));
  const setupSqs = new SQSClient(awsClientConfig(moto.endpoint));
  await createBucket(setupS3, 'capture-bucket');
  await createBucket(setupS3, 'results-bucket');
  // Visibility timeouts as deployed: 6x each function's timeout (lib/capture-replay-stack.ts).
  const queues = {
    ingest: await createQueueWithDlq(setupSqs, 'ingest', { visibilityTimeoutSeconds: 1800 }),
    fire: await createQueueWithDlq(setupSqs, 'replay', { visibilityTimeoutSeconds: 5400 }),
    collect: await createQueueWithDlq(setupSqs, 'collect', { visibilityTimeoutSeconds: 1800 }),
  };
  await notifyQueueOnObjectCreated(setupS3, {
    bucket: 'capture-bucket',
    queueArn: queues.ingest.arn,
    prefix: 'datacapture/',
  });
  // S3 answers the notification's configuration with an s3:TestEvent: once per deployment in
  // AWS, not per run, so it is taken off the queue before anything is metered.
  await drainTestEvent(setupSqs, queues.ingest.url);

  const meter = new AwsMeter();
  const lambdas = new LambdaMeter();
  const local = {
    [ENV.resultsBucket]: 'results-bucket',
    [ENV.replayQueueUrl]: queues.fire.url,
    [ENV.collectQueueUrl]: queues.collect.url,
    [ENV.targets]: JSON.stringify(TARGETS.map((name) => ({ name, url: mock.url }))),
    [ENV.leadMs]: String(leadMs),
    [ENV.graceMs]: String(GRACE_MS),
    [ENV.requestTimeoutMs]: String(REQUEST_TIMEOUT_MS),
    [ENV.forceStreaming]: 'true',
  };
  // Each function its own clients (as each Lambda function has), metered under its name.
  // The deployed environment's tuning, with this machine's buckets, queues and target.
  const depsFor = (name: FunctionName) =>
    createDeps({
      env: { ...deployed[name].env, ...local },
      s3: meter.attach(new S3Client(awsClientConfig(moto.endpoint)), name),
      sqs: meter.attach(new SQSClient(awsClientConfig(moto.endpoint)), name),
    });
  const ingestDeps = depsFor('ingest');
  const fireDeps = depsFor('fire');
  const collectDeps = depsFor('collect');
  const makers: Record<FunctionName, () => Handler> = {
    ingest: () => makeIngestHandler(() => ingestDeps),
    fire: () => makeFireHandler(() => fireDeps),
    collect: () => makeCollectHandler(() => collectDeps),
  };
  // Batch sizes, batching windows and concurrency as deployed; --fire-concurrency caps the fire function's on this machine.
  const asDeployed = (f: FunctionName, maxConcurrency = deployed[f].maxConcurrency) => ({
    batchSize: deployed[f].batchSize,
    batchingWindowMs: deployed[f].batchingWindowS * 1000,
    maxConcurrency,
  });
  const sourceOptions: Record<FunctionName, { batchSize: number; batchingWindowMs: number; maxConcurrency: number }> = {
    ingest: asDeployed('ingest'),
    fire: asDeployed('fire', Math.min(deployed.fire.maxConcurrency, fireConcurrency)),
    collect: asDeployed('collect'),
  };
  for (const name of FUNCTIONS) {
    sources.push(
      await startSqsEventSource({
        client: meter.attach(new SQSClient(awsClientConfig(moto.endpoint)), `esm-${name}`),
        queueUrl: queues[name].url,
        handler: lambdas.wrap(name, memoryMb[name], makers[name]),
        functionName: name,
        ...sourceOptions[name],
      }),
    );
  }

  const t0 = performance.now();
  await setupS3.send(new PutObjectCommand({ Bucket: 'capture-bucket', Key: KEY, Body: capture }));

  // Until the manifest exists and every queue is empty (the deadline message included).
  const deadline = Date.now() + (leadMs + seconds * 1000 + REQUEST_TIMEOUT_MS + GRACE_MS + 180_000);
  let manifestKey: string | null = null;
  const pending = async () => {
    let n = 0;
    for (const q of Object.values(queues)) {
      const a =
        (
          await setupSqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: q.url,
              AttributeNames: [
                'ApproximateNumberOfMessages',
                'ApproximateNumberOfMessagesDelayed',
                'ApproximateNumberOfMessagesNotVisible',
              ],
            }),
          )
        ).Attributes ?? {};
      n +=
        Number(a.ApproximateNumberOfMessages ?? 0) +
        Number(a.ApproximateNumberOfMessagesDelayed ?? 0) +
        Number(a.ApproximateNumberOfMessagesNotVisible ?? 0);
    }
    return n;
  };
  for (;;) {
    if (Date.now() > deadline)
      throw new Error(
        `pipeline not done in time: manifest ${manifestKey ?? 'missing'}, mock saw ${mock.requests.length}`,
      );
    const failed = sources.find((s) => s.stats.failedRecords > 0);
    if (failed)
      throw new Error(
        `a handler failed: ${failed.stats.errors.map((e) => (e instanceof Error ? e.message : String(e))).join('; ')}`,
      );
    const keys = (
      (await setupS3.send(new ListObjectsV2Command({ Bucket: 'results-bucket', Prefix: 'runs/' }))).Contents ?? []
    ).map((o) => o.Key!);
    manifestKey ??= keys.find((k) => k.endsWith('/A/run_manifest.json')) ?? null;
    const finalTargets = TARGETS.filter((t) => keys.some((k) => k.endsWith(`/${t}/run_manifest.json`))).length;
    if (manifestKey && finalTargets === TARGETS.length && (await pending()) === 0) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  await Promise.all(sources.map((s) => s.idle(2000)));
  const wallSeconds = (performance.now() - t0) / 1000;
  await Promise.all(sources.splice(0).map((s) => s.stop()));

  const manifest = JSON.parse(
    await (
      await setupS3.send(new GetObjectCommand({ Bucket: 'results-bucket', Key: manifestKey }))
    ).Body!.transformToString(),
  ) as {
    scheduled: number;
    succeeded: number;
    failed: number;
    dropped: number;
    balanced: boolean;
  };
  const replayed = mock.requests.length;
  const unique = new Set(mock.requests.map((r) => r.headers['x-request-id'])).size;
  if (replayed === 0) throw new Error('nothing was replayed');
  const perMillion = (n: number) => round((n * 1e6) / replayed, 1);

  // ---- counts --------------------------------------------------------------------------------
  const handlers = meter.totals({ label: FUNCTIONS });
  // The event source mappings' billed work: receives that returned messages, and deletes.
  // Left out: empty receives (idle polling) and the harness's one QueueArn lookup per queue.
  const pollerLabels = FUNCTIONS.map((f) => `esm-${f}`);
  const receives = meter.operations({ label: pollerLabels, operation: 'ReceiveMessage' });
  const pollerReceivesWithMessages = receives.reduce((n, c) => n + c.calls - c.emptyReceives, 0);
  const pollerEmptyReceives = receives.reduce((n, c) => n + c.emptyReceives, 0);
  const pollerBilled =
    receives.reduce((n, c) => n + c.billed - c.emptyReceives, 0) +
    meter.operations({ label: pollerLabels, operation: 'DeleteMessageBatch' }).reduce((n, c) => n + c.billed, 0);
  const pollerPayload = meter.totals({ label: pollerLabels }).sqs.payloadBytes;
  const sqsBilled = handlers.sqs.billed + pollerBilled;
  const lambdaStats = lambdas.stats();
  const invocations = lambdaStats.reduce((n, s) => n + s.invocations, 0);
  const gbSeconds = lambdaStats.reduce((n, s) => n + s.gbSeconds, 0);

  const per = {
    sqsBilledRequests: perMillion(sqsBilled),
    s3PutClassRequests: perMillion(handlers.s3.put),
    s3GetClassRequests: perMillion(handlers.s3.get),
    lambdaRequests: perMillion(invocations),
    lambdaGbSeconds: perMillion(gbSeconds),
  };
  const dollars = {
    sqs: (per.sqsBilledRequests / 1e6) * PRICES.sqsStandardPerMillionRequests.usd,
    s3Put: (per.s3PutClassRequests / 1000) * PRICES.s3StandardPutCopyPostListPerThousand.usd,
    s3Get: (per.s3GetClassRequests / 1000) * PRICES.s3StandardGetAndOtherPerThousand.usd,
    lambdaDuration: per.lambdaGbSeconds * PRICES.lambdaArmPerGbSecond.usd,
    lambdaRequests: (per.lambdaRequests / 1e6) * PRICES.lambdaPerMillionRequests.usd,
  };
  const total = Object.values(dollars).reduce((a, b) => a + b, 0);

  const result = {
    benchmark: 'pipeline-cost',
    node: process.version,
    workload: {
      ratePerSecond: rate,
      seconds,
      targets: TARGETS.length,
      requests: expected,
      captureMb: round(capture.length / MB, 1),
      bodyBytes,
      leadMs,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      graceMs: GRACE_MS,
    },
    deployed: Object.fromEntries(
      FUNCTIONS.map((f) => [
        f,
        {
          memoryMb: deployed[f].memoryMb,
          batchSize: deployed[f].batchSize,
          batchingWindowS: deployed[f].batchingWindowS,
          maxConcurrency: deployed[f].maxConcurrency,
          localConcurrency: sourceOptions[f].maxConcurrency,
        },
      ]),
    ),
    outcome: {
      wallSeconds: round(wallSeconds, 1),
      replayed,
      uniqueRequestIds: unique,
      manifest: {
        scheduled: manifest.scheduled,
        succeeded: manifest.succeeded,
        failed: manifest.failed,
        dropped: manifest.dropped,
        balanced: manifest.balanced,
      },
    },
    measured: {
      sqs: {
        billedRequests: sqsBilled,
        handlerBilled: handlers.sqs.billed,
        pollerBilled,
        pollerReceivesWithMessages,
        emptyReceivesExcluded: pollerEmptyReceives,
        payloadMbSentAndReceived: round((handlers.sqs.payloadBytes + pollerPayload) / MB, 1),
      },
      s3: {
        putClass: handlers.s3.put,
        getClass: handlers.s3.get,
        free: handlers.s3.free,
        byFunction: Object.fromEntries(FUNCTIONS.map((f) => [f, meter.totals({ label: f }).s3])),
      },
      lambda: {
        memorySource,
        functions: lambdaStats.map((s) => ({
          name: s.name,
          memoryMb: s.memoryMb,
          invocations: s.invocations,
          errors: s.errors,
          billedSeconds: round(s.billedMs / 1000, 1),
          gbSeconds: round(s.gbSeconds, 1),
          peakConcurrency: s.instances,
        })),
        invocations,
        gbSeconds: round(gbSeconds, 1),
      },
      operations: meter
        .operations()
        .map(({ label, service, operation, resource, calls, errors, billed, messages, emptyReceives }) => ({
          label,
          service,
          operation,
          resource,
          calls,
          errors,
          billed,
          messages,
          emptyReceives,
        })),
    },
    perMillionReplayedRequests: {
      ...per,
      lambdaGbSecondsByFunction: Object.fromEntries(lambdaStats.map((s) => [s.name, perMillion(s.gbSeconds)])),
      usd: { ...Object.fromEntries(Object.entries(dollars).map(([k, v]) => [k, round(v, 3)])), total: round(total, 2) },
    },
    prices: PRICES,
  };
  console.log(JSON.stringify(result, null, 2));
  if (unique !== expected * TARGETS.length || !manifest.balanced) {
    console.error(
      `WARNING: replayed ${unique} unique of ${expected * TARGETS.length} requests; manifest balanced=${manifest.balanced}`,
    );
    exitCode = 1;
  }
} catch (error) {
  console.error(error);
  exitCode = 1;
} finally {
  await Promise.all(sources.map((s) => s.stop()));
  await mock.close();
  await moto.stop();
}
process.exit(exitCode);
