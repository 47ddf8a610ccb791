/**
 * Peak memory of the local CLI on a large capture folder with a small window: a generated
 * 1 GB folder (`test/support/capture-gen.ts`, eight 128 MiB files at 200 requests/s) replayed
 * with `--limit 1000` against the bundled mock server, the CLI in its own process as a user
 * runs it. Measured: the CLI's peak RSS (the kernel's high-water mark, VmHWM, read from
 * /proc every 20 ms until it exits) and its wall time; the run's accounting is checked.
 *
 * The options: beside the flags below.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeCaptureFile } from '../test/support/capture-gen';
import { REPO_ROOT, startMockProcess } from '../test/support/processes';
import { flag } from './args';
import { cliOf } from './cli-path';

/**
 *   npm run bench:cli-memory -- [--size-mb 1024] [--limit 1000] [--files 8] [--repo <checkout>] [--keep] [--runs 1]
 *   (node --import tsx bench/cli-memory.ts ...)
 *
 * --repo runs another checkout's CLI (the file its package.json's bin names: bench/cli-path.ts) on the same folder,
 * e.g. an earlier commit in a worktree, to measure before and after:
 *   git worktree add --detach /tmp/wt-old <commit> && ln -s "$PWD/node_modules" /tmp/wt-old/node_modules
 *   node --import tsx bench/cli-memory.ts --repo /tmp/wt-old
 * The folder is written to the temp folder (bounded memory) and reused by later runs of the
 * same size; --keep leaves it there, otherwise the last run deletes it. Linux only (/proc).
 */
const sizeMb = flag('--size-mb', 1024);
const limit = flag('--limit', 1000);
const fileCount = flag('--files', 8);
const runs = flag('--runs', 1);
const keep = process.argv.includes('--keep');
const repoAt = process.argv.indexOf('--repo');
const repo = repoAt === -1 ? REPO_ROOT : resolve(process.argv[repoAt + 1] ?? '');
const cliScript = await cliOf(repo);
const MB = 1024 * 1024;
const START = Date.UTC(2026, 3, 29, 0, 0, 0);
const RATE = 200;
const folder = join(tmpdir(), `capture-replay-cli-memory-${sizeMb}mb-${fileCount}files`);

/** `files` capture files of `sizeMb / files` each, in SageMaker's yyyy/mm/dd/hh partitions, times continuing from file to file. */
async function generate(): Promise<{ records: number; bytes: number }> {
  const done = join(folder, '.complete');
  if (existsSync(done)) return JSON.parse(readFileSync(done, 'utf8')) as { records: number; bytes: number };
  rmSync(folder, { recursive: true, force: true });
  let records = 0;
  let bytes = 0;
  let startMs = START;
  for (let i = 0; i < fileCount; i++) {
    const hour = new Date(startMs).toISOString();
    const dir = join(
      folder,
      'bench-endpoint/AllTraffic',
      hour.slice(0, 4),
      hour.slice(5, 7),
      hour.slice(8, 10),
      hour.slice(11, 13),
    );
    mkdirSync(dir, { recursive: true });
    const maxBytes = Math.round((sizeMb * MB) / fileCount);
    // Long enough for maxBytes at this rate (~2.2 KB a line); the generator stops at maxBytes.
    const written = await writeCaptureFile(join(dir, `capture-${i}.jsonl`), {
      ratePerSecond: RATE,
      durationSeconds: Math.ceil(maxBytes / 1500 / RATE),
      startTime: startMs,
      seed: i + 1,
      maxBytes,
    });
    records += written.records;
    bytes += written.bytes;
    startMs += Math.ceil(written.records / RATE) * 1000;
    process.stderr.write(
      `  generated ${join(dir, `capture-${i}.jsonl`)}: ${written.records} records, ${(written.bytes / MB).toFixed(0)} MiB\n`,
    );
  }
  const summary = { records, bytes };
  await import('node:fs/promises').then((fs) => fs.writeFile(done, JSON.stringify(summary)));
  return summary;
}

function peakRssKb(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

async function runOnce(
  url: string,
  out: string,
  runId: string,
): Promise<{ code: number | null; wallS: number; peakMb: number; stderr: string }> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      cliScript,
      'replay',
      folder,
      '--url',
      url,
      '--out',
      out,
      '--run-id',
      runId,
      '--limit',
      String(limit),
      '--streaming',
      '--no-progress',
    ],
    {
      cwd: repo,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let peakKb = 0;
  const timer = setInterval(() => {
    const kb = child.pid === undefined ? null : peakRssKb(child.pid);
    if (kb !== null) peakKb = Math.max(peakKb, kb);
  }, 20);
  const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
  clearInterval(timer);
  return { code, wallS: (performance.now() - started) / 1000, peakMb: peakKb / 1024, stderr };
}

async function main(): Promise<void> {
  if (process.platform !== 'linux') throw new Error('this benchmark reads /proc (Linux only)');
  process.stderr.write(`capture folder ${folder}\n`);
  const { records, bytes } = await generate();
  const commit = await new Promise<string>((done) => {
    const git = spawn('git', ['-C', repo, 'rev-parse', '--short', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let text = '';
    git.stdout.setEncoding('utf8').on('data', (c: string) => (text += c));
    git.once('exit', () => done(text.trim() || 'unknown'));
  });
  const dirty = await new Promise<boolean>((done) => {
    const git = spawn('git', ['-C', repo, 'status', '--porcelain', '--untracked-files=no'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let text = '';
    git.stdout.setEncoding('utf8').on('data', (c: string) => (text += c));
    git.once('exit', () => done(text.trim() !== ''));
  });
  const server = await startMockProcess(['--ttft-ms', '5', '--itl-ms', '1', '--output-tokens', '4']);
  const out = join(tmpdir(), `capture-replay-cli-memory-out-${process.pid}`);
  const results: { code: number | null; wallS: number; peakMb: number }[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const result = await runOnce(server.url, out, `bench-${i}`);
      results.push(result);
      if (result.code !== 0) process.stderr.write(result.stderr);
      const manifestFile = join(out, `bench-${i}`, 'target', 'run_manifest.json');
      const manifest = existsSync(manifestFile)
        ? (JSON.parse(readFileSync(manifestFile, 'utf8')) as {
            scheduled: number;
            succeeded: number;
            balanced: boolean;
          })
        : null;
      const accounting = manifest
        ? `scheduled ${manifest.scheduled}, succeeded ${manifest.succeeded}, balanced ${manifest.balanced}`
        : 'no run_manifest.json';
      process.stderr.write(
        `  run ${i + 1}: exit ${result.code}, ${result.wallS.toFixed(1)} s, peak RSS ${result.peakMb.toFixed(0)} MB; ${accounting}\n`,
      );
    }
  } finally {
    await server.stop();
    rmSync(out, { recursive: true, force: true });
    if (!keep) rmSync(folder, { recursive: true, force: true });
  }
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString().slice(0, 10),
        repo,
        commit: `${commit}${dirty ? ' (+ uncommitted edits)' : ''}`,
        node: process.version,
        folder: { path: folder, files: fileCount, bytes, records },
        limit,
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
