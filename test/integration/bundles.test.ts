/**
 * The code the stack deploys, run as Lambda runs it: the app is synthesized (`cdk synth`,
 * offline, esbuild bundling) into a temporary directory, each function's asset is found from
 * the template, and each bundle's index.js is loaded in its own fresh `node` process
 * (test/support/invoke-bundle.mjs) with nothing but Node's built-in modules to lean on: no
 * node_modules above it, no tsx. A missing dependency, an ESM/CJS mix-up or an import esbuild
 * could not follow fails here, not in AWS. The functions' synthesized environment is used,
 * with the resource references pointed at moto and the target at the mock server; the SDK
 * reaches moto through AWS_ENDPOINT_URL, via a small recording proxy so the test can see how
 * S3 was addressed and by which SDK.
 *
 * The flow, with real events: the describe below.
 */
import {
  GetObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runPrefix, runRecordKey, resultsKey, targetPrefix } from '../../lambdas/core/pipeline/keys';
import { startMockServer, type MockServer } from '../../lambdas/mocks/mock-server';
import { createBucket, createQueue, drainQueue, notifyQueueOnObjectCreated } from '../support/aws-fixtures';
import { emfLines, emfProblems } from '../support/emf';
import { emulatedLambdaEnv } from '../support/lambda-env';
import { awsClientConfig, describeWithMoto, startMoto, type Moto } from '../support/moto';
import { REPO_ROOT } from '../support/processes';
import { toSqsRecord } from '../support/sqs-event-source';
import {
  SYNTH_TEST_TIMEOUT_MS,
  sharedSynthesis,
  type SynthesizedApp,
  type SynthesizedFunction,
} from '../support/synth';

const RUNNER = join(REPO_ROOT, 'test/support/invoke-bundle.mjs');
const CAPTURE_FILE = join(
  REPO_ROOT,
  'samples/datacapture/demo-endpoint/AllTraffic/2026/04/29/00/14-03-887-0a1b2c3d.jsonl',
);
const CAPTURE_KEY = 'datacapture/demo-endpoint/AllTraffic/2026/04/29/00/14-03-887-0a1b2c3d.jsonl';
const CAPTURE_BUCKET = 'capture-bucket';
const RESULTS_BUCKET = 'results-bucket';
const REGION = 'us-east-1';
/**
 * The synthesized lead (cdk.json: 20 s) would make the fire bundle wait 20 s for the first
 * due time; 6 s still leaves the test time to drain the replay queue before anything is due.
 */
const TEST_LEAD_MS = '6000';
const INVOKE_TIMEOUT_MS = 90_000;

/**
 * The `aws-sdk-js/<version>` an S3 client of this repository's installed SDK puts in its
 * User-Agent (the version built into the SDK, which can differ from its package.json).
 */
async function installedSdkUserAgent(): Promise<string> {
  const client = new S3Client({
    region: REGION,
    endpoint: 'http://127.0.0.1:9',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    maxAttempts: 1,
  });
  let userAgent = '';
  client.middlewareStack.add(
    () => async (args) => {
      userAgent = String((args.request as { headers?: Record<string, string> }).headers?.['user-agent'] ?? '');
      throw new Error('captured, not sent');
    },
    { step: 'finalizeRequest' },
  );
  await client.send(new ListBucketsCommand({})).catch(() => undefined);
  client.destroy();
  const token = /aws-sdk-js\/\S+/.exec(userAgent)?.[0];
  if (!token) throw new Error(`no aws-sdk-js/<version> in the installed SDK's User-Agent "${userAgent}"`);
  return token;
}

interface SeenRequest {
  host: string;
  method: string;
  path: string;
  userAgent: string;
}

interface RecordingProxy {
  /** `http://localhost:<port>`: a host name, so the SDK would address S3 buckets virtual-hosted unless told to use paths. */
  endpoint: string;
  host: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** Forwards everything to moto and remembers each request's Host, path and User-Agent. */
async function startRecordingProxy(upstreamPort: number): Promise<RecordingProxy> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    seen.push({
      host: req.headers.host ?? '',
      method: req.method ?? '',
      path: req.url ?? '',
      userAgent: String(req.headers['user-agent'] ?? ''),
    });
    const headers: IncomingHttpHeaders = { ...req.headers };
    delete headers.expect; // this server has already answered 100-continue
    const upstream = httpRequest(
      { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(String(error));
    });
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://localhost:${port}`,
    host: `localhost:${port}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

interface Outcome {
  ok: boolean;
  response?: unknown;
  phase?: string;
  errorType?: string;
  errorMessage?: string;
  stack?: string;
  loadMs?: number;
  invokeMs?: number;
  modules?: string[];
}

interface Invocation {
  outcome: Outcome;
  /** The function's own output (its structured logs), for failure messages. */
  logs: string;
}

/** One cold invocation: a fresh `node` loads the bundle and invokes its handler once. */
async function invokeBundle(fn: SynthesizedFunction, env: NodeJS.ProcessEnv, event: unknown): Promise<Invocation> {
  const child = spawn(
    process.execPath,
    [RUNNER, fn.assetDir, fn.handler, '--timeout-seconds', String(fn.timeoutSeconds ?? 900)],
    {
      cwd: fn.assetDir, // /var/task on Lambda
      env,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    },
  );
  let logs = '';
  let result = '';
  const keep = (chunk: Buffer) => {
    logs = (logs + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  (child.stdio[3] as Readable).on('data', (chunk: Buffer) => (result += chunk.toString('utf8')));
  child.stdin!.end(JSON.stringify(event));
  const timer = setTimeout(() => child.kill('SIGKILL'), INVOKE_TIMEOUT_MS);
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  if (!result.trim())
    throw new Error(`${fn.path}: the runner reported nothing (exit ${code}, signal ${signal}):\n${logs}`);
  return { outcome: JSON.parse(result) as Outcome, logs };
}

/** The invocation succeeded, loaded nothing but the bundle itself, and failed no record. */
function expectCleanInvocation(fn: SynthesizedFunction, inv: Invocation): void {
  if (!inv.outcome.ok) {
    throw new Error(
      `${fn.path} failed in ${inv.outcome.phase}: ${inv.outcome.errorType}: ` +
        `${inv.outcome.errorMessage}\n${inv.outcome.stack ?? ''}\n--- function output ---\n${inv.logs}`,
    );
  }
  expect(inv.outcome.modules, 'files loaded besides the bundle (resolved outside it)').toEqual([
    join(fn.assetDir, 'index.js'),
  ]);
  expect(inv.outcome.response, inv.logs).toEqual({ batchItemFailures: [] });
  // On Node 22, the functions' runtime, the bundled SDK has no Node-version notice to give.
  expect(inv.logs).not.toContain('NodeVersionSupportWarning');
}

function sqsEvent(messages: Message[], queueArn: string): SQSEvent {
  return { Records: messages.map((m) => toSqsRecord(m, queueArn, REGION)) };
}

interface ShardBody {
  kind: string;
  runId: string;
  target: string;
  shardId: string;
  firstDueNs: string;
  last: boolean;
  requests: { index: number }[];
}

/**
 * Flow, with real events: a capture file put on moto -> the S3 notification moto sends to
 * the ingest queue -> ingest bundle -> shard messages on the replay queue -> fire bundle
 * (first shard alone, then the rest as one batch) -> the mock target and the shards' results
 * -> the collect message fire sent -> collect bundle -> run_manifest.json.
 */
describeWithMoto('deployed Lambda bundles on emulated AWS (moto)', () => {
  let app: SynthesizedApp | undefined;
  let moto: Moto | undefined;
  let mock: MockServer | undefined;
  let proxy: RecordingProxy | undefined;
  let s3: S3Client;
  let sqs: SQSClient;
  let queues: Record<'ingest' | 'replay' | 'collect', { url: string; arn: string }>;
  let functions: Record<'ingest' | 'fire' | 'collect', SynthesizedFunction>;
  let targetName = '';
  // Carried from step to step.
  let runId = '';
  let accepted = 0;
  let shardMessages: Message[] = [];

  /** The function's synthesized environment, its resource references pointed at the emulators. */
  function environmentOf(fn: SynthesizedFunction): NodeJS.ProcessEnv {
    const targets = JSON.parse(String(fn.environment.TARGETS_JSON)) as { name: string; url: string }[];
    const rewritten: Record<string, string> = {
      RESULTS_BUCKET,
      REPLAY_QUEUE_URL: queues.replay.url,
      COLLECT_QUEUE_URL: queues.collect.url,
      TARGETS_JSON: JSON.stringify(targets.map((t) => ({ ...t, url: mock!.url }))),
    };
    const synthesized: Record<string, string> = {};
    for (const [name, value] of Object.entries(fn.environment)) {
      if (typeof value === 'string') synthesized[name] = value;
      else if (!(name in rewritten))
        throw new Error(
          `${fn.path}: ${name} is a CloudFormation expression (${JSON.stringify(value)}) this test does not point at an emulator yet`,
        );
    }
    return {
      ...synthesized,
      ...rewritten,
      LEAD_MS: TEST_LEAD_MS,
      ...emulatedLambdaEnv({
        awsEndpoint: proxy!.endpoint,
        region: REGION,
        runtime: fn.runtime,
        functionName: fn.logicalId,
        memoryMb: fn.memorySize ?? 128,
        taskRoot: fn.assetDir,
      }),
    };
  }

  async function text(bucket: string, key: string): Promise<string> {
    return (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
  }

  async function keys(prefix: string): Promise<string[]> {
    return ((await s3.send(new ListObjectsV2Command({ Bucket: RESULTS_BUCKET, Prefix: prefix }))).Contents ?? []).map(
      (o) => o.Key!,
    );
  }

  beforeAll(async () => {
    // Synthesis (with esbuild bundling: the slow part) once for the file, alongside moto.
    const [synth, emulator] = await Promise.allSettled([sharedSynthesis(), startMoto()]);
    if (synth.status === 'fulfilled') app = synth.value;
    if (emulator.status === 'fulfilled') moto = emulator.value;
    if (synth.status === 'rejected') throw synth.reason;
    if (emulator.status === 'rejected') throw emulator.reason;
    const a = app!;
    functions = {
      ingest: a.fn(/\/Ingest\/Resource$/),
      fire: a.fn(/\/Fire\/Resource$/),
      collect: a.fn(/\/Collect\/Resource$/),
    };

    s3 = new S3Client(awsClientConfig(moto!.endpoint));
    sqs = new SQSClient(awsClientConfig(moto!.endpoint));
    mock = await startMockServer({ ttftMs: 20, itlMs: 4, outputTokens: 6 });
    proxy = await startRecordingProxy(moto!.port);
    await createBucket(s3, CAPTURE_BUCKET);
    await createBucket(s3, RESULTS_BUCKET);
    queues = {
      ingest: await createQueue(sqs, 'ingest', { visibilityTimeoutSeconds: 60 }),
      replay: await createQueue(sqs, 'replay', { visibilityTimeoutSeconds: 120 }),
      collect: await createQueue(sqs, 'collect', { visibilityTimeoutSeconds: 60 }),
    };
    await notifyQueueOnObjectCreated(s3, {
      bucket: CAPTURE_BUCKET,
      queueArn: queues.ingest.arn,
      prefix: 'datacapture/',
    });
    targetName = (JSON.parse(String(functions.ingest.environment.TARGETS_JSON)) as { name: string }[])[0]!.name;
  }, SYNTH_TEST_TIMEOUT_MS);

  afterAll(async () => {
    await proxy?.close();
    await mock?.close();
    await moto?.stop();
    app?.cleanup();
  });

  it('synthesizes three Node 22 arm64 functions, each a self-contained index.js with its source map', () => {
    for (const fn of Object.values(functions)) {
      expect(fn, fn.path).toMatchObject({ handler: 'index.handler', runtime: 'nodejs22.x', architectures: ['arm64'] });
      expect(fn.assetDir.startsWith(app!.outdir)).toBe(true);
      const code = readFileSync(join(fn.assetDir, 'index.js'), 'utf8');
      expect(code).toMatch(/\/\/# sourceMappingURL=index\.js\.map\s*$/);
      expect(JSON.parse(readFileSync(join(fn.assetDir, 'index.js.map'), 'utf8'))).toHaveProperty('mappings');
      // The AWS SDK is inside (bundleAwsSDK), not left to the Lambda runtime's copy.
      expect(code, `${fn.path} requires the AWS SDK from outside the bundle`).not.toMatch(
        /require\("@aws-sdk\/client-/,
      );
      for (const name of ['RESULTS_BUCKET', 'REPLAY_QUEUE_URL', 'COLLECT_QUEUE_URL', 'TARGETS_JSON'])
        expect(fn.environment, fn.path).toHaveProperty(name);
    }
  });

  it('ingest bundle: an S3 notification for a capture file puts its shards on the replay queue', async () => {
    await s3.send(new PutObjectCommand({ Bucket: CAPTURE_BUCKET, Key: CAPTURE_KEY, Body: readFileSync(CAPTURE_FILE) }));
    // What moto delivered: the s3:TestEvent from configuring the notification, and the ObjectCreated record.
    const delivered = await drainQueue(sqs, queues.ingest.url, { count: 2, timeoutMs: 15_000 });
    expect(delivered.map((m) => m.Body).join('\n')).toContain(CAPTURE_KEY.split('/').pop()!);

    const inv = await invokeBundle(
      functions.ingest,
      environmentOf(functions.ingest),
      sqsEvent(delivered, queues.ingest.arn),
    );
    expectCleanInvocation(functions.ingest, inv);

    // The run, by its ingest report (what users read); then its record (the pipeline's state).
    const reports = (await keys('runs/')).filter((k) => k.endsWith('/ingest_report.json'));
    expect(reports, inv.logs).toHaveLength(1);
    runId = reports[0]!.slice('runs/'.length, -'/ingest_report.json'.length);
    expect(reports[0]).toBe(`${runPrefix(runId)}ingest_report.json`);
    const run = JSON.parse(await text(RESULTS_BUCKET, runRecordKey(runId))) as {
      runId: string;
      shards: { shardId: string; requests: number }[];
      targets: string[];
    };
    expect(run).toMatchObject({ runId, targets: [targetName] });
    const report = JSON.parse(await text(RESULTS_BUCKET, reports[0]!)) as {
      files: { file: string }[];
      totals: { accepted: number };
    };
    expect(report.files[0]!.file).toBe(`s3://${CAPTURE_BUCKET}/${CAPTURE_KEY}`);
    accepted = report.totals.accepted;
    expect(accepted).toBeGreaterThan(0);

    // Shard messages are delayed (whole seconds) to reach a worker `lead` before they are due.
    shardMessages = await drainQueue(sqs, queues.replay.url, { count: run.shards.length, timeoutMs: 15_000 });
    const bodies = shardMessages.map((m) => JSON.parse(m.Body!) as ShardBody);
    expect(bodies.map((b) => b.shardId).sort()).toEqual(run.shards.map((s) => s.shardId).sort());
    expect(bodies.every((b) => b.kind === 'shard' && b.runId === runId && b.target === targetName)).toBe(true);
    expect(bodies.reduce((n, b) => n + b.requests.length, 0)).toBe(accepted);
  }, 60_000);

  it('fire bundle: shard messages from the queue reach the mock target, and each shard leaves its results', async () => {
    expect(shardMessages.length, 'needs the shard messages of the ingest step').toBeGreaterThan(0);
    const byDue = [...shardMessages].sort((a, b) =>
      BigInt((JSON.parse(a.Body!) as ShardBody).firstDueNs) < BigInt((JSON.parse(b.Body!) as ShardBody).firstDueNs)
        ? -1
        : 1,
    );
    const [first, ...rest] = byDue as [Message, ...Message[]];
    const firstBody = JSON.parse(first.Body!) as ShardBody;

    // One message alone: exactly its requests are sent, and its results written.
    const one = await invokeBundle(functions.fire, environmentOf(functions.fire), sqsEvent([first], queues.replay.arn));
    expectCleanInvocation(functions.fire, one);
    expect(mock!.requests, one.logs).toHaveLength(firstBody.requests.length);
    const lines = (await text(RESULTS_BUCKET, resultsKey(runId, targetName, firstBody.shardId))).trim().split('\n');
    expect(lines).toHaveLength(firstBody.requests.length);

    // The rest as one batch, as the event source mapping would deliver them.
    if (rest.length > 0) {
      const batch = await invokeBundle(
        functions.fire,
        environmentOf(functions.fire),
        sqsEvent(rest, queues.replay.arn),
      );
      expectCleanInvocation(functions.fire, batch);
    }
    expect(mock!.requests).toHaveLength(accepted);
    expect(new Set(mock!.requests.map((r) => r.headers['x-request-id'])).size).toBe(accepted);
    const written = await keys('');
    for (const m of shardMessages)
      expect(written).toContain(resultsKey(runId, targetName, (JSON.parse(m.Body!) as ShardBody).shardId));
  }, 90_000);

  it('collect bundle: the collect message fire sent finalises the run into run_manifest.json', async () => {
    expect(accepted, 'needs the ingest and fire steps').toBeGreaterThan(0);
    // On the collect queue: the ingest's deadline message (it re-delays itself when received
    // early) and the one the last shard's worker sent, asking for collection now.
    const delivered = await drainQueue(sqs, queues.collect.url, { count: 2, timeoutMs: 15_000 });
    const bodies = delivered.map(
      (m) => JSON.parse(m.Body!) as { kind: string; runId: string; target: string; notBeforeNs: string },
    );
    expect(
      bodies.every((b) => b.kind === 'collect' && b.runId === runId && b.target === targetName),
      JSON.stringify(bodies),
    ).toBe(true);
    expect(
      bodies.filter((b) => BigInt(b.notBeforeNs) > BigInt(Date.now()) * 1_000_000n),
      'the deadline message',
    ).toHaveLength(1);
    const message = delivered[bodies.findIndex((b) => b.notBeforeNs === '0')];
    expect(message, `no collect-now message from the fire bundle: ${JSON.stringify(bodies)}`).toBeDefined();

    const inv = await invokeBundle(
      functions.collect,
      environmentOf(functions.collect),
      sqsEvent([message!], queues.collect.arn),
    );
    expectCleanInvocation(functions.collect, inv);
    const manifest = JSON.parse(await text(RESULTS_BUCKET, `${targetPrefix(runId, targetName)}run_manifest.json`));
    expect(manifest, inv.logs).toMatchObject({ scheduled: accepted, succeeded: accepted, failed: 0, balanced: true });
    const records = (await text(RESULTS_BUCKET, `${targetPrefix(runId, targetName)}profile_export.jsonl`))
      .trim()
      .split('\n');
    expect(records).toHaveLength(accepted);
    // The run's CloudWatch metrics, written by the bundled Powertools Metrics on standard output as EMF (issue 34).
    const docs = emfLines([inv.logs]);
    expect(
      docs.flatMap((d) => emfProblems(d)),
      inv.logs,
    ).toEqual([]);
    expect(
      docs.find((d) => d.Target === targetName),
      inv.logs,
    ).toMatchObject({
      Stack: String(functions.collect.environment.STACK_NAME),
      RequestsScheduled: accepted,
      RequestsSucceeded: accepted,
      RequestsLost: 0,
    });
  }, 60_000);

  it('the bundles reached S3 through AWS_ENDPOINT_URL, path-style (S3_FORCE_PATH_STYLE=true), with the SDK we test', async () => {
    const s3Requests = proxy!.seen.filter(
      (r) => r.path.startsWith(`/${RESULTS_BUCKET}`) || r.path.startsWith(`/${CAPTURE_BUCKET}`),
    );
    expect(s3Requests.length).toBeGreaterThan(0);
    // Virtual-hosted addressing would have sent Host: results-bucket.localhost:<port> (or failed to resolve it).
    expect(new Set(proxy!.seen.map((r) => r.host))).toEqual(new Set([proxy!.host]));
    // Bundled, the SDK is the one in package-lock.json, not the Lambda runtime's copy.
    const sdk = await installedSdkUserAgent();
    for (const r of s3Requests) expect(r.userAgent).toContain(sdk);
  });
});
