/**
 * A realistic ReportData for the report page's tests: requests with LLM-like metrics generated
 * from a seeded generator, reduced with the product's own series/quantile code, and (for two
 * or more targets) a comparison document built by hand from the paired values, with the
 * verdicts set to cover every badge.
 */
import {
  COMPARED_METRICS,
  COMPARISON_SCHEMA_VERSION,
  type ComparedMetricTag,
  type ComparisonDocument,
  type Interval,
  type MetricComparison,
  type SideStats,
  type StatName,
  type TargetComparison,
  type Verdict,
} from '../../lambdas/core/compare/types';
import { seededRandom } from '../../lambdas/core/random';
import { buildReportSeries, type ReportSeriesRow } from '../../lambdas/core/report/series';
import type { ReportData, ReportTarget } from '../../lambdas/core/report/types';
import { percentile, quantiles101 } from '../../lambdas/core/metrics/stats';

type Row = {
  t: number;
  outcome: 'succeeded' | 'failed' | 'dropped';
  errorType?: string;
  dropReason?: string;
  lagMs: number | null;
  metrics: Partial<Record<ComparedMetricTag, number>>;
};

/** How target k differs from the baseline (k = 0). */
const PROFILES = [
  { ttft: 1, itl: 1, osl: 1, failRate: 0.012 },
  { ttft: 0.84, itl: 1.0, osl: 1.09, failRate: 0.03 },
  { ttft: 1.05, itl: 0.9, osl: 1, failRate: 0.01 },
];

/** What the fixture's comparisons say, per metric (candidate's view). */
export const FIXTURE_VERDICTS: Record<ComparedMetricTag, Verdict> = {
  request_latency: 'worse',
  time_to_first_token: 'better',
  inter_token_latency: 'no_difference',
  time_to_second_token: 'inconclusive',
  output_sequence_length: 'changed',
  output_token_throughput_per_user: 'no_difference',
};
export const FIXTURE_ERROR_VERDICT: Verdict = 'worse';

const ERROR_TYPES = ['ModelError', 'ThrottlingException', 'ReadTimeout'];
const DROP_REASONS = ['schedule_lag_exceeded', 'body_unreadable'];

function generate(names: readonly string[], n: number, durationS: number, seed: number): Row[][] {
  const rnd = seededRandom(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const times = Array.from({ length: n }, () => rnd() * durationS).sort((a, b) => a - b);
  const out: Row[][] = names.map(() => []);
  for (const t of times) {
    // One prompt, replayed at every target: the same base draw, each target's own noise.
    const baseOsl = 40 + Math.floor(rnd() * 360);
    const baseTtft = 160 * Math.exp(0.35 * normal()) * (1 + 0.25 * Math.sin((t / durationS) * 2 * Math.PI));
    const baseItl = 21 + 2.5 * normal();
    const drop = rnd();
    names.forEach((_, k) => {
      const p = PROFILES[k % PROFILES.length] as (typeof PROFILES)[number];
      const lagMs = Math.abs(1.2 + 0.8 * normal()) + (rnd() < 0.01 ? 40 * rnd() : 0);
      if (drop < 0.004) {
        out[k]?.push({
          t,
          outcome: 'dropped',
          dropReason: DROP_REASONS[drop < 0.003 ? 0 : 1],
          lagMs: null,
          metrics: {},
        });
        return;
      }
      if (rnd() < p.failRate) {
        const e = rnd();
        out[k]?.push({
          t,
          outcome: 'failed',
          errorType: ERROR_TYPES[e < 0.6 ? 0 : e < 0.9 ? 1 : 2],
          lagMs,
          metrics: {},
        });
        return;
      }
      const osl = Math.max(1, Math.round(baseOsl * p.osl * (1 + 0.04 * normal())));
      const ttft = baseTtft * p.ttft * Math.exp(0.05 * normal());
      const itl = Math.max(5, baseItl * p.itl + 0.6 * normal());
      const tts = ttft + itl * (1 + 0.05 * normal());
      const latency = ttft + itl * (osl - 1);
      out[k]?.push({
        t,
        outcome: 'succeeded',
        lagMs,
        metrics: {
          request_latency: latency,
          time_to_first_token: ttft,
          inter_token_latency: itl,
          time_to_second_token: tts,
          output_sequence_length: osl,
          output_token_throughput_per_user: 1000 / itl,
        },
      });
    });
  }
  return out;
}

function countBy(rows: Row[], key: 'errorType' | 'dropReason'): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) {
    const v = r[key];
    if (v) out[v] = (out[v] ?? 0) + 1;
  }
  return out;
}

function target(name: string, rows: Row[], maxPoints: number): ReportTarget {
  const seriesRows: ReportSeriesRow[] = rows.map((r) => ({ t: r.t, lagMs: r.lagMs, metrics: r.metrics }));
  const quantiles: ReportTarget['quantiles'] = {};
  for (const { tag } of COMPARED_METRICS) {
    const q = quantiles101(rows.map((r) => r.metrics[tag] ?? NaN));
    if (q.length > 0) quantiles[tag] = q;
  }
  return {
    summary: {
      name,
      scheduled: rows.length,
      succeeded: rows.filter((r) => r.outcome === 'succeeded').length,
      failed: rows.filter((r) => r.outcome === 'failed').length,
      dropped: rows.filter((r) => r.outcome === 'dropped').length,
      droppedByReason: countBy(rows, 'dropReason'),
      failedByType: countBy(rows, 'errorType'),
    },
    series: buildReportSeries(seriesRows, maxPoints),
    quantiles,
  };
}

function sideStats(values: number[]): SideStats {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    mean: sorted.reduce((s, v) => s + v, 0) / sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
  };
}

function compare(baseline: string, candidate: string, a: Row[], b: Row[]): TargetComparison {
  const used: [Row, Row][] = [];
  const excluded: Record<string, number> = {};
  a.forEach((ra, i) => {
    const rb = b[i] as Row;
    if (ra.outcome === 'succeeded' && rb.outcome === 'succeeded') used.push([ra, rb]);
    else {
      const reason = ra.outcome !== 'succeeded' ? `baseline_${ra.outcome}` : `candidate_${rb.outcome}`;
      excluded[reason] = (excluded[reason] ?? 0) + 1;
    }
  });
  const metrics: MetricComparison[] = COMPARED_METRICS.map(({ tag, unit, direction }) => {
    const va = used.map(([x]) => x.metrics[tag] as number);
    const vb = used.map(([, y]) => y.metrics[tag] as number);
    const sa = sideStats(va);
    const sb = sideStats(vb);
    const diffs = vb.map((v, i) => v - (va[i] as number));
    const sd = Math.sqrt(diffs.reduce((s, d) => s + d * d, 0) / diffs.length);
    const se = sd / Math.sqrt(diffs.length);
    const stats: StatName[] = ['mean', 'p50', 'p90', 'p99'];
    const width: Record<StatName, number> = { mean: 1.96 * se, p50: 2.3 * se, p90: 4 * se, p99: 9 * se };
    const difference = {} as Record<StatName, Interval>;
    const relative = {} as Record<StatName, Interval>;
    for (const s of stats) {
      const est = (sb[s] as number) - (sa[s] as number);
      difference[s] = { estimate: est, ci_low: est - width[s], ci_high: est + width[s] };
      const base = sa[s] as number;
      relative[s] = {
        estimate: (100 * est) / base,
        ci_low: (100 * (est - width[s])) / base,
        ci_high: (100 * (est + width[s])) / base,
      };
    }
    const verdict = FIXTURE_VERDICTS[tag];
    return {
      tag,
      unit,
      direction,
      n: used.length,
      baseline: sa,
      candidate: sb,
      difference,
      relative_pct: relative,
      paired_shift: { difference: difference.p50, relative_pct: relative.p50 },
      statistic_verdicts: {
        mean: verdict,
        p50: verdict,
        p90: verdict,
        p99: verdict === 'inconclusive' ? 'inconclusive' : 'no_difference',
      },
      test: 'wilcoxon_signed_rank',
      p_value: verdict === 'no_difference' ? 0.41 : verdict === 'inconclusive' ? 0.08 : 3e-7,
      p_value_adjusted: verdict === 'no_difference' ? 0.82 : verdict === 'inconclusive' ? 0.24 : 1.8e-6,
      verdict,
      verdict_reason:
        verdict === 'no_difference'
          ? 'Not significant after Holm (p = 0.82) and the interval lies within ±2 %.'
          : verdict === 'inconclusive'
            ? 'Not significant after Holm (p = 0.24) but the interval reaches beyond ±2 %: more pairs needed.'
            : `Significant after Holm (p < 0.0001) with an effect beyond ±2 % (${relative.p50.estimate?.toFixed(1)} % on the median).`,
      distribution: { baseline: quantiles101(va), candidate: quantiles101(vb), difference: quantiles101(diffs) },
    };
  });
  const side = (rows: Row[]) => {
    const fired = rows.filter((r) => r.outcome !== 'dropped').length;
    const failed = rows.filter((r) => r.outcome === 'failed').length;
    return { fired, failed, rate: fired > 0 ? failed / fired : null };
  };
  const ea = side(a);
  const eb = side(b);
  const d = (eb.rate ?? 0) - (ea.rate ?? 0);
  return {
    baseline,
    candidate,
    mode: 'paired',
    pairs: { used: used.length, excluded },
    metrics,
    errors: {
      baseline: ea,
      candidate: eb,
      difference: { estimate: d, ci_low: d - 0.006, ci_high: d + 0.006 },
      test: 'mcnemar_exact',
      p_value: 0.0004,
      verdict: FIXTURE_ERROR_VERDICT,
    },
  };
}

export interface FixtureOptions {
  names: string[];
  /** Scheduled requests per target. */
  requests: number;
  durationS?: number;
  /** Points per series before bucketing. */
  maxPoints?: number;
  seed?: number;
  title?: string;
  /** Build a comparison (needs two or more targets). */
  compare?: boolean;
}

export function reportFixture(o: FixtureOptions): ReportData {
  const rows = generate(o.names, o.requests, o.durationS ?? 900, o.seed ?? 7);
  const targets = o.names.map((name, k) => target(name, rows[k] as Row[], o.maxPoints ?? 2000));
  let comparison: ComparisonDocument | null = null;
  if (o.compare && o.names.length >= 2) {
    const base = o.names[0] as string;
    const comparisons = o.names.slice(1).map((name, i) => compare(base, name, rows[0] as Row[], rows[i + 1] as Row[]));
    const first = comparisons[0] as TargetComparison;
    comparison = {
      ...first,
      schema_version: COMPARISON_SCHEMA_VERSION,
      producer: 'capture-replay',
      generated_at: '2025-11-23T15:00:00.000Z',
      method: {
        interval: 'percentile bootstrap',
        resamples: 2000,
        seed: 1,
        confidence: 0.95,
        alpha: 0.05,
        correction: 'holm',
        min_effect: 0.02,
      },
      targets: [...o.names],
      output_length_agreement: o.names.map((name, k) => ({
        target: name,
        compared: targets[k]?.summary.succeeded ?? 0,
        exact_match_rate: k === 0 ? 0.62 : 0.18,
        difference: { mean: k === 0 ? 0.4 : 21.7, p50: k === 0 ? 0 : 17, p90: k === 0 ? 3 : 48 },
        mean_abs_relative_pct: k === 0 ? 2.1 : 9.4,
      })),
      comparisons,
    };
  }
  return {
    title: o.title ?? 'Replay report',
    runId: 'run-20251123-150000-7f3a',
    generatedAt: '2025-11-23T15:02:11.000Z',
    targets,
    comparison,
  };
}

/**
 * `data` with `tag` at one value for every request of every target (the distributions, the
 * time series, the quantiles) and no difference between the targets: what a deterministic
 * metric looks like (the same output length from both targets, say).
 */
export function withEqualValues(data: ReportData, tag: ComparedMetricTag, value: number): ReportData {
  for (const t of data.targets) {
    if (t.quantiles[tag]) t.quantiles[tag] = Array<number>(101).fill(value);
    const series = t.series.metrics[tag];
    if (series) t.series.metrics[tag] = series.map((v) => (v === null ? null : value));
  }
  const doc = data.comparison;
  for (const c of doc ? [doc, ...doc.comparisons] : []) {
    const m = c.metrics.find((x) => x.tag === tag);
    if (!m) continue;
    const same = { n: m.n, mean: value, p50: value, p90: value, p99: value };
    const zero: Interval = { estimate: 0, ci_low: 0, ci_high: 0 };
    Object.assign(m, {
      baseline: same,
      candidate: { ...same },
      difference: { mean: zero, p50: zero, p90: zero, p99: zero },
      relative_pct: { mean: zero, p50: zero, p90: zero, p99: zero },
      paired_shift: { difference: zero, relative_pct: zero },
      p_value: null,
      p_value_adjusted: null,
      verdict: 'no_difference',
      verdict_reason: "No test possible: every pair's difference is 0 (paired shift +0.0 % [0.0, 0.0]).",
      distribution: {
        baseline: Array<number>(101).fill(value),
        candidate: Array<number>(101).fill(value),
        difference: Array<number>(101).fill(0),
      },
    });
  }
  return data;
}

/**
 * A comparison report with `markup` in every string a capture, a target, a results folder or
 * the user can put there: the title, the run id, the generation time, the target names
 * (`markup` + A / B), error types, drop and exclusion reasons, the verdicts' reasons, the
 * method's and the tests' names, the comparison's mode, the output-length table's targets.
 * Metric tags stay the product's own (the page looks its charts up by them).
 */
export function reportWithMarkupEverywhere(markup: string, requests = 600): ReportData {
  const names = [`${markup}A`, `${markup}B`];
  const data = reportFixture({ names, requests, durationS: 300, compare: true, title: markup });
  data.runId = markup;
  data.generatedAt = markup;
  for (const t of data.targets) {
    t.summary.failedByType[markup] = 2;
    t.summary.droppedByReason[markup] = 1;
  }
  const doc = data.comparison as ComparisonDocument;
  doc.method.interval = markup;
  // The enums too: the page must not trust a comparison document's strings to be ours.
  doc.method.correction = markup as 'holm';
  doc.generated_at = markup;
  doc.targets = [...names, markup];
  for (const c of [doc, ...doc.comparisons]) {
    c.pairs.excluded[markup] = 3;
    c.errors.test = markup as 'fisher_exact';
    for (const m of c.metrics) {
      m.verdict_reason = markup;
      m.test = markup as 'mann_whitney_u';
    }
  }
  doc.output_length_agreement.push({
    target: markup,
    compared: 10,
    exact_match_rate: 0.5,
    difference: { mean: 1, p50: 1, p90: 2 },
    mean_abs_relative_pct: 3,
  });
  return data;
}
