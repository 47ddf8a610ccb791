/**
 * bench/fire-lateness.ts's deployment and invocations: the fire and ingest functions as the
 * stack synthesizes them for a peak, and one cold invocation of the fire bundle in its own
 * process (and CPU group), observed by a preloaded probe.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { CaptureReplayStack } from '../lib/capture-replay-stack';
import { parseDeploymentConfig } from '../lib/config';
import { fireSizingOf } from '../lib/sizing';
import type { SynthesizedFunction } from '../test/support/synth';
import { lambdaBootstrapNodeOptions } from '../test/support/lambda-env';
import type { CpuGroup, ThrottleStats } from './cpu-share';
import { BENCH_ROOT } from './lateness-common';

export const PROTOCOLS = ['sse', 'sagemaker'] as const;
export type Protocol = (typeof PROTOCOLS)[number];
export const TARGET = 'target';
const RUNNER = join(BENCH_ROOT, 'test/support/invoke-bundle.mjs');

export interface Deployed {
  protocol: Protocol;
  fireEnv: Record<string, string>;
  ingestEnv: Record<string, string>;
  fireBatchSize: number;
  memoryMb: number;
  fireTimeoutSeconds: number;
  /** The lane's rate at the peak (requests/s): the peak divided among the lanes of a slot. */
  laneRate: number;
  /** The target as the functions' TARGETS_JSON names it, at the server's URL. */
  targetConfig(url: string): Record<string, unknown>;
}

const targetOf = (protocol: Protocol, name: string) =>
  protocol === 'sse'
    ? { name, url: 'https://target.example.com' }
    : { name, kind: 'sagemaker', endpointName: 'bench-endpoint', region: 'us-east-1' };

/** The fire and ingest functions as the stack synthesizes them for this peak (the template only, no bundling). */
export function deployedFor(o: {
  peak: number;
  protocol: Protocol;
  targets: number;
  leadSeconds: number;
  memoryOverride: number | null;
  tokensPerSecond: number;
}): Deployed {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-fire-lateness-'));
  try {
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const names = Array.from({ length: o.targets }, (_, i) => (i === 0 ? TARGET : `${TARGET}-${i + 1}`));
    const config = parseDeploymentConfig({
      captureBucket: 'capture-bucket',
      capturePrefix: 'datacapture/',
      targets: names.map((n) => targetOf(o.protocol, n)),
      peakRequestsPerSecond: o.peak,
      leadSeconds: o.leadSeconds,
      forceStreaming: true,
      streamTokensPerSecond: o.tokensPerSecond,
    });
    const sizing = fireSizingOf(config);
    const template = Template.fromStack(new CaptureReplayStack(app, 'FireLateness', { config }));
    type Fn = {
      Properties: { MemorySize?: number; Timeout?: number; Environment?: { Variables?: Record<string, unknown> } };
    };
    const fns = Object.entries(template.findResources('AWS::Lambda::Function') as Record<string, Fn>);
    const literal = (fn: Fn) =>
      Object.fromEntries(
        Object.entries(fn.Properties.Environment?.Variables ?? {}).filter(
          (e): e is [string, string] => typeof e[1] === 'string',
        ),
      );
    const [fireId, fire] = fns.find(([id]) => id.startsWith('StatelessFire')) ?? [];
    const ingest = fns.find(([id]) => id.startsWith('StatelessIngest'))?.[1];
    if (!fire || !ingest) throw new Error('no fire or ingest function in the template');
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')) as {
      Properties: { FunctionName?: { Ref?: string }; BatchSize?: number };
    }[];
    const batch = mappings.find((m) => m.Properties.FunctionName?.Ref === fireId)?.Properties.BatchSize;
    return {
      protocol: o.protocol,
      fireEnv: literal(fire),
      ingestEnv: literal(ingest),
      fireBatchSize: batch ?? 10,
      memoryMb: o.memoryOverride ?? fire.Properties.MemorySize ?? 128,
      fireTimeoutSeconds: fire.Properties.Timeout ?? 3,
      laneRate: o.peak / sizing.lanesPerSlot,
      targetConfig: (url) => (o.protocol === 'sse' ? { name: TARGET, url } : targetOf('sagemaker', TARGET)),
    };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * Preloaded into each invocation's process: the TCP connections it opens to the target
 * (PROBE_PORT) and when, V8's garbage collections (start, duration, kind), and its CPU time
 * every 250 ms, written to PROBE_OUT as the process exits. It only observes.
 */
const PROBE =
  `const dc = require('node:diagnostics_channel');
const { writeFileSync } = require('node:fs');
const { PerformanceObserver, performance } = require('node:perf_hooks');
const port = Number(process.env.PROBE_PORT);
const opened = [];
const gcs = [];
const cpu = [];
const sample = () => { const u = process.cpuUsage(); cpu.push([Date.now(), (u.user + u.system) / 1000]); };
setInterval(sample, 250).unref();
dc.subscribe('net.client.socket', ({ socket }) => socket.once('connect', () => { if (socket.remotePort === port) ` +
  `opened.push(Date.now()); }));
new PerformanceObserver((list) => { for (const e of list.getEntries()) gcs.push([performance.timeOrigin + e.startTime, ` +
  `e.duration, e.detail ? e.detail.kind : 0, e.detail ? e.detail.flags : 0]); }).observe({ entryTypes: ['gc'] });
process.on('exit', () => { sample(); writeFileSync(process.env.PROBE_OUT, JSON.stringify({ opened, gcs, cpu })); });
`;

export interface Invocation {
  shardIds: string[];
  ok: boolean;
  error: string | null;
  /** Epoch ms at which the target's connections were opened. */
  connectionsAtMs: number[];
  /**
   * Garbage collections: epoch ms of the start, duration ms, V8's kind (4: mark-compact), its flags (perf_hooks'
   * NODE_PERFORMANCE_GC_FLAGS_*).
   */
  gcs: [number, number, number, number][];
  /** The process's CPU time (ms) at epoch ms, every 250 ms and at exit. */
  cpu: [number, number][];
  throttle: ThrottleStats | null;
  /** Epoch ms at which the group's quota was seen to have run out (sampled every 20 ms: the sample after each throttled period). */
  throttledAtMs: number[];
}

/** One cold invocation of the fire bundle: a fresh process (in `group` when given), the event on stdin, its outcome on fd 3. */
export async function invokeInGroup(o: {
  fn: SynthesizedFunction;
  env: NodeJS.ProcessEnv;
  event: SQSEvent;
  n: number;
  work: string;
  group: CpuGroup | null;
  /** A file the invocation's stdout is appended to (V8's traces print there); without it, none is kept. */
  stdoutFile?: string | null;
}): Promise<{ invocation: Invocation; response: SQSBatchResponse }> {
  const probeFile = join(o.work, 'probe.cjs');
  writeFileSync(probeFile, PROBE);
  const probeOut = join(o.work, `probe-${o.n}.json`);
  const argv = [
    process.execPath,
    RUNNER,
    o.fn.assetDir,
    o.fn.handler,
    '--timeout-seconds',
    String(o.fn.timeoutSeconds ?? 900),
  ];
  const run = o.group ? o.group.wrap(argv) : { command: argv[0] as string, args: argv.slice(1) };
  const child = spawn(run.command, run.args, {
    cwd: o.fn.assetDir,
    env: {
      ...o.env,
      NODE_OPTIONS: `${lambdaBootstrapNodeOptions(o.env.NODE_OPTIONS, Number(o.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE))} --require ${probeFile}`,
      PROBE_OUT: probeOut,
    },
    stdio: ['pipe', o.stdoutFile ? openSync(o.stdoutFile, 'a') : 'ignore', 'pipe', 'pipe'],
  });
  let result = '';
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4000)));
  (child.stdio[3] as Readable).on('data', (c: Buffer) => (result += c.toString('utf8')));
  child.stdin!.end(JSON.stringify(o.event));
  const throttledAtMs: number[] = [];
  let seen = 0;
  const sampler = o.group
    ? setInterval(() => {
        const now = o.group!.stats().throttled;
        if (now > seen) throttledAtMs.push(Date.now());
        seen = now;
      }, 20)
    : null;
  await once(child, 'close');
  if (sampler) clearInterval(sampler);
  const throttle = o.group?.stats() ?? null;
  o.group?.remove();
  const shardIds = o.event.Records.map((r) => (JSON.parse(r.body) as { shardId: string }).shardId);
  let probe: { opened: number[]; gcs: [number, number, number, number][]; cpu: [number, number][] } = {
    opened: [],
    gcs: [],
    cpu: [],
  };
  try {
    probe = JSON.parse(readFileSync(probeOut, 'utf8')) as typeof probe;
  } catch {
    // the process died before its exit handler: no observations
  }
  const outcome = (result.trim() ? JSON.parse(result) : { ok: false, errorMessage: `no outcome: ${stderr}` }) as {
    ok: boolean;
    response?: SQSBatchResponse;
    errorMessage?: string;
  };
  if (!outcome.ok) console.error(`invocation ${o.n} failed: ${outcome.errorMessage ?? '?'}\n${stderr}`);
  const longest = [...probe.gcs].sort((a, b) => b[1] - a[1]).slice(0, 5);
  console.error(
    `invocation ${o.n}: ${probe.gcs.length} collections; the longest (ms, kind, flags): ` +
      `${longest.map(([, ms, kind, flags]) => `${ms.toFixed(1)} ${kind} ${flags}`).join('; ')}`,
  );
  const invocation: Invocation = {
    shardIds,
    ok: outcome.ok,
    error: outcome.ok ? null : (outcome.errorMessage ?? 'failed'),
    connectionsAtMs: probe.opened,
    gcs: probe.gcs,
    cpu: probe.cpu,
    throttle,
    throttledAtMs,
  };
  // A failed invocation fails its whole batch, as Lambda does.
  const response =
    outcome.ok && outcome.response
      ? outcome.response
      : { batchItemFailures: o.event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
  return { invocation, response };
}
