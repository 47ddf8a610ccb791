/**
 * The comparison flags `replay` (two targets or more) and `compare` share (program.ts,
 * comparisonOptions): the comparison's settings, and the --fail-on gate on its verdicts.
 */
import { DEFAULT_COMPARE_OPTIONS, type CompareOptions, type ComparisonDocument } from '../core/compare/types';
import { hasVerdict } from '../core/export/comparison-table';

export interface ComparisonFlags {
  minEffect?: number;
  resamples?: number;
  failOn?: string[];
}

/** The comparison's settings: the defaults, then the command's own (`mode`), then the flags. */
export function compareOptionsOf(flags: ComparisonFlags, command: Partial<CompareOptions> = {}): CompareOptions {
  return {
    ...DEFAULT_COMPARE_OPTIONS,
    ...command,
    ...(flags.minEffect !== undefined ? { minEffect: flags.minEffect } : {}),
    ...(flags.resamples !== undefined ? { resamples: flags.resamples } : {}),
  };
}

/** Why --fail-on stops the command (exit 3, FAIL_ON_EXIT), or null when no verdict matches it. */
export function failOnMatch(
  comparison: ComparisonDocument,
  failOn: readonly string[] | null | undefined,
): string | null {
  return failOn && hasVerdict(comparison, failOn) ? `a verdict is ${failOn.join(' or ')} (--fail-on)` : null;
}
