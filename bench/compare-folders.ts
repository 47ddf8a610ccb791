/**
 * `capture-replay compare` on two results folders of a million records each, as a user runs
 * it: the CLI in its own process reads both `profile_export.jsonl` files, pairs the requests,
 * compares them (the defaults: paired, 2,000 resamples) and prints the verdicts. Measured:
 * wall time and peak RSS (VmHWM from /proc every 20 ms) of the whole command: reading the
 * files, the analysis in memory (bench/compare-pairs.ts measures that part alone) and the
 * report's data.
 *
 * The options and the records written: beside the flags below.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Rng } from '../lambdas/core/stats/rng';
import { REPO_ROOT } from '../test/support/processes';
import { flag } from './args';
import { cliOf } from './cli-path';

/**
 *   node --import tsx bench/compare-folders.ts [--records 1000000] [--runs 1] [--repo <checkout>] [--keep]
 *
 * --repo runs another checkout's CLI on the same folders, to measure before and after:
 *   git worktree add --detach /tmp/wt-old <commit> && ln -s "$PWD/node_modules" /tmp/wt-old/node_modules
 *   node --import tsx bench/compare-folders.ts --repo /tmp/wt-old --keep
 * The folders (~1.1 GB each at a million records) are written to the temp folder and reused
 * by later runs of the same size; --keep leaves them there, otherwise the last run deletes
 * them. Linux only (/proc).
 *
 * Each record is a line as `replay` writes it (metadata, metrics, capture_replay); the same
 * capture events on both sides, B 3 % slower; 2 % of the requests fail, 0.5 % are dropped
 * (in run_manifest.json, not in the records).
 */
const records = flag('--records', 1_000_000);
const runs = flag('--runs', 1);
const keep = process.argv.includes('--keep');
const repoAt = process.argv.indexOf('--repo');
const repo = repoAt === -1 ? REPO_ROOT : resolve(process.argv[repoAt + 1] ?? '');
const cliScript = await cliOf(repo);
const root = join(tmpdir(), `capture-replay-compare-folders-${records}`);
const MB = 1024 * 1024;

function gaussian(rng: Rng): number {
  const u = rng.double() || Number.MIN_VALUE;
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.double());
}

const eventId = (i: number) =>
  `5a3c0d2e-${(i >>> 16).toString(16).padStart(4, '0')}-4c6a-9e8d-${i.toString(16).padStart(12, '0')}`;

/** One target's folder: records, manifest and aggregate file as a finished run leaves them. */
async function writeTarget(name: string, slower: number, seed: number): Promise<void> {
  const dir = join(root, 'run', name);
  mkdirSync(dir, { recursive: true });
  const rng = new Rng(seed, 7);
  const base = new Rng(1, 12345);
  const out = createWriteStream(join(dir, 'profile_export.jsonl'));
  const startNs = 1_795_720_271_000_000_000n;
  let succeeded = 0;
  let failed = 0;
  let dropped = 0;
  let session = 0;
  for (let i = 0; i < records; i++) {
    const cost = Math.exp(0.5 * gaussian(base));
    const u = rng.double();
    if (u < 0.005) {
      dropped++;
      continue;
    }
    const scheduled = startNs + BigInt(i) * 1_000_000n;
    const start = scheduled + BigInt(Math.round(rng.double() * 200_000));
    const noise = () => slower * Math.exp(0.1 * gaussian(rng));
    const ttft = 40 * cost * noise();
    const itl = 12 * Math.sqrt(cost) * noise();
    const osl = Math.max(2, Math.round(200 * cost));
    const latency = ttft + itl * (osl - 1);
    const end = start + BigInt(Math.round(latency * 1e6));
    const metadata =
      `{"session_num":${session++},"x_request_id":"r-${name}-${i}","x_correlation_id":"c-${i}",` +
      `"conversation_id":"${eventId(i)}","turn_index":0,"request_start_ns":${start},"request_ack_ns":` +
      `${start + BigInt(Math.round(ttft * 1e6))},"request_end_ns":${end},"worker_id":"worker_local",` +
      `"record_processor_id":"record_processor_local","benchmark_phase":"profiling","was_cancelled":false,` +
      `"cancellation_time_ns":null}`;
    const replay =
      `{"target":"${name}","scheduled_ns":${scheduled},"schedule_lag_ms":` +
      `${(Number(start - scheduled) / 1e6).toFixed(6)},"wire_lag_ms":0.5,"capture_event_id":"${eventId(i)}",` +
      `"capture_inference_id":null,"capture_file":"/captures/ep/AllTraffic/2026/04/29/00/capture.jsonl",` +
      `"capture_line":${i + 1},"capture_time_ms":${1777424395000 + i},"captured_output_tokens":${osl},` +
      `"output_match":null,"overrides":[]}`;
    let line: string;
    if (u < 0.025) {
      failed++;
      line =
        `{"metadata":${metadata},"metrics":{"error_request_count":{"value":1,"unit":"requests"}},"error":` +
        `{"code":503,"type":"HTTPError","message":"HTTP 503: Service Unavailable"},"capture_replay":${replay}}`;
    } else {
      succeeded++;
      const m = (tag: string, value: number, unit: string) => `"${tag}":{"value":${value},"unit":"${unit}"}`;
      const metrics = [
        m('time_to_first_token', ttft, 'ms'),
        m('time_to_second_token', itl * Math.exp(0.2 * gaussian(rng)), 'ms'),
        m('request_latency', latency, 'ms'),
        m('inter_token_latency', itl, 'ms'),
        m('output_token_throughput_per_user', 1000 / itl, 'tokens/sec/user'),
        m('output_sequence_length', osl, 'tokens'),
        m('input_sequence_length', 350, 'tokens'),
      ].join(',');
      line = `{"metadata":${metadata},"metrics":{${metrics}},"error":null,"capture_replay":${replay}}`;
    }
    if (!out.write(line + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  const scheduled = succeeded + failed + dropped;
  const manifest = {
    runId: 'run',
    target: name,
    scheduled,
    fired: succeeded + failed,
    succeeded,
    failed,
    dropped,
    droppedByReason: { late_beyond_tolerance: dropped },
    failedByType: { HTTPError: failed },
    notScheduledByReason: {},
    balanced: true,
    startedAt: '2026-11-26T00:00:00.000Z',
    endedAt: '2026-11-26T00:16:40.000Z',
  };
  writeFileSync(join(dir, 'run_manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  writeFileSync(
    join(dir, 'profile_export_aiperf.json'),
    JSON.stringify({ schema_version: '1.0', was_cancelled: false }, null, 2) + '\n',
  );
}

async function generate(): Promise<void> {
  const done = join(root, '.complete');
  if (existsSync(done)) return;
  rmSync(root, { recursive: true, force: true });
  await writeTarget('A', 1, 11);
  await writeTarget('B', 1.03, 12);
  writeFileSync(done, '');
}

function peakRssKb(pid: number): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

async function runOnce(): Promise<{
  code: number | null;
  wallS: number;
  peakMb: number;
  stdout: string;
  stderr: string;
}> {
  const started = performance.now();
  const child = spawn(process.execPath, [cliScript, 'compare', join(root, 'run', 'A'), join(root, 'run', 'B')], {
    cwd: repo,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let peakKb = 0;
  const timer = setInterval(() => {
    const kb = child.pid === undefined ? null : peakRssKb(child.pid);
    if (kb !== null) peakKb = Math.max(peakKb, kb);
  }, 20);
  const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
  clearInterval(timer);
  return { code, wallS: (performance.now() - started) / 1000, peakMb: peakKb / 1024, stdout, stderr };
}

async function gitText(args: string[]): Promise<string> {
  const git = spawn('git', ['-C', repo, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
  let text = '';
  git.stdout.setEncoding('utf8').on('data', (c: string) => (text += c));
  await once(git, 'exit');
  return text.trim();
}

async function main(): Promise<void> {
  if (process.platform !== 'linux') throw new Error('this benchmark reads /proc (Linux only)');
  process.stderr.write(`results folders under ${root}\n`);
  await generate();
  const recordsFileBytes = statSync(join(root, 'run', 'A', 'profile_export.jsonl')).size;
  const commit = (await gitText(['rev-parse', '--short', 'HEAD'])) || 'unknown';
  const dirty = (await gitText(['status', '--porcelain', '--untracked-files=no'])) !== '';
  const results: { code: number | null; wallS: number; peakMb: number }[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const result = await runOnce();
      results.push(result);
      if (result.code !== 0) process.stderr.write(result.stderr);
      process.stderr.write(
        `  run ${i + 1}: exit ${result.code}, ${result.wallS.toFixed(1)} s, peak RSS ` +
          `${result.peakMb.toFixed(0)} MB; ${result.stdout.split('\n')[0]}\n`,
      );
    }
  } finally {
    if (!keep) rmSync(root, { recursive: true, force: true });
  }
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString().slice(0, 10),
        repo,
        commit: `${commit}${dirty ? ' (+ uncommitted edits)' : ''}`,
        node: process.version,
        records,
        recordsFileMb: Math.round(recordsFileBytes / MB),
        runs: results.map((r) => ({
          exit: r.code,
          wallS: Math.round(r.wallS * 10) / 10,
          peakRssMb: Math.round(r.peakMb),
        })),
      },
      null,
      2,
    ),
  );
}

await main();
