/**
 * The A/B comparison's data, in and out. Input is columnar (one typed array per metric) so a
 * million pairs fit in memory and the bootstrap runs over flat arrays; output is the
 * `comparison.json` document, written as is.
 *
 * Every difference is candidate - baseline (B - A) in the metric's unit. A verdict is from
 * the candidate's point of view: `worse` means B is worse than A.
 */

/** The metrics compared, with AIPerf's tags. */
export const COMPARED_METRICS = [
  { tag: 'request_latency', unit: 'ms', direction: 'lower_is_better' },
  { tag: 'time_to_first_token', unit: 'ms', direction: 'lower_is_better' },
  { tag: 'inter_token_latency', unit: 'ms', direction: 'lower_is_better' },
  { tag: 'time_to_second_token', unit: 'ms', direction: 'lower_is_better' },
  { tag: 'output_sequence_length', unit: 'tokens', direction: 'neutral' },
  { tag: 'output_token_throughput_per_user', unit: 'tokens/sec/user', direction: 'higher_is_better' },
] as const satisfies readonly { tag: string; unit: string; direction: MetricDirection }[];

export type ComparedMetricTag = (typeof COMPARED_METRICS)[number]['tag'];

/**
 * Lower latency is better, higher throughput is better; output length is neither: a longer
 * or shorter answer to the same prompt is a change (`changed`), not an improvement.
 */
export type MetricDirection = 'lower_is_better' | 'higher_is_better' | 'neutral';

/** What happened to one scheduled request at one target. */
export const OUTCOME = { succeeded: 0, failed: 1, dropped: 2 } as const;
export type OutcomeCode = (typeof OUTCOME)[keyof typeof OUTCOME];

/**
 * One target's requests, one row per scheduled request, columnar. Row order is free; rows are
 * matched across targets by `keys`.
 */
export interface TargetColumns {
  name: string;
  /**
   * The request's identity in the capture: capture event id, plus `#k` for the k-th
   * occurrence of the same event id (k from 0), so two runs of the same captures match.
   */
  keys: string[];
  /** OUTCOME code per row. */
  outcome: Uint8Array;
  /** Error type of a failed row (null otherwise). */
  errorType: (string | null)[];
  /** Drop reason of a dropped row (null otherwise). */
  dropReason: (string | null)[];
  /** Per metric, the value per row; NaN where the row has none (failed, dropped, or not measured). */
  metrics: Record<ComparedMetricTag, Float64Array>;
  /** Output tokens in the captured response (`usage`), NaN when the capture had none. */
  capturedOutputTokens: Float64Array;
}

export interface CompareOptions {
  /** `auto`: paired when the targets share most of their request keys (see `pairing`). */
  mode: 'paired' | 'unpaired' | 'auto';
  /** Bootstrap resamples (default 2000). */
  resamples: number;
  /** Seed of the bootstrap's generator: the same seed and data give the same intervals. */
  seed: number;
  /** Confidence level of the intervals (default 0.95). */
  confidence: number;
  /** Significance level of the tests after Holm's correction (default 0.05). */
  alpha: number;
  /** Smallest relative change called better or worse (default 0.02 = 2 %). */
  minEffect: number;
}

export const DEFAULT_COMPARE_OPTIONS: CompareOptions = {
  mode: 'auto',
  resamples: 2000,
  seed: 1,
  confidence: 0.95,
  alpha: 0.05,
  minEffect: 0.02,
};

export type Verdict = 'better' | 'worse' | 'no_difference' | 'inconclusive' | 'changed';

export interface Interval {
  estimate: number | null;
  ci_low: number | null;
  ci_high: number | null;
}

export type StatName = 'mean' | 'p50' | 'p90' | 'p99';

export interface SideStats {
  n: number;
  mean: number | null;
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

export interface MetricComparison {
  tag: ComparedMetricTag;
  unit: string;
  direction: MetricDirection;
  /** Pairs (paired) or values per side (unpaired) that carry this metric. */
  n: number;
  baseline: SideStats;
  candidate: SideStats;
  /** B - A for each statistic, with its bootstrap interval, in the metric's unit. */
  difference: Record<StatName, Interval>;
  /** (B - A) / A for each statistic, in % (null when A's statistic is 0 or absent). */
  relative_pct: Record<StatName, Interval>;
  /**
   * Paired only (null unpaired): the median of the per-request differences B - A, with its
   * bootstrap interval, and that shift relative to A's p50 in %. This is what pairing buys:
   * the request-to-request spread of the traffic cancels out, so the shift is measured far
   * more tightly than the difference of the two p50s; the metric verdict is judged on it.
   */
  paired_shift: { difference: Interval; relative_pct: Interval } | null;
  /** Per statistic: better/worse/no_difference/inconclusive (too few values for that quantile). */
  statistic_verdicts: Record<StatName, Verdict>;
  /** Wilcoxon signed-rank (paired) or Mann-Whitney U (unpaired), two-sided. */
  test: 'wilcoxon_signed_rank' | 'mann_whitney_u';
  p_value: number | null;
  /** Holm-adjusted across the metrics of this comparison. */
  p_value_adjusted: number | null;
  verdict: Verdict;
  /** One sentence: why this verdict (significance, effect against --min-effect, or too few values). */
  verdict_reason: string;
  /**
   * 101 quantiles (0, 1, ..., 100 %) of each side's values and of the per-pair differences
   * (paired only): enough to draw ECDFs and the difference distribution without the records.
   */
  distribution: {
    baseline: number[];
    candidate: number[];
    difference: number[] | null;
  };
}

export interface PairAccounting {
  /** Pairs where both targets succeeded: the pairs every metric is compared on. */
  used: number;
  /** Requests not compared, by reason (e.g. baseline_failed, candidate_dropped, only_in_candidate). */
  excluded: Record<string, number>;
}

export interface ErrorRateComparison {
  /** Requests fired (succeeded + failed) and failed per side, over the compared requests. */
  baseline: { fired: number; failed: number; rate: number | null };
  candidate: { fired: number; failed: number; rate: number | null };
  /** Candidate rate - baseline rate (fraction), with its bootstrap interval. */
  difference: Interval;
  /** McNemar's exact test (paired) or Fisher's exact test (unpaired), two-sided. */
  test: 'mcnemar_exact' | 'fisher_exact';
  p_value: number | null;
  verdict: Verdict;
}

export interface OutputLengthAgreement {
  target: string;
  /** Succeeded requests whose captured response had a token count and whose replay reported one. */
  compared: number;
  /** Share of those with exactly the captured output length. */
  exact_match_rate: number | null;
  /** Replayed - captured output tokens: mean and quantiles. */
  difference: { mean: number | null; p50: number | null; p90: number | null };
  /** Mean of |replayed - captured| / captured, in %. */
  mean_abs_relative_pct: number | null;
}

export interface TargetComparison {
  baseline: string;
  candidate: string;
  mode: 'paired' | 'unpaired';
  pairs: PairAccounting;
  metrics: MetricComparison[];
  errors: ErrorRateComparison;
}

export interface ComparisonMethod {
  interval: string;
  resamples: number;
  seed: number;
  confidence: number;
  alpha: number;
  correction: 'holm';
  min_effect: number;
}

/**
 * comparison.json. For two targets the top-level `baseline` ... `errors` are that comparison;
 * with more, they are the first (A vs B) and `comparisons` lists every target against the first.
 */
export interface ComparisonDocument extends TargetComparison {
  schema_version: string;
  producer: 'capture-replay';
  generated_at: string;
  method: ComparisonMethod;
  targets: string[];
  output_length_agreement: OutputLengthAgreement[];
  comparisons: TargetComparison[];
}

export const COMPARISON_SCHEMA_VERSION = '1.0';
