/**
 * capacity.json and what the terminal says of it: the document from the search's results,
 * and the one-line summary ("B sustains 2.4x today's traffic at 99 % goodput, A 1.8x").
 */
import { FACTOR_GRID, MAX_STEPS, roundTo } from './search';
import {
  CAPACITY_SCHEMA_VERSION,
  type CapacityDocument,
  type CapacityObjectives,
  type SearchSettings,
  type TargetCapacity,
} from './types';

export interface CapacityRunInfo {
  runId: string;
  generatedAt: string;
  captures: string;
  window: CapacityDocument['window'];
  objectives: CapacityObjectives;
  search: SearchSettings & { cooldownMs: number; together: boolean; warmUpRequests: number; maxStepRequests: number };
}

export function buildCapacityDocument(info: CapacityRunInfo, targets: readonly TargetCapacity[]): CapacityDocument {
  const { objectives: o, search: s } = info;
  return {
    schema_version: CAPACITY_SCHEMA_VERSION,
    run_id: info.runId,
    generated_at: info.generatedAt,
    captures: info.captures,
    window: info.window,
    objectives: {
      goodput: o.slos,
      min_goodput: o.minGoodput,
      max_error_rate: o.maxErrorRate,
      max_client_lag_ms: o.maxClientLagMs,
    },
    search: {
      start_factor: s.startFactor,
      growth: s.growth,
      resolution: s.resolution,
      max_factor: s.maxFactor,
      cooldown_ms: s.cooldownMs,
      together: s.together,
      warm_up_requests: s.warmUpRequests,
      max_step_requests: s.maxStepRequests,
    },
    targets: [...targets],
  };
}

/** A factor as the summary and the step folders write it: `2.4x`, `0.125x` (the search's factors are on FACTOR_GRID: exact). */
export function factorText(f: number): string {
  return `${roundTo(f, FACTOR_GRID)}x`;
}

/** A share as a percentage without needless decimals: 0.99 -> `99 %`, 0.995 -> `99.5 %`. */
export function shareText(share: number): string {
  return `${roundTo(share * 100, 0.01)} %`;
}

/** What a search ended early measured: at least the factor met, less than the one failed, or none judged; and why it ended. */
function measuredText(t: TargetCapacity, why: string): string {
  if (t.sustained_factor !== null) return `at least ${factorText(t.sustained_factor)} (${why})`;
  const failed = t.steps
    .filter((st) => st.outcome === 'objectives' || st.outcome === 'errors')
    .sort((a, b) => a.factor - b.factor)[0];
  return failed ? `less than ${factorText(failed.factor)} (${why})` : `none judged (${why})`;
}

/** What a target sustained, in a few words. */
export function sustainedText(t: TargetCapacity): string {
  if (t.limited_by === 'stopped') return measuredText(t, 'the search was stopped before it ended');
  if (t.limited_by === 'step_failed') return measuredText(t, 'a step could not be run');
  if (t.limited_by === 'step_limit') return measuredText(t, `the search's limit of ${MAX_STEPS} steps`);
  if (t.limited_by === 'empty') return 'none judged (no step held a request)';
  if (t.limited_by === 'broken') {
    const broken = t.steps.find((st) => st.outcome === 'broken');
    const seen = broken?.errors[0] ? `, ${broken.errors[0].error}` : '';
    const at = factorText(t.limit_factor as number);
    return t.sustained_factor !== null
      ? `at least ${factorText(t.sustained_factor)} (broken at ${at}: no request succeeded${seen})`
      : `broken (no request succeeded at ${at}${seen})`;
  }
  if (t.limited_by === 'client') {
    if (t.sustained_factor !== null) return `at least ${factorText(t.sustained_factor)} (client-limited)`;
    const failed = t.steps.find((st) => st.outcome === 'objectives' || st.outcome === 'errors');
    const late = `the replayer was late at ${factorText(t.limit_factor as number)}`;
    return failed ? `less than ${factorText(failed.factor)} (${late})` : `none judged (${late})`;
  }
  if (t.limited_by === 'cap') return `${factorText(t.sustained_factor as number)} or more (the cap)`;
  return t.sustained_factor === null
    ? `less than ${factorText(t.limit_factor as number)} (no factor tried met the objectives)`
    : factorText(t.sustained_factor);
}

/**
 * One line, the best target first: "B sustains 2.4x today's traffic at 99 % goodput, A 1.8x"
 * (no full stop: the terminal and the report add it).
 */
export function capacitySummaryLine(doc: CapacityDocument): string {
  const ranked = [...doc.targets].sort((a, b) => (b.sustained_factor ?? -1) - (a.sustained_factor ?? -1));
  const [best, ...rest] = ranked;
  if (!best) return 'No target was searched';
  if (best.sustained_factor === null)
    return (
      `No factor sustained at ${shareText(doc.objectives.min_goodput)} goodput: ` +
      `${ranked.map((t) => `${t.name} ${sustainedText(t)}`).join(', ')}`
    );
  const head = `${best.name} sustains ${sustainedText(best)} today's traffic at ${shareText(doc.objectives.min_goodput)} goodput`;
  return rest.length === 0 ? head : `${head}, ${rest.map((t) => `${t.name} ${sustainedText(t)}`).join(', ')}`;
}
