/**
 * The plan's options (core/plan/plan.ts PlanOptions) as the replay command's flags: the table
 * the command's usage errors name them by. Each option maps to the key commander sets for its
 * flag (ReplayCommandOptions: the long name in camelCase, `--start-offset` sets `startOffset`),
 * and the flag is that key written back as commander reads it; a test holds every entry to
 * the option the program defines (test/unit/cli/plan-flags.test.ts).
 */
import type { PlanField, PlanProblem } from '../../core/plan/plan';
import { problemsLine } from '../../core/option-problem';
import type { ReplayCommandOptions } from './config';

/** The flag that sets each plan option (the target kind comes from --url or --target). */
export const PLAN_OPTION_FLAGS: Readonly<Record<PlanField, keyof ReplayCommandOptions>> = {
  runId: 'runId',
  targetKind: 'url',
  timeScale: 'timeScale',
  intraSecond: 'intraSecond',
  startOffsetMs: 'startOffset',
  endOffsetMs: 'endOffset',
  limit: 'limit',
  sampleRate: 'sample',
  seed: 'seed',
  amplify: 'amplify',
  modelOverride: 'model',
  forceStreaming: 'streaming',
};

/** commander's key for a long flag, back to the flag: `startOffset` -> `--start-offset`. */
export function flagOfKey(key: string): string {
  let flag = '--';
  for (const c of key) flag += c >= 'A' && c <= 'Z' ? `-${c.toLowerCase()}` : c;
  return flag;
}

/** A plan option's flag: `endOffsetMs` -> `--end-offset`. */
export function planFlag(field: PlanField): string {
  return flagOfKey(PLAN_OPTION_FLAGS[field]);
}

/** The plan's problems in one line, in flags: `--end-offset (1) is before --start-offset (5); --seed must be ...`. */
export function planProblemsAsFlags(problems: readonly PlanProblem[]): string {
  return problemsLine(problems, planFlag);
}
