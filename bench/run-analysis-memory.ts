/**
 * The collector's run analysis at production size: a two-target run of N requests per target
 * (default 180,000; 250 per shard), its shard results and final target artifacts on disk, then
 * analyseRunIfFinal in a fresh process over a filesystem ObjectStore, so the process holds
 * only what the analysis holds. Prints wall time and peak RSS (VmHWM) of that process.
 *
 *   node --import tsx bench/run-analysis-memory.ts [--requests 180000]
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLED_CHART_ASSETS } from '../lambdas/adapters/bundled-chart-assets';
import { collectRun } from '../lambdas/core/pipeline/collect';
import { analyseRunIfFinal } from '../lambdas/core/pipeline/run-analysis';
import type { ObjectStore } from '../lambdas/ports';
import { systemClock } from '../lambdas/adapters/system-clock';
import { START, writeRun } from '../test/support/scheduled-run';

/** Objects as files under a folder (enough ObjectStore for one process). */
class DirStore implements ObjectStore {
  constructor(private readonly root: string) {}
  private path(key: string) {
    return join(this.root, key);
  }
  async get(key: string) {
    return existsSync(this.path(key)) ? new Uint8Array(readFileSync(this.path(key))) : null;
  }
  async getVersioned(key: string) {
    const bytes = await this.get(key);
    return bytes ? { bytes, etag: createHash('md5').update(bytes).digest('hex') } : null;
  }
  async put(key: string, body: string | Uint8Array) {
    mkdirSync(dirname(this.path(key)), { recursive: true });
    writeFileSync(this.path(key), body);
  }
  async putIfAbsent(key: string, body: string | Uint8Array) {
    return this.putIfMatch(key, body, null);
  }
  async putIfMatch(key: string, body: string | Uint8Array, etag: string | null) {
    const current = await this.getVersioned(key);
    if (etag === null ? current !== null : current?.etag !== etag.replace(/"/g, '')) return false;
    await this.put(key, body);
    return true;
  }
  async list(prefix: string) {
    const dir = dirname(this.path(prefix + 'x'));
    if (!existsSync(dir)) return [];
    const base = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    return readdirSync(dir)
      .map((f) => base + f)
      .filter((k) => k.startsWith(prefix))
      .sort();
  }
}

const peakRssMb = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) / 1024;
const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] as string) : fallback;
};

const [mode, dir] = [process.argv[2], process.argv[3]];
const clock = { ...systemClock, nowNs: () => START + 7_200_000_000_000n }; // past the run's deadline

if (mode === 'write' && dir) {
  const store = new DirStore(dir);
  const requests = Number(arg('requests', '180000'));
  // The memory store is not used: writeRun takes any ObjectStore.
  await writeRun(store, 'bench', { requests, shardSize: 250, scheduled: true });
  for (const target of ['A', 'B']) await collectRun('bench', target, { store, clock });
} else if (mode === 'analyse' && dir) {
  const store = new DirStore(dir);
  const t0 = performance.now();
  const result = await analyseRunIfFinal('bench', {
    store,
    clock,
    notifier: null,
    resultsBucket: 'bench',
    chartAssets: BUNDLED_CHART_ASSETS,
  });
  const seconds = (performance.now() - t0) / 1000;
  const doc = result.comparison;
  console.log(
    JSON.stringify({
      status: result.status,
      seconds: Number(seconds.toFixed(1)),
      peakRssMb: Math.round(peakRssMb()),
      pairsUsed: doc?.pairs.used,
      excluded: doc?.pairs.excluded,
      history: result.history?.outcome,
    }),
  );
} else {
  const root = mkdtempSync(join(tmpdir(), 'run-analysis-bench-'));
  try {
    const self = fileURLToPath(import.meta.url);
    const requests = arg('requests', '180000');
    const w0 = performance.now();
    const write = spawnSync(process.execPath, ['--import', 'tsx', self, 'write', root, '--requests', requests], {
      stdio: 'inherit',
    });
    if (write.status !== 0) throw new Error('writing the run failed');
    console.log(
      `run written: ${requests} requests per target, 2 targets, ${((performance.now() - w0) / 1000).toFixed(0)} s`,
    );
    const run = spawnSync(process.execPath, ['--import', 'tsx', self, 'analyse', root], { stdio: 'inherit' });
    if (run.status !== 0) throw new Error('the analysis failed');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
