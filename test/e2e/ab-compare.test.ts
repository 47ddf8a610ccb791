/**
 * The A/B verdict end to end, as a user runs it: two bundled mock servers in their own
 * processes, B with a first token 20 % later and the same inter-token latency; the CLI (its
 * own process) replays 200 captured requests to both at once. The verdicts must say TTFT
 * `worse` and ITL `no_difference`, the comparison must pair every request, and `compare` on
 * the two result folders made by that run must reach the same verdicts and gate with exit 3.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComparisonDocument } from '../../lambdas/core/compare/types';
import { writeCaptureFile } from '../support/capture-gen';
import { runCli, startMockProcess, type CliResult, type MockProcess } from '../support/processes';
import { loadFactor, machineLoad, retryTimingOnce, tolerance } from '../support/timing';

const REQUESTS = 200;
const TTFT_A_MS = 50;
const TTFT_B_MS = 60; // 20 % longer
const ITL_MS = 8;

let dir: string;
let captures: string;
let out: string;
let a: MockProcess;
let b: MockProcess;
let run: CliResult;
let doc: ComparisonDocument;
/** The run the tests read: `ab`, or `ab-2` when the first missed on timing and was replayed. */
let runId = 'ab';
/**
 * The smallest change a verdict calls better or worse: the default 2 %, widened on a loaded
 * machine, where two mock processes competing for CPU differ by more than that without any
 * difference in what they were told (B's 20 % slower first token stays far above it).
 */
let minEffect = '0.02';

const metric = (d: ComparisonDocument, tag: string) => {
  const m = d.metrics.find((x) => x.tag === tag);
  if (!m) throw new Error(`no ${tag} in the comparison`);
  return m;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cr-ab-'));
  captures = join(dir, 'captures.jsonl');
  out = join(dir, 'out');
  // 40 requests/s for 5 s of capture time, replayed at 2x: 2.5 s of firing.
  await writeCaptureFile(captures, {
    ratePerSecond: 40,
    durationSeconds: REQUESTS / 40,
    startTime: Date.UTC(2026, 3, 29),
    seed: 7,
    bodyBytes: 600,
  });
  [a, b] = await Promise.all([
    startMockProcess(['--ttft-ms', String(TTFT_A_MS), '--itl-ms', String(ITL_MS), '--output-tokens', '10']),
    startMockProcess(['--ttft-ms', String(TTFT_B_MS), '--itl-ms', String(ITL_MS), '--output-tokens', '10']),
  ]);
  // Both targets share the machine at the same instants, so load mostly cancels in the paired
  // differences; what is left widens with the load (timing.ts), and a run that still misses
  // the verdicts is replayed once, saying so.
  const replay = async (id: string) => {
    minEffect = (0.02 * loadFactor()).toFixed(3);
    if (minEffect !== '0.020') console.warn(`[timing] A/B replay ${id}: --min-effect ${minEffect} (${machineLoad()})`);
    const result = await runCli([
      'replay',
      captures,
      '--target',
      `A=${a.url}`,
      '--target',
      `B=${b.url}`,
      '--streaming',
      '--time-scale',
      '2',
      '--out',
      out,
      '--run-id',
      id,
      '--no-progress',
      '--resamples',
      '1000',
      '--min-effect',
      minEffect,
    ]);
    return {
      id,
      result,
      doc:
        result.code === 0
          ? (JSON.parse(readFileSync(join(out, id, 'comparison.json'), 'utf8')) as ComparisonDocument)
          : null,
    };
  };
  const { result } = await retryTimingOnce(
    'A/B replay',
    (n) => replay(n === 1 ? 'ab' : `ab-${n}`),
    (r) => (r.doc ? timingProblems(r.doc) : []),
  );
  ({ id: runId, result: run } = result);
  doc = result.doc ?? (JSON.parse(readFileSync(join(out, runId, 'comparison.json'), 'utf8')) as ComparisonDocument);
}, 240_000);

/** The verdicts and sizes that depend on the machine's timing, as problems (none: all hold). */
function timingProblems(d: ComparisonDocument): string[] {
  const ttft = metric(d, 'time_to_first_token');
  const itl = metric(d, 'inter_token_latency');
  const shift = ttft.difference.p50.estimate ?? NaN;
  const pairedShift = ttft.paired_shift?.difference.estimate ?? NaN;
  const slack = tolerance('A/B TTFT and ITL', 2); // ms around the 10 ms the servers differ
  const itlPct = Number(minEffect) * 100; // % of ITL: what the verdict allows
  return [
    ...(ttft.verdict === 'worse' ? [] : [`TTFT verdict ${ttft.verdict}`]),
    ...(Math.abs(shift - (TTFT_B_MS - TTFT_A_MS)) < slack
      ? []
      : [`TTFT p50 difference ${shift.toFixed(2)} ms (10 +- ${slack.toFixed(1)})`]),
    ...(Math.abs(pairedShift - (TTFT_B_MS - TTFT_A_MS)) < slack
      ? []
      : [`TTFT paired shift ${pairedShift.toFixed(2)} ms (10 +- ${slack.toFixed(1)})`]),
    ...(itl.verdict === 'no_difference' ? [] : [`ITL verdict ${itl.verdict}`]),
    ...(Math.abs(itl.relative_pct.p50.estimate ?? NaN) < itlPct
      ? []
      : [`ITL p50 change ${itl.relative_pct.p50.estimate?.toFixed(2)} % (< ${itlPct.toFixed(1)})`]),
    ...(Math.abs(itl.paired_shift?.relative_pct.estimate ?? NaN) < itlPct
      ? []
      : [`ITL paired shift ${itl.paired_shift?.relative_pct.estimate?.toFixed(2)} % (< ${itlPct.toFixed(1)})`]),
  ];
}

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  if (process.env.KEEP_TEST_OUTPUT) process.stderr.write(`kept ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
});

describe('replay --target A=... --target B=...', () => {
  it('runs both targets and exits 0', () => {
    expect(run.stderr).not.toMatch(/bug|Error:/);
    expect(run.code).toBe(0);
    for (const name of ['A', 'B']) {
      const manifest = JSON.parse(readFileSync(join(out, runId, name, 'run_manifest.json'), 'utf8'));
      expect(manifest).toMatchObject({ target: name, scheduled: REQUESTS, succeeded: REQUESTS, balanced: true });
    }
  });

  it('pairs every request and names baseline and candidate', () => {
    expect(doc).toMatchObject({ schema_version: expect.any(String), baseline: 'A', candidate: 'B', mode: 'paired' });
    expect(doc.pairs.used).toBe(REQUESTS);
    expect(Object.values(doc.pairs.excluded).reduce((s, n) => s + n, 0)).toBe(0);
  });

  it('TTFT: worse, by about the 10 ms the servers differ (ITL: no_difference), within the timing tolerances', () => {
    expect(timingProblems(doc)).toEqual([]);
  });

  it('TTFT: worse, by about the 10 ms the servers differ', () => {
    const ttft = metric(doc, 'time_to_first_token');
    expect(ttft.verdict).toBe('worse');
    const p50 = ttft.difference.p50;
    expect(p50.ci_low!).toBeLessThanOrEqual(p50.estimate!);
    expect(p50.ci_high!).toBeGreaterThanOrEqual(p50.estimate!);
    expect(ttft.relative_pct.p50.estimate).toBeGreaterThan(14);
    // The paired shift (median of per-request B - A) is what the verdict is judged on (its size: timingProblems).
    expect(ttft.paired_shift!.difference.ci_low).toBeGreaterThan(0);
    for (const stat of ['mean', 'p50', 'p90', 'p99'] as const) {
      const d = ttft.difference[stat];
      expect([d.estimate, d.ci_low, d.ci_high].every((v) => typeof v === 'number')).toBe(true);
    }
    expect(ttft.p_value).toBeLessThan(0.001);
  });

  it('ITL: no_difference', () => {
    expect(metric(doc, 'inter_token_latency').verdict).toBe('no_difference');
  });

  it('prints the verdicts in a table that fits 80 columns, and writes the report', () => {
    expect(run.stdout).toMatch(/B vs A: paired, 200 pairs compared/);
    expect(run.stdout).toMatch(/Time to first token.*WORSE/);
    const lines = run.stdout.split('\n');
    const start = lines.findIndex((l) => l.startsWith('B vs A:'));
    const block = lines.slice(start, lines.indexOf('', start));
    expect(block.length).toBeGreaterThan(8);
    const widths = block.map((l) => [...l].length);
    expect(Math.max(...widths)).toBeLessThanOrEqual(80);
    const html = readFileSync(join(out, runId, 'report.html'), 'utf8');
    expect(html).toContain('<html');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href="?https?:/);
  });

  it('compare on the two folders reaches the same verdicts and gates with exit 3', async () => {
    const cmp = join(dir, 'cmp');
    const result = await runCli([
      'compare',
      join(out, runId, 'A'),
      join(out, runId, 'B'),
      '--out',
      cmp,
      '--fail-on',
      'worse',
      '--resamples',
      '1000',
      '--min-effect',
      minEffect,
    ]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/--fail-on/);
    const again = JSON.parse(readFileSync(join(cmp, 'comparison.json'), 'utf8')) as ComparisonDocument;
    expect(again.mode).toBe('paired');
    expect(again.pairs.used).toBe(REQUESTS);
    expect(metric(again, 'time_to_first_token').verdict).toBe('worse');
    expect(metric(again, 'inter_token_latency').verdict).toBe('no_difference');
    // Same records, same seed: the same intervals as the run's own comparison.
    expect(metric(again, 'time_to_first_token').difference).toEqual(metric(doc, 'time_to_first_token').difference);
  });
});
