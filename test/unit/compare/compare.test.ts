/**
 * compareTargets / buildComparisonDocument: pairing and exclusion accounting, verdict rules,
 * reproducibility, unpaired labelling, more than two targets, JSON safety.
 */
import { describe, expect, it } from 'vitest';
import {
  buildComparisonDocument,
  compareTargets,
  formatP,
  MIN_VALUES_FOR,
  outputLengthAgreement,
} from '../../../lambdas/core/compare/compare';
import { Rng } from '../../../lambdas/core/stats/rng';
import {
  COMPARED_METRICS,
  DEFAULT_COMPARE_OPTIONS,
  OUTCOME,
  type CompareOptions,
  type ComparedMetricTag,
  type MetricComparison,
  type OutcomeCode,
  type TargetColumns,
} from '../../../lambdas/core/compare/types';

const OPTIONS: CompareOptions = { ...DEFAULT_COMPARE_OPTIONS, resamples: 400 };

interface Row {
  key: string;
  outcome?: OutcomeCode;
  values?: Partial<Record<ComparedMetricTag, number>>;
  captured?: number;
}

function columns(name: string, rows: readonly Row[]): TargetColumns {
  const n = rows.length;
  const metrics = {} as Record<ComparedMetricTag, Float64Array>;
  for (const { tag } of COMPARED_METRICS) metrics[tag] = new Float64Array(n).fill(NaN);
  rows.forEach((r, i) => {
    if ((r.outcome ?? OUTCOME.succeeded) !== OUTCOME.succeeded) return;
    for (const [tag, v] of Object.entries(r.values ?? {})) metrics[tag as ComparedMetricTag][i] = v as number;
  });
  return {
    name,
    keys: rows.map((r) => r.key),
    outcome: Uint8Array.from(rows.map((r) => r.outcome ?? OUTCOME.succeeded)),
    errorType: rows.map((r) => (r.outcome === OUTCOME.failed ? 'http_500' : null)),
    dropReason: rows.map((r) => (r.outcome === OUTCOME.dropped ? 'deadline' : null)),
    metrics,
    capturedOutputTokens: Float64Array.from(rows.map((r) => r.captured ?? NaN)),
  };
}

function gaussian(rng: Rng): number {
  const u = rng.double() || Number.MIN_VALUE;
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.double());
}

/**
 * A and B over the same n requests: a per-request base cost (lognormal, sigma 0.5) times
 * per-target noise (lognormal, sigma 0.1); B's values scaled by `scale[tag]`.
 */
function pairedTargets(
  n: number,
  scale: Partial<Record<ComparedMetricTag, number>>,
  seed = 1,
  tags: readonly ComparedMetricTag[] = [
    'request_latency',
    'time_to_first_token',
    'output_sequence_length',
    'output_token_throughput_per_user',
  ],
): [TargetColumns, TargetColumns] {
  const rng = new Rng(seed, 99);
  const bases = tags.map(() => Array.from({ length: n }, () => 100 * Math.exp(0.5 * gaussian(rng))));
  const make = (name: string, factor: (tag: ComparedMetricTag) => number) =>
    columns(
      name,
      Array.from({ length: n }, (_, i) => ({
        key: `event-${i}#0`,
        values: Object.fromEntries(
          tags.map((tag, m) => [
            tag,
            ((bases[m] as number[])[i] as number) * factor(tag) * Math.exp(0.1 * gaussian(rng)),
          ]),
        ),
      })),
    );
  return [make('A', () => 1), make('B', (tag) => scale[tag] ?? 1)];
}

const metric = (metrics: readonly MetricComparison[], tag: ComparedMetricTag): MetricComparison => {
  const m = metrics.find((x) => x.tag === tag);
  if (!m) throw new Error(`no ${tag}`);
  return m;
};

describe('pairing and exclusion accounting', () => {
  const v = { request_latency: 10 };
  const A = columns('A', [
    { key: 'ok#0', values: v },
    { key: 'a-fail#0', outcome: OUTCOME.failed },
    { key: 'b-fail#0', values: v },
    { key: 'both-fail#0', outcome: OUTCOME.failed },
    { key: 'a-drop#0', outcome: OUTCOME.dropped },
    { key: 'b-drop#0', values: v },
    { key: 'both-drop#0', outcome: OUTCOME.dropped },
    { key: 'mix-af-bd#0', outcome: OUTCOME.failed },
    { key: 'mix-ad-bf#0', outcome: OUTCOME.dropped },
    { key: 'only-a#0', values: v },
    { key: 'dup#0', values: v },
    { key: 'dup#0', values: v },
  ]);
  const B = columns('B', [
    { key: 'only-b#0', values: v },
    { key: 'ok#0', values: v },
    { key: 'a-fail#0', values: v },
    { key: 'b-fail#0', outcome: OUTCOME.failed },
    { key: 'both-fail#0', outcome: OUTCOME.failed },
    { key: 'a-drop#0', values: v },
    { key: 'b-drop#0', outcome: OUTCOME.dropped },
    { key: 'both-drop#0', outcome: OUTCOME.dropped },
    { key: 'mix-af-bd#0', outcome: OUTCOME.dropped },
    { key: 'mix-ad-bf#0', outcome: OUTCOME.failed },
    { key: 'dup#0', values: v },
  ]);

  it('paired: one reason per key, the baseline side first for a failed/dropped mix', () => {
    const c = compareTargets(A, B, { ...OPTIONS, mode: 'paired' });
    expect(c.mode).toBe('paired');
    expect(c.pairs.used).toBe(2); // ok, dup
    expect(c.pairs.excluded).toEqual({
      baseline_failed: 2, // a-fail, mix-af-bd
      candidate_failed: 1,
      both_failed: 1,
      baseline_dropped: 2, // a-drop, mix-ad-bf
      candidate_dropped: 1,
      both_dropped: 1,
      only_in_baseline: 1,
      only_in_candidate: 1,
      duplicate_in_baseline: 1,
    });
    const distinctKeys = new Set([...A.keys, ...B.keys]).size;
    const excluded = Object.values(c.pairs.excluded).reduce((a, b) => a + b, 0);
    expect(c.pairs.used + excluded).toBe(distinctKeys + 1); // + the duplicate row
  });

  it('paired error rate: over the pairs fired on both sides, McNemar on the discordant ones', () => {
    const c = compareTargets(A, B, { ...OPTIONS, mode: 'paired' });
    // fired on both: ok, a-fail, b-fail, both-fail, dup
    expect(c.errors.test).toBe('mcnemar_exact');
    expect(c.errors.baseline).toEqual({ fired: 5, failed: 2, rate: 0.4 });
    expect(c.errors.candidate).toEqual({ fired: 5, failed: 2, rate: 0.4 });
    expect(c.errors.p_value).toBe(1);
    expect(c.errors.verdict).toBe('inconclusive'); // fewer than 20 fired
  });

  it('auto: paired when the shared keys are at least half of each side, else unpaired', () => {
    const rows = (keys: string[]) => keys.map((key) => ({ key, values: { request_latency: 5 } }));
    const half = compareTargets(
      columns('A', rows(['a', 'b', 'c', 'd'])),
      columns('B', rows(['a', 'b', 'x', 'y'])),
      OPTIONS,
    );
    expect(half.mode).toBe('paired');
    const less = compareTargets(
      columns('A', rows(['a', 'b', 'c', 'd'])),
      columns('B', rows(['a', 'x', 'y', 'z'])),
      OPTIONS,
    );
    expect(less.mode).toBe('unpaired');
    // Half of one side but not of the other: unpaired.
    const lopsided = compareTargets(
      columns('A', rows(['a', 'b'])),
      columns('B', rows(['a', 'b', 'x', 'y', 'z'])),
      OPTIONS,
    );
    expect(lopsided.mode).toBe('unpaired');
  });

  it('unpaired: rows per side, Mann-Whitney, Fisher, no difference distribution', () => {
    const c = compareTargets(A, B, { ...OPTIONS, mode: 'unpaired' });
    expect(c.mode).toBe('unpaired');
    expect(c.pairs.used).toBe(6 + 5); // succeeded rows of A and of B
    expect(c.pairs.excluded).toEqual({
      baseline_failed: 3,
      baseline_dropped: 3,
      candidate_failed: 3,
      candidate_dropped: 3,
    });
    expect(c.pairs.used + Object.values(c.pairs.excluded).reduce((a, b) => a + b, 0)).toBe(
      A.keys.length + B.keys.length,
    );
    const m = metric(c.metrics, 'request_latency');
    expect(m.test).toBe('mann_whitney_u');
    expect(m.n).toBe(5); // the smaller side
    expect(m.baseline.n).toBe(6);
    expect(m.candidate.n).toBe(5);
    expect(m.distribution.difference).toBeNull();
    expect(c.errors.test).toBe('fisher_exact');
    expect(c.errors.baseline).toEqual({ fired: 9, failed: 3, rate: 3 / 9 });
  });
});

describe('metrics and verdicts', () => {
  it('a clear regression on 40 pairs: worse on p50, inconclusive p90 and p99 (too few values)', () => {
    const [A, B] = pairedTargets(40, { request_latency: 1.3 }, 3);
    const m = metric(compareTargets(A, B, OPTIONS).metrics, 'request_latency');
    expect(m.n).toBe(40);
    expect(m.test).toBe('wilcoxon_signed_rank');
    expect(m.statistic_verdicts.p99).toBe('inconclusive');
    expect(m.statistic_verdicts.p90).toBe('inconclusive');
    expect(m.statistic_verdicts.p50).toBe('worse');
    expect(m.verdict).toBe('worse');
    expect(m.verdict_reason).toMatch(
      /^paired shift \+\d+\.\d % \[[-\d.]+, [-\d.]+\], Holm p = [\de.-]+ < 0\.05, beyond the 2 % minimum effect\.$/,
    );
    expect(m.relative_pct.p50.estimate).toBeGreaterThan(20);
    expect(MIN_VALUES_FOR).toEqual({ mean: 20, p50: 20, p90: 100, p99: 1000 });
  });

  it('fewer than 20 pairs: inconclusive, with the count in the reason', () => {
    const [A, B] = pairedTargets(12, { request_latency: 2 }, 4);
    const m = metric(compareTargets(A, B, OPTIONS).metrics, 'request_latency');
    expect(m.verdict).toBe('inconclusive');
    expect(m.verdict_reason).toBe('Only 12 pairs carry this metric; at least 20 are needed.');
    for (const stat of ['mean', 'p50', 'p90', 'p99'] as const) expect(m.statistic_verdicts[stat]).toBe('inconclusive');
  });

  it('output length is neutral: a longer answer is `changed`, never better or worse', () => {
    const [A, B] = pairedTargets(300, { output_sequence_length: 1.15 }, 5);
    const m = metric(compareTargets(A, B, OPTIONS).metrics, 'output_sequence_length');
    expect(m.direction).toBe('neutral');
    expect(m.verdict).toBe('changed');
    expect(m.statistic_verdicts.p50).toBe('changed');
    expect(m.statistic_verdicts.mean).toBe('changed');
    const [C, D] = pairedTargets(300, { output_sequence_length: 0.85 }, 6);
    expect(metric(compareTargets(C, D, OPTIONS).metrics, 'output_sequence_length').verdict).toBe('changed');
  });

  it('throughput is higher-is-better: more is `better`, less is `worse` (the mirror of latency)', () => {
    const [A, B] = pairedTargets(300, { output_token_throughput_per_user: 1.2, request_latency: 1.2 }, 7);
    const c = compareTargets(A, B, OPTIONS);
    expect(metric(c.metrics, 'output_token_throughput_per_user').verdict).toBe('better');
    expect(metric(c.metrics, 'output_token_throughput_per_user').statistic_verdicts.p50).toBe('better');
    expect(metric(c.metrics, 'request_latency').verdict).toBe('worse');
    const [C, D] = pairedTargets(300, { output_token_throughput_per_user: 0.8, request_latency: 0.8 }, 8);
    const e = compareTargets(C, D, OPTIONS);
    expect(metric(e.metrics, 'output_token_throughput_per_user').verdict).toBe('worse');
    expect(metric(e.metrics, 'request_latency').verdict).toBe('better');
  });

  it('significant but below the minimum effect: no_difference, and the reason says so', () => {
    const [A, B] = pairedTargets(8000, { request_latency: 1.015 }, 9, ['request_latency']);
    const m = metric(compareTargets(A, B, OPTIONS).metrics, 'request_latency');
    expect(m.p_value_adjusted as number).toBeLessThan(0.05);
    expect(m.verdict).toBe('no_difference');
    expect(m.difference.p50.ci_low as number).toBeGreaterThan(0);
    expect(m.verdict_reason).toMatch(
      /^paired shift \+1\.\d % \[\d\.\d, \d\.\d\], Holm p = .* < 0\.05, but within the 2 % minimum effect\.$/,
    );
  });

  it('a metric on neither side is left out; one on one side only has no pairs', () => {
    const [A, B] = pairedTargets(50, {}, 10, ['request_latency']);
    const onlyB = { ...B, metrics: { ...B.metrics, time_to_first_token: new Float64Array(50).fill(3) } };
    const c = compareTargets(A, onlyB, OPTIONS);
    expect(c.metrics.map((m) => m.tag)).toEqual(['request_latency', 'time_to_first_token']);
    const ttft = metric(c.metrics, 'time_to_first_token');
    expect(ttft.n).toBe(0);
    expect(ttft.verdict).toBe('inconclusive');
    expect(ttft.p_value).toBeNull();
    expect(ttft.difference.p50).toEqual({ estimate: null, ci_low: null, ci_high: null });
  });

  it('Holm across the metrics of the comparison; 101 quantiles per distribution', () => {
    const [A, B] = pairedTargets(200, { request_latency: 1.1 }, 11);
    const c = compareTargets(A, B, OPTIONS);
    const ps = c.metrics.map((m) => m.p_value as number);
    const sorted = [...ps].sort((a, b) => a - b);
    const k = c.metrics.length;
    const smallest = c.metrics.find((m) => m.p_value === sorted[0]) as MetricComparison;
    expect(smallest.p_value_adjusted).toBeCloseTo(Math.min(1, k * (sorted[0] as number)), 12);
    for (const m of c.metrics) {
      expect(m.p_value_adjusted as number).toBeGreaterThanOrEqual(m.p_value as number);
      expect(m.distribution.baseline).toHaveLength(101);
      expect(m.distribution.candidate).toHaveLength(101);
      expect(m.distribution.difference).toHaveLength(101);
      expect(m.distribution.baseline[50]).toBe(m.baseline.p50);
      expect(m.baseline.n).toBe(m.n);
    }
  });

  it('a baseline statistic of 0: relative change null, the difference still judged', () => {
    const rows = (f: (i: number) => number) =>
      Array.from({ length: 60 }, (_, i) => ({ key: `k${i}`, values: { output_sequence_length: f(i) } }));
    const A = columns(
      'A',
      rows((i) => (i < 40 ? 0 : 5)),
    );
    const B = columns(
      'B',
      rows((i) => (i < 40 ? 3 : 8)),
    );
    const m = metric(compareTargets(A, B, OPTIONS).metrics, 'output_sequence_length');
    expect(m.baseline.p50).toBe(0);
    expect(m.relative_pct.p50).toEqual({ estimate: null, ci_low: null, ci_high: null });
    expect(m.difference.p50.estimate).toBe(3);
    expect(m.verdict).toBe('changed');
    expect(m.verdict_reason).toMatch(/^paired shift \+3 tokens \[/);
  });
});

describe('error rate', () => {
  it('paired: many more candidate failures is worse (McNemar), few fired is inconclusive', () => {
    const rows = (failed: (i: number) => boolean) =>
      Array.from({ length: 400 }, (_, i) => ({
        key: `k${i}`,
        outcome: failed(i) ? OUTCOME.failed : OUTCOME.succeeded,
        values: { request_latency: 100 + (i % 17) },
      }));
    const A = columns(
      'A',
      rows((i) => i % 50 === 0),
    );
    const B = columns(
      'B',
      rows((i) => i % 10 === 0),
    );
    const c = compareTargets(A, B, OPTIONS);
    expect(c.errors.test).toBe('mcnemar_exact');
    expect(c.errors.baseline.rate).toBeCloseTo(8 / 400, 12);
    expect(c.errors.candidate.rate).toBeCloseTo(40 / 400, 12);
    expect(c.errors.difference.estimate).toBeCloseTo(0.08, 12);
    expect(c.errors.difference.ci_low as number).toBeGreaterThan(0);
    expect(c.errors.p_value as number).toBeLessThan(1e-6);
    expect(c.errors.verdict).toBe('worse');
    const reversed = compareTargets(B, A, OPTIONS);
    expect(reversed.errors.verdict).toBe('better');
  });

  it('unpaired: Fisher, and no difference when the rates agree', () => {
    const rows = (prefix: string, n: number, every: number) =>
      Array.from({ length: n }, (_, i) => ({
        key: `${prefix}${i}`,
        outcome: i % every === 0 ? OUTCOME.failed : OUTCOME.succeeded,
        values: { request_latency: 10 },
      }));
    const c = compareTargets(columns('A', rows('a', 300, 10)), columns('B', rows('b', 250, 10)), OPTIONS);
    expect(c.mode).toBe('unpaired');
    expect(c.errors.test).toBe('fisher_exact');
    expect(c.errors.verdict).toBe('no_difference');
  });
});

describe('documents', () => {
  it('the same seed gives the same document; another seed moves only the intervals', () => {
    const [A, B] = pairedTargets(150, { request_latency: 1.05 }, 12);
    const one = buildComparisonDocument([A, B], OPTIONS, '2026-04-29T00:00:00Z');
    const two = buildComparisonDocument([A, B], OPTIONS, '2026-04-29T00:00:00Z');
    expect(JSON.stringify(two)).toBe(JSON.stringify(one));
    const other = buildComparisonDocument([A, B], { ...OPTIONS, seed: 2 }, '2026-04-29T00:00:00Z');
    const m1 = metric(one.metrics, 'request_latency');
    const m2 = metric(other.metrics, 'request_latency');
    expect(m2.difference.p50.estimate).toBe(m1.difference.p50.estimate);
    expect(m2.p_value).toBe(m1.p_value);
    expect(m2.difference.mean.ci_low).not.toBe(m1.difference.mean.ci_low);
    expect(other.method.seed).toBe(2);
  });

  it('three targets: each candidate against the first, the top level is the first comparison', () => {
    const [A, B] = pairedTargets(80, { request_latency: 1.2 }, 13);
    const [, C] = pairedTargets(80, { request_latency: 0.8 }, 13);
    const doc = buildComparisonDocument([A, B, { ...C, name: 'C' }], OPTIONS, '2026-04-29T00:00:00Z');
    expect(doc.targets).toEqual(['A', 'B', 'C']);
    expect(doc.comparisons.map((c) => [c.baseline, c.candidate])).toEqual([
      ['A', 'B'],
      ['A', 'C'],
    ]);
    expect(doc.baseline).toBe('A');
    expect(doc.candidate).toBe('B');
    expect(doc.metrics).toEqual(doc.comparisons[0]?.metrics);
    expect(doc.output_length_agreement.map((o) => o.target)).toEqual(['A', 'B', 'C']);
    expect(doc.schema_version).toBe('1.0');
    expect(doc.producer).toBe('capture-replay');
    expect(doc.method.correction).toBe('holm');
    expect(doc.method.interval).toMatch(/percentile bootstrap, 400 resamples/);
    expect(doc.method.interval).toMatch(/Poisson/);
    expect(() => buildComparisonDocument([A], OPTIONS, 'x')).toThrow(/at least two targets/);
    expect(() => compareTargets(A, B, { ...OPTIONS, confidence: 1 })).toThrow(/confidence/);
  });

  it('JSON-safe: no NaN or Infinity anywhere, whatever the data', () => {
    const weird = (name: string, shift: number) =>
      columns(name, [
        ...Array.from({ length: 30 }, (_, i) => ({
          key: `z${i}`,
          values: { request_latency: 5, time_to_first_token: 0, output_sequence_length: i % 2 ? 0 : 4 + shift },
          captured: i % 3 === 0 ? 0 : 4,
        })),
        { key: 'f', outcome: OUTCOME.failed },
        { key: `only-${name}`, values: { request_latency: 1e308 } },
      ]);
    const doc = buildComparisonDocument([weird('A', 0), weird('B', 1), columns('empty', [])], OPTIONS, 't');
    const walk = (x: unknown, path: string): void => {
      if (typeof x === 'number') {
        if (!Number.isFinite(x)) throw new Error(`${path} is ${x}`);
      } else if (Array.isArray(x)) x.forEach((v, i) => walk(v, `${path}[${i}]`));
      else if (x && typeof x === 'object') for (const [k, v] of Object.entries(x)) walk(v, `${path}.${k}`);
    };
    walk(doc, 'doc');
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
    const rl = metric(doc.metrics, 'request_latency');
    expect(rl.p_value).toBeNull(); // every difference 0 over more than 13 pairs
    expect(rl.verdict).toBe('no_difference');
    expect(doc.comparisons[1]?.metrics.every((m) => m.n === 0 && m.verdict === 'inconclusive')).toBe(true);
  });
});

describe('output length agreement and formatting', () => {
  it('replayed against captured tokens over succeeded rows that have both', () => {
    const t = columns('A', [
      { key: 'a', values: { output_sequence_length: 10 }, captured: 10 },
      { key: 'b', values: { output_sequence_length: 12 }, captured: 10 },
      { key: 'c', values: { output_sequence_length: 5 }, captured: 10 },
      { key: 'd', values: { output_sequence_length: 7 }, captured: 0 },
      { key: 'e', values: { output_sequence_length: 7 } },
      { key: 'f', outcome: OUTCOME.failed, captured: 10 },
    ]);
    const o = outputLengthAgreement(t);
    expect(o.compared).toBe(4);
    expect(o.exact_match_rate).toBe(0.25);
    expect(o.difference.mean).toBe((0 + 2 - 5 + 7) / 4);
    expect(o.difference.p50).toBe(1); // numpy median of [-5, 0, 2, 7]
    expect(o.mean_abs_relative_pct).toBeCloseTo(((0 + 0.2 + 0.5) / 3) * 100, 12); // the 0-token capture left out
    expect(outputLengthAgreement(columns('E', [])).exact_match_rate).toBeNull();
  });

  it('p-values in sentences', () => {
    expect(formatP(1e-30)).toBe('1e-30');
    expect(formatP(2.345e-5)).toBe('2.3e-5');
    expect(formatP(0.04123)).toBe('0.041');
    expect(formatP(0.5)).toBe('0.5');
    expect(formatP(0)).toBe('< 1e-300');
  });

  it('a p-value below what a double holds is written "< 1e-300" once, not "p = < 1e-300 < 0.05"', () => {
    const [A, B] = pairedTargets(3000, { request_latency: 2 }, 11, ['request_latency']);
    const m = metric(compareTargets(A, B, OPTIONS).metrics, 'request_latency');
    expect(m.p_value_adjusted).toBe(0);
    expect(m.verdict).toBe('worse');
    expect(m.verdict_reason).toMatch(
      /^paired shift \+\d+\.\d % \[[-\d.]+, [-\d.]+\], Holm p < 1e-300, beyond the 2 % minimum effect\.$/,
    );
  });
});
