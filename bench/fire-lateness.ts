/**
 * The fire function's lateness at the server inside Lambda's CPU share (issue 30): the deployed fire bundle, each
 * invocation a cold `node` process in a CPU group whose quota is its memory's share of a vCPU, fed by an SQS event
 * source stand-in on moto_server with shards from the real ingest, firing at an LLM-like arrival-stamping server.
 * It checks that the fire function keeps its timing within the CPU the sizing gives it, and its `--write` file is
 * the simulator's fire lateness (sim/measured.ts). Usage, options and what each row holds:
 * docs/benchmarks.md#the-fire-function-inside-lambdas-cpu-share; the runs: bench/RESULTS.md.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeIngestHandler } from '../lambdas/handlers/ingest';
import { DEFAULT_STREAM_TOKENS_PER_SECOND } from '../lib/sizing';
import { resultsKey, runRecordKey } from '../lambdas/core/pipeline/keys';
import { ENV } from '../lambdas/runtime/config';
import { createDeps } from '../lambdas/runtime/deps';
import { createBucket, createQueueWithDlq, notifyQueueOnObjectCreated } from '../test/support/aws-fixtures';
import { emulatedLambdaEnv } from '../test/support/lambda-env';
import { awsClientConfig, startMoto, type Moto } from '../test/support/moto';
import { startSqsEventSource, type EventSource } from '../test/support/sqs-event-source';
import { readAssembly, synthesizeApp, type SynthesizedFunction } from '../test/support/synth';
import { flag } from './args';
import { selfSignedCertificate } from './certificate';
import { openCpuShares, type CpuShares } from './cpu-share';
import { analyse, fireRowMarkdown, FIRE_ROW_HEADER, type FireRow, type ShardResults } from './fire-lateness-analysis';
import {
  deployedFor,
  invokeInGroup,
  PROTOCOLS,
  TARGET,
  type Deployed,
  type Invocation,
  type Protocol,
} from './fire-lateness-invoke';
import { dumpRow } from './fire-lateness-dump';
import { fixed as f, startArrivalServer, writeCaptures } from './lateness-common';

process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
// The in-process ingest's metrics would land among the tables on stdout.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

const option = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : (process.argv[at + 1] ?? fallback);
};
const list = (name: string, fallback: string) => option(name, fallback).split(',').filter(Boolean);
const seconds = flag('--seconds', 60);
const leadSeconds = flag('--lead-seconds', 20);
const sizedTargets = flag('--targets', 2);
const peaks = list('--peaks', '50,1000,10000').map(Number);
const protocols = list('--protocols', 'sse,sagemaker') as Protocol[];
const cpuShare = option('--cpu-share', 'lambda');
const tls = option('--tls', 'on') === 'on';
const memoryOverride = process.argv.includes('--memory') ? flag('--memory', 1024) : null;
const server = {
  medianMs: flag('--median-ms', 2000),
  p99Ms: flag('--p99-ms', 30000),
  maxMs: flag('--max-ms', 120000),
  tokensPerSecond: flag('--tokens-per-second', DEFAULT_STREAM_TOKENS_PER_SECOND),
};
const writeTo = process.argv.includes('--write') ? option('--write', '') : null;
/** A directory for each row's observations (fire-lateness-dump.ts). */
const dumpTo = process.argv.includes('--dump') ? option('--dump', '') || null : null;
/** Node flags added to each invocation's NODE_OPTIONS (a V8 setting to try, a CPU profile). */
const nodeOptions = option('--node-options', '');
/** A file each invocation's stdout is appended to: V8's traces (`--trace-gc-nvp`, set by a preloaded script). */
const stdoutFile = process.argv.includes('--invocation-stdout') ? option('--invocation-stdout', '') || null : null;
for (const p of protocols)
  if (!PROTOCOLS.includes(p)) throw new Error(`--protocols: ${p} is not one of ${PROTOCOLS.join(', ')}`);
if (!['lambda', 'none'].includes(cpuShare)) throw new Error('--cpu-share: lambda or none');
for (const peak of peaks)
  if (!Number.isFinite(peak) || peak <= 0) throw new Error('--peaks: positive numbers, comma-separated');

const REGION = 'us-east-1';
const work = mkdtempSync(join(tmpdir(), 'cr-fire-lateness-'));

/** The environment of the deployed fire function, its resources pointed at moto and its target at the server. */
function fireEnvironment(
  fn: SynthesizedFunction,
  d: Deployed,
  local: Record<string, string>,
  moto: Moto,
  targetUrl: string,
  certFile: string | null,
): NodeJS.ProcessEnv {
  return {
    ...d.fireEnv,
    ...local,
    ...(d.protocol === 'sagemaker' ? { AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: targetUrl } : {}),
    ...(certFile ? { NODE_EXTRA_CA_CERTS: certFile } : {}),
    PROBE_PORT: new URL(targetUrl).port,
    ...(nodeOptions ? { NODE_OPTIONS: `${d.fireEnv.NODE_OPTIONS ?? ''} ${nodeOptions}`.trim() } : {}),
    ...emulatedLambdaEnv({
      awsEndpoint: moto.endpoint,
      region: REGION,
      runtime: fn.runtime,
      functionName: 'fire',
      memoryMb: d.memoryMb,
      taskRoot: fn.assetDir,
    }),
  };
}

/** Waits for every shard's results object and reads them. */
async function readResults(s3: S3Client, runId: string, shardIds: string[], deadlineMs: number): Promise<ShardResults> {
  const out: ShardResults = { records: [], drops: {}, outputTokens: 0 };
  for (const shardId of shardIds) {
    for (;;) {
      try {
        const text = await (
          await s3.send(new GetObjectCommand({ Bucket: 'results-bucket', Key: resultsKey(runId, TARGET, shardId) }))
        ).Body!.transformToString();
        for (const line of text.split('\n').filter(Boolean)) {
          const r = JSON.parse(line) as {
            kind: string;
            dropReason?: string;
            record?: {
              metadata: { x_request_id: string };
              metrics: Record<string, { value: unknown }>;
              capture_replay: { scheduled_ns: string; schedule_lag_ms: number; wire_lag_ms: number | null };
            };
          };
          if (r.kind === 'drop') out.drops[r.dropReason ?? '?'] = (out.drops[r.dropReason ?? '?'] ?? 0) + 1;
          else if (r.record) {
            const tokens = r.record.metrics.output_sequence_length?.value;
            if (typeof tokens === 'number') out.outputTokens += tokens;
            out.records.push({
              shardId,
              id: r.record.metadata.x_request_id,
              scheduledNs: BigInt(r.record.capture_replay.scheduled_ns),
              lagMs: r.record.capture_replay.schedule_lag_ms,
              wireLagMs: r.record.capture_replay.wire_lag_ms,
            });
          }
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

/** Shard ids are `<slot>-<lane>`: a second lane would halve each invocation's rate, and the row would not be one lane's. */
function oneLane(shardIds: readonly string[]): void {
  const lanes = new Set(shardIds.map((id) => id.split('-')[1]));
  if (lanes.size > 1) throw new Error(`the ingest cut ${lanes.size} lanes (${shardIds.join(', ')}): not one lane`);
}

/** The run the ingest wrote for the capture: its id and shard ids, once its record exists. */
async function runOf(s3: S3Client, deadlineMs: number): Promise<{ runId: string; shardIds: string[] }> {
  for (;;) {
    const keys = (
      (await s3.send(new ListObjectsV2Command({ Bucket: 'results-bucket', Prefix: 'runs/' }))).Contents ?? []
    ).map((o) => o.Key!);
    const report = keys.find((k) => k.endsWith('/ingest_report.json'));
    const runId = report?.slice('runs/'.length, -'/ingest_report.json'.length);
    const record = runId
      ? await s3.send(new GetObjectCommand({ Bucket: 'results-bucket', Key: runRecordKey(runId) })).catch(() => null)
      : null;
    if (runId && record) {
      const run = JSON.parse(await record.Body!.transformToString()) as { shards: { shardId: string }[] };
      return { runId, shardIds: run.shards.map((s) => s.shardId) };
    }
    if (Date.now() > deadlineMs) throw new Error('the ingest wrote no run');
    await new Promise((r) => setTimeout(r, 250));
  }
}

interface RunSetup {
  moto: Moto;
  fireFn: SynthesizedFunction;
  shares: CpuShares | null;
  certificate: { cert: string; key: string } | null;
}

/** The line on stderr that opens a row: the lane, its requests, the function's memory and CPU share, the machine's load. */
function announce(row: {
  peak: number;
  protocol: Protocol;
  d: Deployed;
  scheduled: number;
  shares: CpuShares | null;
  load: string;
}): void {
  const { peak, protocol, d, scheduled, shares, load } = row;
  const share = cpuShare === 'lambda' && shares ? `${f(shares.shareOf(d.memoryMb))} vCPU` : 'no quota';
  console.error(
    `peak ${peak}/s (${protocol}): lane ${f(d.laneRate, 1)}/s, ${scheduled} requests, ${d.memoryMb} MB (${share}), ` +
      `MAX_SHARD_REQUESTS ${d.fireEnv[ENV.maxShardRequests]}, load ${load}`,
  );
}

/** One peak and protocol: a fresh deployment on moto, the capture put, the run fired by cold invocations, then read back. */
async function runOne(setup: RunSetup, peak: number, protocol: Protocol): Promise<FireRow> {
  const { moto, fireFn, shares, certificate } = setup;
  await moto.reset();
  const d = deployedFor({
    peak,
    protocol,
    targets: sizedTargets,
    leadSeconds,
    memoryOverride,
    tokensPerSecond: server.tokensPerSecond,
  });
  const dir = join(work, `p${peak}-${protocol}`);
  mkdirSync(dir, { recursive: true });
  const captures = join(dir, 'captures.jsonl');
  // Every second at the lane's most: one lane, at the rate the sizing gives it.
  const scheduled = writeCaptures(captures, d.laneRate, seconds, peak, 1500, 'even');
  const s3 = new S3Client(awsClientConfig(moto.endpoint));
  const sqs = new SQSClient(awsClientConfig(moto.endpoint));
  await createBucket(s3, 'capture-bucket');
  await createBucket(s3, 'results-bucket');
  const queues = {
    ingest: await createQueueWithDlq(sqs, 'ingest', { visibilityTimeoutSeconds: 960 }),
    replay: await createQueueWithDlq(sqs, 'replay', { visibilityTimeoutSeconds: d.fireTimeoutSeconds + 60 }),
    collect: await createQueueWithDlq(sqs, 'collect', { visibilityTimeoutSeconds: 960 }),
  };
  await notifyQueueOnObjectCreated(s3, {
    bucket: 'capture-bucket',
    queueArn: queues.ingest.arn,
    prefix: 'datacapture/',
  });
  const serverArgs = [
    '--median-ms',
    String(server.medianMs),
    '--p99-ms',
    String(server.p99Ms),
    '--max-ms',
    String(server.maxMs),
    '--tokens-per-second',
    String(server.tokensPerSecond),
    '--seed',
    String(peak),
  ];
  // The server stamps arrivals: in the benchmark's weighted group too, so other work on the machine does not delay its stamps.
  const serverGroup = shares?.group(`server-${peak}-${protocol}`, null);
  const target = await startArrivalServer(
    join(dir, 'arrivals.txt'),
    certificate ? [...serverArgs, '--tls-cert', certificate.cert, '--tls-key', certificate.key] : serverArgs,
    serverGroup ? (argv) => serverGroup.wrap(argv) : undefined,
  );
  const local = {
    [ENV.resultsBucket]: 'results-bucket',
    [ENV.replayQueueUrl]: queues.replay.url,
    [ENV.collectQueueUrl]: queues.collect.url,
    [ENV.targets]: JSON.stringify([d.targetConfig(target.url)]),
  };
  const ingestDeps = createDeps({ env: { ...d.ingestEnv, ...local }, s3, sqs });
  const env = fireEnvironment(fireFn, d, local, moto, target.url, certificate?.cert ?? null);
  const invocations: Invocation[] = [];
  const sources: EventSource[] = [
    await startSqsEventSource({
      client: sqs,
      queueUrl: queues.ingest.url,
      handler: makeIngestHandler(() => ingestDeps),
      batchSize: 1,
    }),
    await startSqsEventSource({
      client: sqs,
      queueUrl: queues.replay.url,
      batchSize: d.fireBatchSize,
      maxConcurrency: 1000,
      pollIntervalMs: 50,
      handler: async (event) => {
        const n = invocations.length;
        const group =
          shares?.group(`inv-${peak}-${protocol}-${n}`, cpuShare === 'lambda' ? shares.shareOf(d.memoryMb) : null) ??
          null;
        const { invocation, response } = await invokeInGroup({ fn: fireFn, env, event, n, work, group, stdoutFile });
        invocations.push(invocation);
        return response;
      },
    }),
  ];
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  announce({ peak, protocol, d, scheduled, shares, load });
  await s3.send(
    new PutObjectCommand({
      Bucket: 'capture-bucket',
      Key: `datacapture/bench-endpoint/AllTraffic/2026/04/29/00/lateness-${peak}.jsonl`,
      Body: readFileSync(captures),
    }),
  );
  const deadline = Date.now() + (leadSeconds + seconds) * 1000 + server.maxMs + 180_000;
  try {
    const { runId, shardIds } = await runOf(s3, deadline);
    oneLane(shardIds);
    const results = await readResults(s3, runId, shardIds, deadline);
    await sources[1]!.idle(500);
    const arrivals = await target.stop();
    const input = {
      peak,
      protocol,
      deployed: d,
      scheduled,
      shardIds,
      results,
      arrivals,
      invocations,
      load,
      server: target.counts(),
      cpuShare: cpuShare === 'lambda' && shares ? shares.shareOf(d.memoryMb) : null,
    };
    if (dumpTo) console.error(`observations: ${dumpRow(dumpTo, input, join(dir, 'arrivals.txt'))}`);
    return analyse(input);
  } finally {
    await Promise.all(sources.map((s) => s.stop()));
    if (target.child.exitCode === null) await target.stop().catch(() => undefined);
    s3.destroy();
    sqs.destroy();
  }
}

const shares = cpuShare === 'lambda' ? openCpuShares() : null;
if (typeof shares === 'string') {
  console.error(`bench:fire-lateness skipped: ${shares} (--cpu-share none measures without Lambda's share)`);
  process.exit(0);
}
const cdkOutAt = process.argv.indexOf('--cdk-out');
const app =
  cdkOutAt === -1
    ? await synthesizeApp()
    : { ...readAssembly(process.argv[cdkOutAt + 1] ?? ''), cleanup: () => undefined };
const moto = await startMoto();
const rows: FireRow[] = [];
try {
  const setup: RunSetup = {
    moto,
    fireFn: app.fn(/\/Fire\/Resource$/),
    shares,
    certificate: tls ? selfSignedCertificate(work) : null,
  };
  for (const peak of peaks) for (const protocol of protocols) rows.push(await runOne(setup, peak, protocol));
} finally {
  await moto.stop();
  app.cleanup();
  shares?.close();
  rmSync(work, { recursive: true, force: true });
}

const machine = `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'})`;
const head =
  `fire bundle, server-side lateness, ${seconds} s per row, lead ${leadSeconds} s, ` +
  `stack sized for ${sizedTargets} target(s), one lane, one cold process per invocation, ` +
  `${shares ? `CPU share: ${shares.describe}` : 'no CPU quota'}, ` +
  `responses lognormal ${server.medianMs} ms median / ${server.p99Ms} ms p99 (cut at ${server.maxMs} ms), ` +
  `${server.tokensPerSecond} tokens/s, ${tls ? 'TLS' : 'plain TCP'}, node ${process.version}, ${machine}`;
console.log(`${head}\n`);
console.log(FIRE_ROW_HEADER);
for (const r of rows) console.log(fireRowMarkdown(r));
if (writeTo) {
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const command = `npm run bench:fire-lateness -- ${process.argv.slice(2).join(' ')}`.trim();
  writeFileSync(
    writeTo,
    JSON.stringify({ command, commit, date: new Date().toISOString().slice(0, 10), conditions: head, rows }, null, 2) +
      '\n',
  );
  console.error(`wrote ${writeTo}`);
}
