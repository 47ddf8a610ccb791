/**
 * The A/B comparison: targets' columns in, `comparison.json` out. Pure; the statistics are in
 * ../stats/. Every difference is candidate - baseline (B - A); a verdict is the candidate's.
 *
 * The rules are the documented ones, and change with them: when rows pair (`mode: 'auto'`),
 * how `pairs` counts used and excluded requests, which values each metric's n counts
 * (docs/ab-statistics.md#how-pairs-are-counted), and when a statistic, a metric or the error
 * rate is `worse`, `better`, `changed`, `no_difference` or `inconclusive`
 * (docs/ab-statistics.md#how-to-read-a-verdict).
 */
import { percentile, quantiles101Sorted } from '../metrics/stats';
import { bootstrapPaired, bootstrapSampleQuantiles, bootstrapUnpaired } from '../stats/bootstrap/bootstrap';
import { describeIntervalMethod, percentileInterval } from '../stats/bootstrap/interval';
import { bootstrapRateDifference } from '../stats/bootstrap/rate-difference';
import type { BootstrapReplicates } from '../stats/bootstrap/replicates';
import { fisherExact2x2, mcnemarExact } from '../stats/exact-tests';
import { holm } from '../stats/holm';
import { mannWhitneyUSorted } from '../stats/mann-whitney';
import { sortFloat64InPlace } from '../stats/sort';
import type { TestResult } from '../stats/test-result';
import { sortedFromSplit, splitDifferences, wilcoxonSignedRankSplit } from '../stats/wilcoxon';
import {
  COMPARED_METRICS,
  COMPARISON_SCHEMA_VERSION,
  OUTCOME,
  type CompareOptions,
  type ComparisonDocument,
  type ErrorRateComparison,
  type Interval,
  type MetricComparison,
  type MetricDirection,
  type OutputLengthAgreement,
  type PairAccounting,
  type SideStats,
  type StatName,
  type TargetColumns,
  type TargetComparison,
  type Verdict,
} from './types';

const STATS: readonly StatName[] = ['mean', 'p50', 'p90', 'p99'];
/** Values a verdict needs: 20 for a metric, its mean and p50; n (1 - q) >= 10 beyond a tail quantile. */
export const MIN_VALUES = 20;
export const MIN_VALUES_FOR: Record<StatName, number> = { mean: 20, p50: 20, p90: 100, p99: 1000 };
/** Share of each side's rows whose key the other side has, from which `auto` pairs. */
export const AUTO_PAIRED_SHARE = 0.5;

const num = (x: number | null | undefined): number | null =>
  x === null || x === undefined || !Number.isFinite(x) ? null : x;
const NULL_INTERVAL: Interval = { estimate: null, ci_low: null, ci_high: null };

function validate(options: CompareOptions): void {
  const bad = (what: string) => {
    throw new Error(`compare options: ${what}`);
  };
  if (!['paired', 'unpaired', 'auto'].includes(options.mode))
    bad(`mode must be paired, unpaired or auto, not ${String(options.mode)}`);
  if (!Number.isInteger(options.resamples) || options.resamples < 1) bad('resamples must be a positive integer');
  if (!Number.isFinite(options.seed)) bad('seed must be a number');
  if (!(options.confidence > 0 && options.confidence < 1)) bad('confidence must be in (0, 1)');
  if (!(options.alpha > 0 && options.alpha < 1)) bad('alpha must be in (0, 1)');
  if (!(options.minEffect >= 0)) bad('minEffect must be >= 0');
}

// ---------------------------------------------------------------------------------------
// Pairing

interface Pairing {
  mode: 'paired' | 'unpaired';
  pairs: PairAccounting;
  /** Paired: the used pairs' rows. Unpaired: each side's succeeded rows. */
  baselineRows: Int32Array;
  candidateRows: Int32Array;
  errors:
    | { paired: true; bothFailed: number; baselineOnly: number; candidateOnly: number; neither: number }
    | { paired: false; baselineFailed: number; baselineFired: number; candidateFailed: number; candidateFired: number };
}

const fired = (o: number) => o === OUTCOME.succeeded || o === OUTCOME.failed;

function pairingReason(oa: number, ob: number): string {
  const name = (o: number) => (o === OUTCOME.failed ? 'failed' : 'dropped');
  if (oa !== OUTCOME.succeeded && ob !== OUTCOME.succeeded)
    return oa === ob ? `both_${name(oa)}` : `baseline_${name(oa)}`;
  return oa !== OUTCOME.succeeded ? `baseline_${name(oa)}` : `candidate_${name(ob)}`;
}

/** Matches keys: for each baseline row, the candidate row with its key (-1 for none). */
function match(
  a: TargetColumns,
  b: TargetColumns,
): { partner: Int32Array; matched: number; duplicatesA: number; duplicatesB: number; onlyB: number } {
  const index = new Map<string, number>();
  let duplicatesA = 0;
  a.keys.forEach((k, i) => {
    if (index.has(k)) duplicatesA++;
    else index.set(k, i);
  });
  const partner = new Int32Array(a.keys.length).fill(-1);
  let matched = 0;
  let duplicatesB = 0;
  let onlyB = 0;
  b.keys.forEach((k, j) => {
    const i = index.get(k);
    if (i === undefined) onlyB++;
    else if ((partner[i] as number) >= 0) duplicatesB++;
    else {
      partner[i] = j;
      matched++;
    }
  });
  return { partner, matched, duplicatesA, duplicatesB, onlyB };
}

function pair(a: TargetColumns, b: TargetColumns, requested: CompareOptions['mode']): Pairing {
  const m = match(a, b);
  const mode =
    requested !== 'auto'
      ? requested
      : m.matched >= AUTO_PAIRED_SHARE * a.keys.length && m.matched >= AUTO_PAIRED_SHARE * b.keys.length
        ? 'paired'
        : 'unpaired';
  const excluded: Record<string, number> = {};
  const count = (reason: string, k = 1) => {
    if (k > 0) excluded[reason] = (excluded[reason] ?? 0) + k;
  };
  if (mode === 'unpaired') {
    const side = (t: TargetColumns, label: string) => {
      const rows: number[] = [];
      let failed = 0;
      for (let i = 0; i < t.outcome.length; i++) {
        const o = t.outcome[i] as number;
        if (o === OUTCOME.succeeded) rows.push(i);
        else {
          count(`${label}_${o === OUTCOME.failed ? 'failed' : 'dropped'}`);
          if (o === OUTCOME.failed) failed++;
        }
      }
      return { rows: Int32Array.from(rows), failed, fired: rows.length + failed };
    };
    const sa = side(a, 'baseline');
    const sb = side(b, 'candidate');
    return {
      mode,
      pairs: { used: sa.rows.length + sb.rows.length, excluded },
      baselineRows: sa.rows,
      candidateRows: sb.rows,
      errors: {
        paired: false,
        baselineFailed: sa.failed,
        baselineFired: sa.fired,
        candidateFailed: sb.failed,
        candidateFired: sb.fired,
      },
    };
  }
  const rowsA = new Int32Array(m.matched);
  const rowsB = new Int32Array(m.matched);
  let used = 0;
  const errors = { paired: true as const, bothFailed: 0, baselineOnly: 0, candidateOnly: 0, neither: 0 };
  let onlyA = 0;
  for (let i = 0; i < a.keys.length; i++) {
    const j = m.partner[i] as number;
    if (j < 0) {
      onlyA++;
      continue;
    }
    const oa = a.outcome[i] as number;
    const ob = b.outcome[j] as number;
    if (oa === OUTCOME.succeeded && ob === OUTCOME.succeeded) {
      rowsA[used] = i;
      rowsB[used++] = j;
    } else count(pairingReason(oa, ob));
    if (fired(oa) && fired(ob)) {
      const fa = oa === OUTCOME.failed;
      const fb = ob === OUTCOME.failed;
      if (fa && fb) errors.bothFailed++;
      else if (fa) errors.baselineOnly++;
      else if (fb) errors.candidateOnly++;
      else errors.neither++;
    }
  }
  // Rows of a duplicated baseline key have no partner: they are duplicates, not baseline-only.
  count('only_in_baseline', onlyA - m.duplicatesA);
  count('only_in_candidate', m.onlyB);
  count('duplicate_in_baseline', m.duplicatesA);
  count('duplicate_in_candidate', m.duplicatesB);
  return {
    mode,
    pairs: { used, excluded },
    baselineRows: rowsA.subarray(0, used),
    candidateRows: rowsB.subarray(0, used),
    errors,
  };
}

// ---------------------------------------------------------------------------------------
// Metrics

function gather(values: Float64Array, rows: Int32Array): Float64Array {
  const out = new Float64Array(rows.length);
  for (let k = 0; k < rows.length; k++) out[k] = values[rows[k] as number] as number;
  return out;
}

function hasFinite(values: Float64Array): boolean {
  for (let i = 0; i < values.length; i++) if (Number.isFinite(values[i] as number)) return true;
  return false;
}

function sideStats(sorted: Float64Array): SideStats {
  const n = sorted.length;
  if (n === 0) return { n: 0, mean: null, p50: null, p90: null, p99: null };
  let s = 0;
  for (let i = 0; i < n; i++) s += sorted[i] as number;
  return {
    n,
    mean: num(s / n),
    p50: num(percentile(sorted, 50)),
    p90: num(percentile(sorted, 90)),
    p99: num(percentile(sorted, 99)),
  };
}

function interval(estimate: number | null, replicates: Float64Array | null, confidence: number): Interval {
  if (estimate === null || replicates === null) return { estimate, ci_low: null, ci_high: null };
  const ci = percentileInterval(replicates, confidence);
  return { estimate, ci_low: num(ci?.[0]), ci_high: num(ci?.[1]) };
}

/** +1 when B - A is an improvement for this direction, -1 a regression, 0 neutral. */
function label(direction: MetricDirection, sign: 1 | -1): Verdict {
  if (direction === 'neutral') return 'changed';
  const higherIsWorse = direction === 'lower_is_better';
  return sign > 0 === higherIsWorse ? 'worse' : 'better';
}

/** Whether the relative estimate (or, when A is 0, the difference) reaches the minimum effect in direction `sign`. */
function reachesEffect(rel: Interval, diff: Interval, sign: 1 | -1, minEffectPct: number): boolean {
  if (rel.estimate === null) return diff.estimate !== null && Math.sign(diff.estimate) === sign;
  return sign * rel.estimate >= minEffectPct - 1e-9;
}

function statisticVerdict(
  direction: MetricDirection,
  n: number,
  stat: StatName,
  diff: Interval,
  rel: Interval,
  minEffectPct: number,
): Verdict {
  if (n < MIN_VALUES_FOR[stat] || diff.ci_low === null || diff.ci_high === null) return 'inconclusive';
  const sign = diff.ci_low > 0 ? 1 : diff.ci_high < 0 ? -1 : 0;
  if (sign === 0 || !reachesEffect(rel, diff, sign, minEffectPct)) return 'no_difference';
  return label(direction, sign);
}

const fmt = (x: number, digits = 1) => {
  const s = x.toFixed(digits);
  return s === `-${(0).toFixed(digits)}` ? (0).toFixed(digits) : s;
};
const signed = (x: number, digits = 1) => (x > 0 ? '+' : '') + fmt(x, digits);

/** A p-value for a sentence: two significant digits, exponent below 0.001 ("1e-30", "2.3e-5"). */
export function formatP(p: number): string {
  if (p === 0) return '< 1e-300';
  if (p >= 0.001) return String(Number(p.toPrecision(2)));
  const [mantissa, exponent] = p.toExponential(1).split('e') as [string, string];
  const m = mantissa.replace(/\.0$/, '');
  return `${m}e${Number(exponent)}`;
}

/** Significant digits for a value in a sentence, by its size. */
function fmtValue(x: number): string {
  if (Number.isInteger(x)) return String(x);
  const a = Math.abs(x);
  return a >= 100 ? fmt(x, 0) : a >= 1 ? fmt(x, 1) : String(Number(x.toPrecision(2)));
}

function describeP50(rel: Interval, diff: Interval, unit: string, paired: boolean): string {
  const what = paired ? 'paired shift' : 'p50';
  if (rel.estimate !== null && rel.ci_low !== null && rel.ci_high !== null)
    return `${what} ${signed(rel.estimate)} % [${fmt(rel.ci_low)}, ${fmt(rel.ci_high)}]`;
  if (diff.estimate !== null && diff.ci_low !== null && diff.ci_high !== null) {
    return (
      `${what} ${diff.estimate > 0 ? '+' : ''}${fmtValue(diff.estimate)} ${unit} [${fmtValue(diff.ci_low)}, ` +
      `${fmtValue(diff.ci_high)}] (baseline p50 0)`
    );
  }
  return `${what} unknown`;
}

interface MetricDraft {
  comparison: MetricComparison;
  test: TestResult;
}

function metricVerdict(
  m: MetricComparison,
  test: TestResult,
  options: CompareOptions,
  paired: boolean,
): { verdict: Verdict; reason: string } {
  const minPct = options.minEffect * 100;
  const minText = `${fmt(minPct, minPct % 1 === 0 ? 0 : 1)} %`;
  if (m.n < MIN_VALUES) {
    const what = paired ? `${m.n} pairs carry this metric` : `the smaller side has ${m.n} values of this metric`;
    return { verdict: 'inconclusive', reason: `Only ${what}; at least ${MIN_VALUES} are needed.` };
  }
  // Paired: the shift of the per-request differences; unpaired: the difference of the p50s.
  const diff = m.paired_shift?.difference ?? m.difference.p50;
  const rel = m.paired_shift?.relative_pct ?? m.relative_pct.p50;
  const p50 = describeP50(rel, diff, m.unit, m.paired_shift !== null);
  const p = m.p_value_adjusted;
  if (p === null)
    return { verdict: 'no_difference', reason: `No test possible: every pair's difference is 0 (${p50}).` };
  if (!(p < options.alpha))
    return { verdict: 'no_difference', reason: `${p50}, Holm p = ${formatP(p)} >= ${options.alpha}: not significant.` };
  // A p-value below what a double holds is "< 1e-300" already: below alpha without saying so twice.
  const holmText = p === 0 ? `Holm p ${formatP(p)}` : `Holm p = ${formatP(p)} < ${options.alpha}`;
  if (diff.ci_low === null || diff.ci_high === null)
    return { verdict: 'inconclusive', reason: `${holmText} but no interval for the p50 difference.` };
  const sign = diff.ci_low > 0 ? 1 : diff.ci_high < 0 ? -1 : 0;
  if (sign === 0) return { verdict: 'no_difference', reason: `${p50}, ${holmText}, but the p50 interval includes 0.` };
  if (!reachesEffect(rel, diff, sign, minPct))
    return { verdict: 'no_difference', reason: `${p50}, ${holmText}, but within the ${minText} minimum effect.` };
  if (test.direction !== sign) {
    return {
      verdict: 'no_difference',
      reason: `${p50}, ${holmText}, but the ${paired ? 'signed ranks' : 'ranks'} lean the other way.`,
    };
  }
  return { verdict: label(m.direction, sign), reason: `${p50}, ${holmText}, beyond the ${minText} minimum effect.` };
}

/**
 * The paired metric's test and shift: the Wilcoxon signed-rank test of the differences B - A
 * over the pairs with both values, their ascending values, and the paired shift (their
 * median, relative to A's p50) with its bootstrap interval.
 */
function pairedTest(
  va: Float64Array,
  vb: Float64Array,
  sa: Float64Array,
  options: CompareOptions,
  m: number,
): { test: TestResult; differences: Float64Array; shift: MetricComparison['paired_shift'] } {
  const d = new Float64Array(sa.length);
  for (let i = 0, k = 0; i < va.length; i++) {
    const x = va[i] as number;
    const y = vb[i] as number;
    if (Number.isFinite(x) && Number.isFinite(y)) d[k++] = y - x;
  }
  const split = splitDifferences(d);
  const test = wilcoxonSignedRankSplit(split);
  const differences = sortedFromSplit(split);
  if (differences.length === 0) return { test, differences, shift: null };
  const median = percentile(differences, 50);
  const reps = bootstrapSampleQuantiles(d, options, m).p50;
  const scale = sa.length > 0 ? percentile(sa, 50) : 0;
  const shift = {
    difference: interval(num(median), reps, options.confidence),
    relative_pct:
      scale === 0
        ? NULL_INTERVAL
        : interval(
            num((median / scale) * 100),
            reps.map((v) => (v / scale) * 100),
            options.confidence,
          ),
  };
  return { test, differences, shift };
}

function compareMetrics(
  a: TargetColumns,
  b: TargetColumns,
  pairing: Pairing,
  options: CompareOptions,
): MetricComparison[] {
  const paired = pairing.mode === 'paired';
  const present = COMPARED_METRICS.filter(({ tag }) => hasFinite(a.metrics[tag]) || hasFinite(b.metrics[tag]));
  const data = present.map(({ tag }) => ({
    a: gather(a.metrics[tag], pairing.baselineRows),
    b: gather(b.metrics[tag], pairing.candidateRows),
  }));
  const boot: BootstrapReplicates[] = paired ? bootstrapPaired(data, options) : bootstrapUnpaired(data, options);
  const minPct = options.minEffect * 100;
  const drafts: MetricDraft[] = present.map(({ tag, unit, direction }, m) => {
    const { a: va, b: vb } = data[m] as { a: Float64Array; b: Float64Array };
    const reps = boot[m] as BootstrapReplicates;
    const sa = reps.sorted.baseline;
    const sb = reps.sorted.candidate;
    const { test, differences, shift } = paired
      ? pairedTest(va, vb, sa, options, m)
      : { test: mannWhitneyUSorted(sa, sb), differences: null, shift: null };
    const n = paired ? sa.length : Math.min(sa.length, sb.length);
    const baseline = sideStats(sa);
    const candidate = sideStats(sb);
    const difference = {} as Record<StatName, Interval>;
    const relative = {} as Record<StatName, Interval>;
    const verdicts = {} as Record<StatName, Verdict>;
    for (const stat of STATS) {
      const A = baseline[stat];
      const B = candidate[stat];
      if (A === null || B === null || n === 0) {
        difference[stat] = NULL_INTERVAL;
        relative[stat] = NULL_INTERVAL;
      } else {
        const ra = reps.baseline[stat];
        const rb = reps.candidate[stat];
        difference[stat] = interval(
          num(B - A),
          rb.map((v, r) => v - (ra[r] as number)),
          options.confidence,
        );
        relative[stat] =
          A === 0
            ? NULL_INTERVAL
            : interval(
                num(((B - A) / A) * 100),
                rb.map((v, r) => ((v - (ra[r] as number)) / (ra[r] as number)) * 100),
                options.confidence,
              );
      }
      verdicts[stat] = statisticVerdict(direction, n, stat, difference[stat], relative[stat], minPct);
    }
    const diffSorted = differences;
    const comparison: MetricComparison = {
      tag,
      unit,
      direction,
      n,
      baseline,
      candidate,
      difference,
      relative_pct: relative,
      paired_shift: shift,
      statistic_verdicts: verdicts,
      test: paired ? 'wilcoxon_signed_rank' : 'mann_whitney_u',
      p_value: num(test.pValue),
      p_value_adjusted: null,
      verdict: 'inconclusive',
      verdict_reason: '',
      distribution: {
        baseline: quantiles101Sorted(sa),
        candidate: quantiles101Sorted(sb),
        difference: diffSorted ? quantiles101Sorted(diffSorted) : null,
      },
    };
    return { comparison, test };
  });
  // Holm across this comparison's metrics; a metric below the minimum count is not tested for
  // a verdict, but its p-value still counts as one of the family.
  const adjusted = holm(drafts.map((d) => d.comparison.p_value));
  return drafts.map((d, m) => {
    d.comparison.p_value_adjusted = num(adjusted[m]);
    const { verdict, reason } = metricVerdict(d.comparison, d.test, options, paired);
    d.comparison.verdict = verdict;
    d.comparison.verdict_reason = reason;
    return d.comparison;
  });
}

// ---------------------------------------------------------------------------------------
// Error rate

function compareErrors(pairing: Pairing, options: CompareOptions): ErrorRateComparison {
  const e = pairing.errors;
  let baseline: ErrorRateComparison['baseline'];
  let candidate: ErrorRateComparison['candidate'];
  let p: number | null;
  let firedMin: number;
  if (e.paired) {
    const n = e.bothFailed + e.baselineOnly + e.candidateOnly + e.neither;
    const fa = e.bothFailed + e.baselineOnly;
    const fb = e.bothFailed + e.candidateOnly;
    baseline = { fired: n, failed: fa, rate: n > 0 ? fa / n : null };
    candidate = { fired: n, failed: fb, rate: n > 0 ? fb / n : null };
    p = n > 0 ? mcnemarExact(e.baselineOnly, e.candidateOnly) : null;
    firedMin = n;
  } else {
    baseline = {
      fired: e.baselineFired,
      failed: e.baselineFailed,
      rate: e.baselineFired > 0 ? e.baselineFailed / e.baselineFired : null,
    };
    candidate = {
      fired: e.candidateFired,
      failed: e.candidateFailed,
      rate: e.candidateFired > 0 ? e.candidateFailed / e.candidateFired : null,
    };
    p =
      e.baselineFired > 0 && e.candidateFired > 0
        ? fisherExact2x2(
            e.baselineFailed,
            e.baselineFired - e.baselineFailed,
            e.candidateFailed,
            e.candidateFired - e.candidateFailed,
          )
        : null;
    firedMin = Math.min(e.baselineFired, e.candidateFired);
  }
  const estimate = baseline.rate !== null && candidate.rate !== null ? candidate.rate - baseline.rate : null;
  const difference =
    estimate === null ? NULL_INTERVAL : interval(estimate, bootstrapRateDifference(e, options), options.confidence);
  let verdict: Verdict = 'no_difference';
  if (firedMin < MIN_VALUES) verdict = 'inconclusive';
  else if (p !== null && p < options.alpha && difference.ci_low !== null && difference.ci_high !== null) {
    if (difference.ci_low > 0) verdict = 'worse';
    else if (difference.ci_high < 0) verdict = 'better';
  }
  return {
    baseline,
    candidate,
    difference,
    test: e.paired ? 'mcnemar_exact' : 'fisher_exact',
    p_value: num(p),
    verdict,
  };
}

// ---------------------------------------------------------------------------------------
// Entry points

/** One candidate against the baseline. */
export function compareTargets(
  baseline: TargetColumns,
  candidate: TargetColumns,
  options: CompareOptions,
): TargetComparison {
  validate(options);
  const pairing = pair(baseline, candidate, options.mode);
  return {
    baseline: baseline.name,
    candidate: candidate.name,
    mode: pairing.mode,
    pairs: pairing.pairs,
    metrics: compareMetrics(baseline, candidate, pairing, options),
    errors: compareErrors(pairing, options),
  };
}

/**
 * Replayed against captured output length, over a target's succeeded requests that have both.
 * The mean absolute relative difference leaves out captures of 0 tokens (no relative change).
 */
export function outputLengthAgreement(target: TargetColumns): OutputLengthAgreement {
  const osl = target.metrics.output_sequence_length;
  const diffs: number[] = [];
  let exact = 0;
  let relSum = 0;
  let relCount = 0;
  for (let i = 0; i < target.outcome.length; i++) {
    if (target.outcome[i] !== OUTCOME.succeeded) continue;
    const replayed = osl[i] as number;
    const captured = target.capturedOutputTokens[i] as number;
    if (!Number.isFinite(replayed) || !Number.isFinite(captured)) continue;
    const d = replayed - captured;
    diffs.push(d);
    if (d === 0) exact++;
    if (captured !== 0) {
      relSum += Math.abs(d) / Math.abs(captured);
      relCount++;
    }
  }
  const sorted = sortFloat64InPlace(Float64Array.from(diffs));
  const n = sorted.length;
  return {
    target: target.name,
    compared: n,
    exact_match_rate: n > 0 ? exact / n : null,
    difference:
      n > 0
        ? {
            mean: num(diffs.reduce((s, d) => s + d, 0) / n),
            p50: num(percentile(sorted, 50)),
            p90: num(percentile(sorted, 90)),
          }
        : { mean: null, p50: null, p90: null },
    mean_abs_relative_pct: relCount > 0 ? num((relSum / relCount) * 100) : null,
  };
}

/**
 * comparison.json: the first target is the baseline, every other one a candidate against it;
 * the top-level comparison fields are the first candidate's.
 */
export function buildComparisonDocument(
  targets: readonly TargetColumns[],
  options: CompareOptions,
  generatedAt: string,
): ComparisonDocument {
  if (targets.length < 2) throw new Error(`a comparison needs at least two targets, got ${targets.length}`);
  validate(options);
  const [baseline, ...candidates] = targets as [TargetColumns, ...TargetColumns[]];
  const comparisons = candidates.map((c) => compareTargets(baseline, c, options));
  const first = comparisons[0] as TargetComparison;
  return {
    schema_version: COMPARISON_SCHEMA_VERSION,
    producer: 'capture-replay',
    generated_at: generatedAt,
    method: {
      interval: describeIntervalMethod(options.resamples),
      resamples: options.resamples,
      seed: options.seed,
      confidence: options.confidence,
      alpha: options.alpha,
      correction: 'holm',
      min_effect: options.minEffect,
    },
    targets: targets.map((t) => t.name),
    ...first,
    output_length_agreement: targets.map(outputLengthAgreement),
    comparisons,
  };
}
