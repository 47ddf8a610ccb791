import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * A child process (old generation at most 400 MB) keeps 50 MB live, runs a full collection (the
 * warm-up's, after which V8 sets the next limit), then keeps 150 MB more, as a lane's answers in
 * flight are promoted; it prints how many mark-compacts that took. With V8's own limit, one on
 * the way; with the growth set at run time (eleven times what is live, within the 400 MB), none.
 */
const CHILD = `
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { spaceOutMajorCollections } from './lambdas/adapters/heap-growth.ts';
import { collectGarbage } from './lambdas/adapters/full-gc.ts';
if (process.argv[1] === 'spaced' && !spaceOutMajorCollections(1000)) throw new Error('flag refused');
const kept = [];
const keep = (mb) => { const to = process.memoryUsage().heapUsed + mb * 1e6; while (process.memoryUsage().heapUsed < to) for (let i = 0; i < 1000; i++) kept.push({ i, s: 'x'.repeat(1000) + i }); };
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
  const r = spawnSync(
    process.execPath,
    ['--max-old-space-size=400', '--import', 'tsx', '--input-type=module', '-e', CHILD, mode],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return (JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as { majors: number }).majors;
}

describe('spaceOutMajorCollections', () => {
  it('sets the old generation limit at run time: a heap that grows fourfold after a full collection gets no mark-compact', () => {
    expect(majorsAfterGrowth('default')).toBeGreaterThan(0);
    expect(majorsAfterGrowth('spaced')).toBe(0);
  }, 120_000);
});
