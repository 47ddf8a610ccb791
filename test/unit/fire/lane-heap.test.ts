import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';

const run = (mode: string, nodeFlags: string[], script: string) =>
  [...nodeFlags, '--import', 'tsx', '--input-type=module', '-e', script, mode] as const;

/**
 * A child process (old generation at most 400 MB) keeps 50 MB live, runs a full collection (the
 * warm-up's, after which V8 sets the next limit), then keeps 150 MB more, as a lane's answers in
 * flight are promoted; it prints how many mark-compacts that took. With V8's own limit, one on
 * the way; with the growth set at run time (eleven times what is live, within the 400 MB), none.
 */
const GROWTH = `
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { spaceOutMajorCollections } from './lambdas/adapters/lane-heap.ts';
import { collectGarbage } from './lambdas/adapters/full-gc.ts';
if (process.argv[1] === 'spaced' && !spaceOutMajorCollections(1000)) throw new Error('flag refused');
const kept = [];
const keep = (mb) => {
  const to = process.memoryUsage().heapUsed + mb * 1e6;
  while (process.memoryUsage().heapUsed < to) for (let i = 0; i < 1000; i++) kept.push({ i, s: 'x'.repeat(1000) + i });
};
keep(50);
collectGarbage();
let majors = 0;
const seen = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
});
seen.observe({ entryTypes: ['gc'] });
keep(150);
await new Promise((r) => setTimeout(r, 50));
seen.disconnect();
console.log(JSON.stringify({ majors, heapMb: Math.round(process.memoryUsage().heapUsed / 1e6) }));
`;

function majorsAfterGrowth(mode: 'spaced' | 'default'): number {
  const r = spawnSync(process.execPath, run(mode, ['--max-old-space-size=400'], GROWTH), {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return (JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as { majors: number }).majors;
}

/**
 * A child process allocates until V8 has run two mark-compacts of its own (the memory reducer
 * then waits 8 s before it looks), then waits 9 s; V8 traces the reducer on stdout. Left alone,
 * the reducer's timer finds the heap busy and waits to look again (it starts a collection once
 * the heap looks idle, or 100 s after the last mark-compact); with the count at 0, it stops at
 * its first look.
 */
const REDUCER = `
import { PerformanceObserver } from 'node:perf_hooks';
import { spaceOutMajorCollections } from './lambdas/adapters/lane-heap.ts';
if (process.argv[1] === 'spaced') spaceOutMajorCollections();
let majors = 0;
new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.detail.kind === 4) majors++; }).observe({ entryTypes: ['gc'] });
let kept = [];
for (let round = 0; round < 2000 && majors < 2; round++) {
  for (let i = 0; i < 5000; i++) kept.push({ i, s: 'x'.repeat(1000) + i });
  if (kept.length > 200000) kept = kept.slice(100000);
  await new Promise((r) => setImmediate(r));
}
kept = null;
await new Promise((r) => setTimeout(r, 9000));
`;

async function reducerTrace(mode: 'spaced' | 'default'): Promise<string> {
  const child = spawn(process.execPath, run(mode, ['--trace-memory-reducer'], REDUCER), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`child failed (${code}): ${out.slice(-2000)}`);
  return out;
}

describe('spaceOutMajorCollections', () => {
  it('sets the old generation limit at run time: a heap that grows fourfold after a full collection gets no mark-compact', () => {
    expect(majorsAfterGrowth('default')).toBeGreaterThan(0);
    expect(majorsAfterGrowth('spaced')).toBe(0);
  }, 120_000);

  it('stops the memory reducer at its first look, where it would otherwise keep waiting for its moment to collect', async () => {
    const [alone, spaced] = await Promise.all([reducerTrace('default'), reducerTrace('spaced')]);
    // Both reducers looked once, 8 s after the mark-compacts...
    expect(alone).toMatch(/Memory reducer: (high|low) alloc/);
    expect(spaced).toMatch(/Memory reducer: (high|low) alloc/);
    // ...the one left alone goes on waiting for its moment (or starts a collection); the other is done.
    expect(alone).toMatch(/Memory reducer: (waiting for|started GC)/);
    expect(spaced).not.toMatch(/Memory reducer: (waiting for|started GC)/);
  }, 120_000);
});
