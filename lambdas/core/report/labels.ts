/** What the pages call the comparison's metrics, verdicts and tests (the markup and the browser scripts alike). */
import type { ComparedMetricTag, Verdict } from '../compare/types';

export const METRIC_NAMES: Record<ComparedMetricTag, string> = {
  request_latency: 'Request latency',
  time_to_first_token: 'Time to first token',
  inter_token_latency: 'Inter-token latency',
  time_to_second_token: 'Time to second token',
  output_sequence_length: 'Output sequence length',
  output_token_throughput_per_user: 'Output token throughput per user',
};

export const VERDICT_LABELS: Record<Verdict, string> = {
  worse: 'worse',
  better: 'better',
  no_difference: 'no difference',
  inconclusive: 'inconclusive',
  changed: 'changed',
};

export const TEST_NAMES: Record<string, string> = {
  wilcoxon_signed_rank: 'Wilcoxon signed-rank',
  mann_whitney_u: 'Mann-Whitney U',
  mcnemar_exact: "McNemar's exact",
  fisher_exact: "Fisher's exact",
};
