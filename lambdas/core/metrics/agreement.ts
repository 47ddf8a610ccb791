/**
 * How the replayed outputs agree with the captured ones, per target, from the records:
 * - exact: models without token usage (tabular, vision...) are deterministic, so a replayed
 *   response should be byte-identical to the captured one (SHA-256 of both); the first
 *   mismatches are located by capture file and line, here in the results, never in logs;
 * - length: for LLMs, the replayed output tokens against the captured `usage`.
 */
import { percentile } from './stats';
import type { ProfileRecord } from '../types';

/** How many mismatches are located by file and line (the rest are counted). */
export const MISMATCHES_LISTED = 10;

export interface OutputAgreement {
  exact: {
    compared: number;
    matched: number;
    match_rate: number | null;
    first_mismatches: { capture_file: string; capture_line: number; x_request_id: string }[];
  };
  length: {
    compared: number;
    equal: number;
    /** Replayed - captured output tokens. */
    difference_p50: number | null;
    mean_abs_relative_pct: number | null;
  };
}

export function outputAgreement(records: readonly ProfileRecord[]): OutputAgreement {
  let compared = 0;
  let matched = 0;
  const mismatches: OutputAgreement['exact']['first_mismatches'] = [];
  const diffs: number[] = [];
  let equal = 0;
  let relSum = 0;
  let relCount = 0;
  for (const r of records) {
    if (r.error !== null) continue;
    const info = r.capture_replay;
    if (info.output_match !== null && info.output_match !== undefined) {
      compared++;
      if (info.output_match) matched++;
      else if (mismatches.length < MISMATCHES_LISTED)
        mismatches.push({
          capture_file: info.capture_file,
          capture_line: info.capture_line,
          x_request_id: r.metadata.x_request_id,
        });
    }
    const captured = info.captured_output_tokens;
    const replayed = r.metrics.output_sequence_length?.value;
    if (typeof captured === 'number' && typeof replayed === 'number') {
      diffs.push(replayed - captured);
      if (replayed === captured) equal++;
      if (captured > 0) {
        relSum += Math.abs(replayed - captured) / captured;
        relCount++;
      }
    }
  }
  diffs.sort((a, b) => a - b);
  return {
    exact: { compared, matched, match_rate: compared > 0 ? matched / compared : null, first_mismatches: mismatches },
    length: {
      compared: diffs.length,
      equal,
      difference_p50: diffs.length > 0 ? percentile(diffs, 50) : null,
      mean_abs_relative_pct: relCount > 0 ? (relSum / relCount) * 100 : null,
    },
  };
}
