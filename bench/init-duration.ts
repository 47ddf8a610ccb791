/**
 * The cold-start INIT duration of the deployed bundles, measured on this machine, for the
 * simulator's cold-start rule (sim/aws/lambda.ts): the app is synthesized as a user's
 * `cdk synth` does it (esbuild, lib/replay-function.ts's options: the same path as
 * test/integration/bundles.test.ts), and each function's bundle is loaded in a fresh `node`
 * per sample (test/support/invoke-bundle.mjs --load-only, `NODE_OPTIONS=--enable-source-maps`
 * as deployed). INIT here = Node's start to the runner's first line (`bootMs`, standing in
 * for the runtime's bootstrap) + the bundle's require, which builds the handler (`loadMs`):
 * what Lambda's INIT phase runs for a managed runtime. Samples of the functions interleaved.
 *
 * The options and the output: beside the flags below.
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../test/support/processes';
import { synthesizeApp } from '../test/support/synth';
import { flag } from './args';

/**
 *   node --import tsx bench/init-duration.ts [--samples 41]
 *
 * Output: per function the samples' median, p90, max and the lognormal fitted to them (mean
 * and standard deviation of ln ms), which sim/settings.ts takes as its INIT distribution; the
 * same for the process's CPU time (Node's start included), steadier on a busy machine, and
 * the load average at the end.
 */
const samples = flag('--samples', 41);
const FUNCTIONS = { fire: /\/Fire\//, ingest: /\/Ingest\//, collect: /\/Collect\// } as const;
const RUNNER = join(REPO_ROOT, 'test/support/invoke-bundle.mjs');

interface LoadOutcome {
  ok: boolean;
  bootMs: number;
  loadMs: number;
  /** The process's CPU time (user + system) to the report: steadier than wall time on a busy machine. */
  cpuMs: number;
}

/** One cold load of the bundle in a fresh process; its outcome line comes back on fd 3. */
function loadOnce(assetDir: string, handler: string): Promise<LoadOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUNNER, assetDir, handler, '--load-only'], {
      env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: '--enable-source-maps' },
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdio[3]?.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr?.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', () => {
      try {
        const outcome = JSON.parse(out) as LoadOutcome;
        if (!outcome.ok) throw new Error(out);
        resolve(outcome);
      } catch {
        reject(new Error(`bundle ${assetDir} did not load: ${out || err}`));
      }
    });
  });
}

const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

function summary(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const logs = values.map(Math.log);
  const mu = logs.reduce((a, b) => a + b, 0) / logs.length;
  const sigma = Math.sqrt(logs.reduce((a, b) => a + (b - mu) ** 2, 0) / Math.max(1, logs.length - 1));
  return {
    n: values.length,
    medianMs: round(quantile(sorted, 0.5)),
    p90Ms: round(quantile(sorted, 0.9)),
    maxMs: round(sorted.at(-1) ?? 0),
    lognormal: { mu: round(mu, 4), sigma: round(sigma, 4) },
  };
}

const app = await synthesizeApp();
try {
  const fns = Object.entries(FUNCTIONS).map(([name, pattern]) => ({ name, fn: app.fn(pattern) }));
  const init: Record<string, number[]> = Object.fromEntries(fns.map((f) => [f.name, []]));
  const require: Record<string, number[]> = Object.fromEntries(fns.map((f) => [f.name, []]));
  const cpu: Record<string, number[]> = Object.fromEntries(fns.map((f) => [f.name, []]));
  for (const f of fns) await loadOnce(f.fn.assetDir, f.fn.handler); // warm the disk cache, not measured
  for (let i = 0; i < samples; i++) {
    for (const f of fns) {
      const o = await loadOnce(f.fn.assetDir, f.fn.handler);
      init[f.name]?.push(o.bootMs + o.loadMs);
      require[f.name]?.push(o.loadMs);
      cpu[f.name]?.push(o.cpuMs);
    }
  }
  const result = {
    benchmark: 'init-duration',
    node: process.version,
    arch: process.arch,
    samples,
    initMs: Object.fromEntries(fns.map((f) => [f.name, summary(init[f.name] ?? [])])),
    requireMs: Object.fromEntries(fns.map((f) => [f.name, summary(require[f.name] ?? [])])),
    cpuMs: Object.fromEntries(fns.map((f) => [f.name, summary(cpu[f.name] ?? [])])),
    loadAverage: loadavg().map((l) => round(l)),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  app.cleanup();
}
