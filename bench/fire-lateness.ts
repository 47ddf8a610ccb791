/**
 * The fire function's own lateness, measured at the server (issue 19 item 4): the deployed
 * fire bundle (the app synthesized as `cdk synth` does it, esbuild with lib/replay-function.ts's
 * options, test/support/synth.ts), each invocation a fresh `node` process loading it as
 * Lambda's cold start does (test/support/invoke-bundle.mjs), fed by a stand-in for the SQS
 * event source (test/support/sqs-event-source.ts) on moto_server's replay queue, with the
 * batch size the stack synthesizes for the rate. The shards come from the real ingest handler
 * (planner and sharder) on the same captures as bench/server-lateness.ts (the CLI's), put on
 * moto's S3; the run starts one lead after the capture lands, the stack's lead (20 s by
 * default), so each invocation arrives about a lead before its first due time, as deployed.
 * The target is the same independent arrival-stamping server (bench/arrival-server.mjs, its
 * own process). Requests are sent as captured (forceStreaming off), as the CLI bench does.
 *
 * Per rate: lateness at the server (arrival - scheduled - the run's smallest), early arrivals,
 * lost (scheduled, never arrived) and doubled; per invocation the lateness of its first
 * request, p99 of its first second against the rest, and the TCP connections its process
 * opened to the target (counted in the process by a preloaded observer of node:net's
 * `net.client.socket` channel: it sees sockets, not the code that opens them), and how many of
 * them were opened after its first due time.
 *
 *   npm run bench:fire-lateness -- [--seconds 10] [--rates 200,1000] [--lead-seconds 20]
 *     [--cdk-out <dir>]   (an app already synthesized with `npx cdk synth -o <dir>`: no synthesis)
 *
 * Every process of the run (the invocations, moto, the server, this one) shares this
 * machine's CPUs, unlike Lambda, where each invocation has its own: the load average before
 * each rate is printed with it.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { makeIngestHandler } from '../lambdas/handlers/ingest';
import { resultsKey, runRecordKey } from '../lambdas/core/pipeline/keys';
import { ENV } from '../lambdas/runtime/config';
import { createDeps } from '../lambdas/runtime/deps';
import { CaptureReplayStack } from '../lib/capture-replay-stack';
import { parseDeploymentConfig } from '../lib/config';
import { createBucket, createQueueWithDlq, notifyQueueOnObjectCreated } from '../test/support/aws-fixtures';
import { emulatedLambdaEnv } from '../test/support/lambda-env';
import { awsClientConfig, startMoto, type Moto } from '../test/support/moto';
import { startSqsEventSource, type EventSource } from '../test/support/sqs-event-source';
import { readAssembly, synthesizeApp, type SynthesizedFunction } from '../test/support/synth';
import { flag } from './args';
import { BENCH_ROOT, fixed as f, quantile, serverView, startArrivalServer, writeCaptures, type SentRecord } from './lateness-common';

process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';

const seconds = flag('--seconds', 10);
const leadSeconds = flag('--lead-seconds', 20);
const ratesAt = process.argv.indexOf('--rates');
const rates = ratesAt === -1 ? [200, 1000] : (process.argv[ratesAt + 1] ?? '').split(',').map(Number);
const RUNNER = join(BENCH_ROOT, 'test/support/invoke-bundle.mjs');
const TARGET = 'target';
const REGION = 'us-east-1';
const work = mkdtempSync(join(tmpdir(), 'cr-fire-lateness-'));

/**
 * Preloaded into each invocation's process: the TCP connections it opens to the target
 * (PROBE_PORT) and when, and V8's garbage collections (start, duration, kind), written to
 * PROBE_OUT as the process exits. It only observes.
 */
const PROBE = `const dc = require('node:diagnostics_channel');
const { writeFileSync } = require('node:fs');
const { PerformanceObserver, performance } = require('node:perf_hooks');
const port = Number(process.env.PROBE_PORT);
const opened = [];
const gcs = [];
dc.subscribe('net.client.socket', ({ socket }) => socket.once('connect', () => { if (socket.remotePort === port) opened.push(Date.now()); }));
new PerformanceObserver((list) => { for (const e of list.getEntries()) gcs.push([performance.timeOrigin + e.startTime, e.duration, e.detail ? e.detail.kind : 0]); }).observe({ entryTypes: ['gc'] });
process.on('exit', () => writeFileSync(process.env.PROBE_OUT, JSON.stringify({ opened, gcs })));
`;
const probeFile = join(work, 'probe.cjs');
writeFileSync(probeFile, PROBE);

interface Deployed {
  fireEnv: Record<string, string>;
  ingestEnv: Record<string, string>;
  fireBatchSize: number;
  fireMemoryMb: number;
  fireTimeoutSeconds: number;
}

/** The fire and ingest functions as the stack synthesizes them for this rate (no bundling: the template only). */
function deployedFor(rate: number): Deployed {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-fire-lateness-'));
  try {
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const config = parseDeploymentConfig({
      captureBucket: 'capture-bucket',
      capturePrefix: 'datacapture/',
      targets: [{ name: TARGET, url: 'https://target.example.com' }],
      peakRequestsPerSecond: rate,
      leadSeconds,
      forceStreaming: false,
    });
    const template = Template.fromStack(new CaptureReplayStack(app, 'FireLateness', { config }));
    type Fn = { Properties: { MemorySize?: number; Timeout?: number; Environment?: { Variables?: Record<string, unknown> } } };
    const fns = Object.entries(template.findResources('AWS::Lambda::Function') as Record<string, Fn>);
    const literal = (fn: Fn) => Object.fromEntries(Object.entries(fn.Properties.Environment?.Variables ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
    const [fireId, fire] = fns.find(([id]) => id.startsWith('StatelessFire')) ?? [];
    const ingest = fns.find(([id]) => id.startsWith('StatelessIngest'))?.[1];
    if (!fire || !ingest) throw new Error('no fire or ingest function in the template');
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')) as { Properties: { FunctionName?: { Ref?: string }; BatchSize?: number } }[];
    const batch = mappings.find((m) => m.Properties.FunctionName?.Ref === fireId)?.Properties.BatchSize;
    return { fireEnv: literal(fire), ingestEnv: literal(ingest), fireBatchSize: batch ?? 10, fireMemoryMb: fire.Properties.MemorySize ?? 128, fireTimeoutSeconds: fire.Properties.Timeout ?? 3 };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

interface Invocation {
  shardIds: string[];
  ok: boolean;
  error: string | null;
  /** Epoch ms at which the target's connections were opened. */
  connectionsAtMs: number[];
  /** Garbage collections: epoch ms of the start, duration ms, V8's kind (4: mark-compact). */
  gcs: [number, number, number][];
  loadMs: number;
  cpuMs: number;
}

/** One cold invocation of the fire bundle: a fresh process, the event on stdin, its outcome on fd 3. */
async function invokeCold(fn: SynthesizedFunction, env: NodeJS.ProcessEnv, event: SQSEvent, n: number): Promise<{ invocation: Invocation; response: SQSBatchResponse }> {
  const probeOut = join(work, `probe-${n}.json`);
  const child = spawn(process.execPath, [RUNNER, fn.assetDir, fn.handler, '--timeout-seconds', String(fn.timeoutSeconds ?? 900)], {
    cwd: fn.assetDir,
    env: { ...env, NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --require ${probeFile}`.trim(), PROBE_OUT: probeOut },
    stdio: ['pipe', 'ignore', 'pipe', 'pipe'],
  });
  let result = '';
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4000)));
  (child.stdio[3] as Readable).on('data', (c: Buffer) => (result += c.toString('utf8')));
  child.stdin!.end(JSON.stringify(event));
  await once(child, 'close');
  const shardIds = event.Records.map((r) => (JSON.parse(r.body) as { shardId: string }).shardId);
  let probe: { opened: number[]; gcs: [number, number, number][] } = { opened: [], gcs: [] };
  try {
    probe = JSON.parse(readFileSync(probeOut, 'utf8')) as typeof probe;
  } catch {
    // the process died before its exit handler: no count
  }
  const outcome = (result.trim() ? JSON.parse(result) : { ok: false, errorMessage: `no outcome: ${stderr}` }) as { ok: boolean; response?: SQSBatchResponse; errorMessage?: string; loadMs?: number; cpuMs?: number };
  const invocation = { shardIds, ok: outcome.ok, error: outcome.ok ? null : (outcome.errorMessage ?? 'failed'), connectionsAtMs: probe.opened, gcs: probe.gcs, loadMs: outcome.loadMs ?? NaN, cpuMs: outcome.cpuMs ?? NaN };
  // A failed invocation fails its whole batch, as Lambda does.
  const response = outcome.ok && outcome.response ? outcome.response : { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
  return { invocation, response };
}

/** The environment of the deployed fire function, its resources pointed at moto and its target at the server. */
function fireEnvironment(fn: SynthesizedFunction, d: Deployed, local: Record<string, string>, moto: Moto, targetUrl: string): NodeJS.ProcessEnv {
  return {
    ...d.fireEnv,
    ...local,
    [ENV.targets]: JSON.stringify([{ name: TARGET, url: targetUrl }]),
    PROBE_PORT: new URL(targetUrl).port,
    ...emulatedLambdaEnv({ awsEndpoint: moto.endpoint, region: REGION, runtime: fn.runtime, functionName: 'fire', memoryMb: d.fireMemoryMb, taskRoot: fn.assetDir }),
  };
}

interface ShardResults {
  records: (SentRecord & { shardId: string })[];
  drops: Record<string, number>;
}

/** Waits for every shard's results object and reads them. */
async function readResults(s3: S3Client, runId: string, shardIds: string[], deadlineMs: number): Promise<ShardResults> {
  const out: ShardResults = { records: [], drops: {} };
  for (const shardId of shardIds) {
    for (;;) {
      try {
        const text = await (await s3.send(new GetObjectCommand({ Bucket: 'results-bucket', Key: resultsKey(runId, TARGET, shardId) }))).Body!.transformToString();
        for (const line of text.split('\n').filter(Boolean)) {
          const r = JSON.parse(line) as { kind: string; dropReason?: string; record?: { metadata: { x_request_id: string }; capture_replay: { scheduled_ns: string; schedule_lag_ms: number; wire_lag_ms: number | null } } };
          if (r.kind === 'drop') out.drops[r.dropReason ?? '?'] = (out.drops[r.dropReason ?? '?'] ?? 0) + 1;
          else if (r.record) out.records.push({ shardId, id: r.record.metadata.x_request_id, scheduledNs: BigInt(r.record.capture_replay.scheduled_ns), lagMs: r.record.capture_replay.schedule_lag_ms, wireLagMs: r.record.capture_replay.wire_lag_ms });
        }
        break;
      } catch (error) {
        if (Date.now() > deadlineMs) throw new Error(`no results for shard ${shardId}: ${String(error)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }
  return out;
}

/** The run the ingest wrote for the capture: its id and shard ids, once its record exists. */
async function runOf(s3: S3Client, deadlineMs: number): Promise<{ runId: string; shardIds: string[] }> {
  for (;;) {
    const keys = ((await s3.send(new ListObjectsV2Command({ Bucket: 'results-bucket', Prefix: 'runs/' }))).Contents ?? []).map((o) => o.Key!);
    const report = keys.find((k) => k.endsWith('/ingest_report.json'));
    const runId = report?.slice('runs/'.length, -'/ingest_report.json'.length);
    // The run record may follow the report.
    const record = runId ? await s3.send(new GetObjectCommand({ Bucket: 'results-bucket', Key: runRecordKey(runId) })).catch(() => null) : null;
    if (runId && record) {
      const run = JSON.parse(await record.Body!.transformToString()) as { shards: { shardId: string }[] };
      return { runId, shardIds: run.shards.map((s) => s.shardId) };
    }
    if (Date.now() > deadlineMs) throw new Error('the ingest wrote no run');
    await new Promise((r) => setTimeout(r, 250));
  }
}

interface Row {
  rate: number;
  scheduled: number;
  shards: number;
  invocations: number;
  failedInvocations: number;
  lost: number;
  doubled: number;
  early: number;
  drops: string;
  p50: number;
  p99: number;
  max: number;
  shiftMs: number;
  firstP50: number;
  firstMax: number;
  firstSecondP99: number;
  restP99: number;
  connectionsMean: number;
  connectionsMax: number;
  connectionsAfterDue: number;
  /** Collections in the invocations while they fired (from their first due time): mark-compacts, and the longest pause of any kind. */
  majorGcsFiring: number;
  longestGcFiringMs: number;
  loadMsMean: number;
  load: string;
}

/** perf_hooks' NODE_PERFORMANCE_GC_MAJOR. */
const MARK_COMPACT = 4;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** Server-side figures of one rate's run: overall, and per invocation. */
function analyse(rate: number, scheduled: number, shardIds: string[], results: ShardResults, arrivals: Map<string, bigint[]>, invocations: Invocation[], load: string): Row {
  const view = serverView(results.records, arrivals);
  const byShard = new Map<string, (SentRecord & { shardId: string })[]>();
  for (const r of results.records) byShard.set(r.shardId, [...(byShard.get(r.shardId) ?? []), r]);
  const firsts: number[] = [];
  const firstSecond: number[] = [];
  const rest: number[] = [];
  let afterDue = 0;
  let majors = 0;
  let longestGc = 0;
  for (const inv of invocations.filter((i) => i.ok)) {
    const mine = inv.shardIds.flatMap((s) => byShard.get(s) ?? []).sort((a, b) => (a.scheduledNs < b.scheduledNs ? -1 : 1));
    const first = mine[0];
    if (!first) continue;
    const firstLate = view.latenessById.get(first.id);
    if (firstLate !== undefined) firsts.push(firstLate);
    for (const r of mine) {
      const late = view.latenessById.get(r.id);
      if (late !== undefined) (r.scheduledNs - first.scheduledNs < 1_000_000_000n ? firstSecond : rest).push(late);
    }
    const firstDueMs = Number(first.scheduledNs / 1_000_000n);
    afterDue += inv.connectionsAtMs.filter((ms) => ms > firstDueMs).length;
    for (const [atMs, ms, kind] of inv.gcs) {
      if (atMs + ms < firstDueMs) continue;
      if (kind === MARK_COMPACT) majors++;
      longestGc = Math.max(longestGc, ms);
    }
  }
  const known = new Set(results.records.map((r) => r.id));
  const arrived = [...arrivals.keys()].filter((id) => known.has(id)).length;
  const sort = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const conns = invocations.map((i) => i.connectionsAtMs.length);
  return {
    rate,
    scheduled,
    shards: shardIds.length,
    invocations: invocations.length,
    failedInvocations: invocations.filter((i) => !i.ok).length,
    lost: scheduled - arrived,
    doubled: view.doubled,
    early: view.early,
    drops: Object.entries(results.drops).map(([k, v]) => `${k} ${v}`).join(', ') || '0',
    p50: quantile(view.sorted, 0.5),
    p99: quantile(view.sorted, 0.99),
    max: view.sorted.at(-1) ?? NaN,
    shiftMs: view.shiftMs,
    firstP50: quantile(sort(firsts), 0.5),
    firstMax: Math.max(...firsts),
    firstSecondP99: quantile(sort(firstSecond), 0.99),
    restP99: quantile(sort(rest), 0.99),
    connectionsMean: mean(conns),
    connectionsMax: Math.max(...conns),
    connectionsAfterDue: afterDue,
    majorGcsFiring: majors,
    longestGcFiringMs: longestGc,
    loadMsMean: mean(invocations.map((i) => i.loadMs)),
    load,
  };
}

/** One rate: a fresh deployment on moto, the capture put, the run fired by cold invocations, then read back. */
async function runRate(moto: Moto, fireFn: SynthesizedFunction, rate: number): Promise<Row> {
  await moto.reset();
  const deployed = deployedFor(rate);
  const dir = join(work, `r${rate}`);
  mkdirSync(dir, { recursive: true });
  const captures = join(dir, 'captures.jsonl');
  const scheduled = writeCaptures(captures, rate, seconds, rate);
  const s3 = new S3Client(awsClientConfig(moto.endpoint));
  const sqs = new SQSClient(awsClientConfig(moto.endpoint));
  await createBucket(s3, 'capture-bucket');
  await createBucket(s3, 'results-bucket');
  const visibility = deployed.fireTimeoutSeconds + 60;
  const queues = {
    ingest: await createQueueWithDlq(sqs, 'ingest', { visibilityTimeoutSeconds: 960 }),
    replay: await createQueueWithDlq(sqs, 'replay', { visibilityTimeoutSeconds: visibility }),
    collect: await createQueueWithDlq(sqs, 'collect', { visibilityTimeoutSeconds: 960 }),
  };
  await notifyQueueOnObjectCreated(s3, { bucket: 'capture-bucket', queueArn: queues.ingest.arn, prefix: 'datacapture/' });
  const server = await startArrivalServer(join(dir, 'arrivals.txt'));
  const local = { [ENV.resultsBucket]: 'results-bucket', [ENV.replayQueueUrl]: queues.replay.url, [ENV.collectQueueUrl]: queues.collect.url, [ENV.targets]: JSON.stringify([{ name: TARGET, url: server.url }]) };
  const ingestDeps = createDeps({ env: { ...deployed.ingestEnv, ...local }, s3, sqs });
  const env = fireEnvironment(fireFn, deployed, local, moto, server.url);
  const invocations: Invocation[] = [];
  const sources: EventSource[] = [
    await startSqsEventSource({ client: sqs, queueUrl: queues.ingest.url, handler: makeIngestHandler(() => ingestDeps), batchSize: 1 }),
    await startSqsEventSource({
      client: sqs,
      queueUrl: queues.replay.url,
      batchSize: deployed.fireBatchSize,
      maxConcurrency: 1000,
      pollIntervalMs: 50,
      handler: async (event) => {
        const { invocation, response } = await invokeCold(fireFn, env, event, invocations.length);
        invocations.push(invocation);
        return response;
      },
    }),
  ];
  const load = loadavg().map((l) => l.toFixed(2)).join(' ');
  console.error(`rate ${rate}: ${scheduled} requests, fire batch ${deployed.fireBatchSize}, MAX_SHARD_REQUESTS ${deployed.fireEnv[ENV.maxShardRequests]}, lead ${leadSeconds} s, load ${load}`);
  await s3.send(new PutObjectCommand({ Bucket: 'capture-bucket', Key: `datacapture/bench-endpoint/AllTraffic/2026/04/29/00/lateness-${rate}.jsonl`, Body: readFileSync(captures) }));
  const deadline = Date.now() + (leadSeconds + seconds) * 1000 + 180_000;
  try {
    const { runId, shardIds } = await runOf(s3, deadline);
    const results = await readResults(s3, runId, shardIds, deadline);
    await sources[1]!.idle(500);
    const arrivals = await server.stop();
    return analyse(rate, scheduled, shardIds, results, arrivals, invocations, load);
  } finally {
    await Promise.all(sources.map((s) => s.stop()));
    if (server.child.exitCode === null) await server.stop().catch(() => undefined);
    s3.destroy();
    sqs.destroy();
  }
}

const cdkOutAt = process.argv.indexOf('--cdk-out');
const app = cdkOutAt === -1 ? await synthesizeApp() : { ...readAssembly(process.argv[cdkOutAt + 1] ?? ''), cleanup: () => undefined };
const moto = await startMoto();
const rows: Row[] = [];
try {
  const fireFn = app.fn(/\/Fire\/Resource$/);
  for (const rate of rates) rows.push(await runRate(moto, fireFn, rate));
} finally {
  await moto.stop();
  app.cleanup();
  rmSync(work, { recursive: true, force: true });
}

console.log(`fire bundle, server-side lateness, ${seconds} s per rate, lead ${leadSeconds} s, one cold process per invocation, node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'})\n`);
console.log('| rate/s | requests | shards | invocations (failed) | lost | doubled | early | dropped | p50 ms | p99 ms | max ms | shift ms | first request p50 / max ms | first second p99 ms | rest p99 ms | connections / invocation mean (max) | opened after first due | mark-compacts firing | longest GC firing ms | bundle load ms | load before |');
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
for (const r of rows) {
  console.log(
    `| ${r.rate} | ${r.scheduled} | ${r.shards} | ${r.invocations} (${r.failedInvocations}) | ${r.lost} | ${r.doubled} | ${r.early} | ${r.drops} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.max)} | ${f(r.shiftMs)} | ${f(r.firstP50)} / ${f(r.firstMax)} | ${f(r.firstSecondP99)} | ${f(r.restP99)} | ${f(r.connectionsMean, 1)} (${r.connectionsMax}) | ${r.connectionsAfterDue} | ${r.majorGcsFiring} | ${f(r.longestGcFiringMs)} | ${f(r.loadMsMean, 0)} | ${r.load} |`,
  );
}
