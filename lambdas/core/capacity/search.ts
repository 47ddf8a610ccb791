/**
 * The capacity search: for each target, the largest factor of the captured traffic at which it
 * meets the objectives.
 *
 * Factors: the start factor; while every step meets the objectives, the factor times
 * `growth`, capped at `maxFactor` (meeting them there ends the search: `cap`). Once a step
 * fails, bisection between the largest factor that met them and the smallest that failed, each
 * midpoint rounded to a multiple of `resolution`, until the two are `resolution` apart. When
 * the start factor already fails, the factor is divided by `growth` until one meets them (or
 * falls below `resolution`: none sustained), then bisection. A client-limited step ends the
 * search at once: the target sustained at least the largest factor met before it.
 *
 * Each step is run by the caller (`runStep`): a full replay at that factor. Targets searched
 * together share each step whose factor they all want next (the geometric steps); a target
 * whose search has ended leaves the rounds.
 */
import type { CapacityStep, LimitedBy, SearchSettings, TargetCapacity } from './types';

/** A safety bound: geometric steps and bisection to any sane resolution end well before it. */
export const MAX_STEPS = 60;

/** Every problem with the settings at once; empty when valid. */
export function validateSearchSettings(s: SearchSettings): string[] {
  const problems: string[] = [];
  const positive = (name: string, v: number) => {
    if (!(Number.isFinite(v) && v > 0)) problems.push(`${name} must be a number > 0 (got ${String(v)})`);
  };
  positive('startFactor', s.startFactor);
  positive('resolution', s.resolution);
  positive('maxFactor', s.maxFactor);
  if (!(Number.isFinite(s.growth) && s.growth > 1)) problems.push(`growth must be a number > 1 (got ${String(s.growth)})`);
  if (s.maxFactor < s.startFactor) problems.push(`maxFactor (${s.maxFactor}) is below startFactor (${s.startFactor})`);
  return problems;
}

/** `x` rounded to a multiple of `step`, without binary noise (0.30000000000000004). */
export function roundTo(x: number, step: number): number {
  return Number((Math.round(x / step) * step).toPrecision(12));
}

/** The factor to run next given the steps so far (in any order), or null when the search is over. */
export function nextFactor(steps: readonly Pick<CapacityStep, 'factor' | 'outcome'>[], s: SearchSettings): number | null {
  if (steps.length === 0) return s.startFactor;
  if (steps.length >= MAX_STEPS || steps.some((st) => st.outcome === 'client')) return null;
  const { met, failed } = bracket(steps);
  if (failed === null) {
    const best = met as number;
    return best >= s.maxFactor ? null : Math.min(s.maxFactor, best * s.growth);
  }
  if (met === null) {
    const lower = failed / s.growth;
    return lower < s.resolution ? null : lower;
  }
  if (failed - met <= s.resolution * (1 + 1e-9)) return null;
  const mid = roundTo((met + failed) / 2, s.resolution);
  return mid > met && mid < failed ? mid : null;
}

/** The largest factor that met the objectives and the smallest that failed them (null: none). */
function bracket(steps: readonly Pick<CapacityStep, 'factor' | 'outcome'>[]): { met: number | null; failed: number | null } {
  let met: number | null = null;
  let failed: number | null = null;
  for (const st of steps) {
    if (st.outcome === 'met') met = met === null ? st.factor : Math.max(met, st.factor);
    else if (st.outcome !== 'client') failed = failed === null ? st.factor : Math.min(failed, st.factor);
  }
  return { met, failed };
}

const x = (f: number) => `${roundTo(f, 1e-6)}x`;

/** What a client-limited search tells of the target: the largest factor met, or plainly that none was. */
function clientNote(client: CapacityStep, met: number | null, failing: CapacityStep | undefined): string {
  if (met !== null) {
    const failedToo = failing ? ` and failed the objectives at ${x(failing.factor)}` : '';
    return `The target sustained at least ${x(met)}${failedToo}; the replayer could not send ${x(client.factor)} on time (${client.reason}), so this machine cannot tell more.`;
  }
  if (failing) return `No factor sustained: ${x(failing.factor)} already failed (${failing.reason}), and at ${x(client.factor)} the replayer could not send on time (${client.reason}).`;
  return `No factor sustained: at ${x(client.factor)}, the first step, the replayer already could not send on time (${client.reason}), so this machine cannot tell whether the target sustains it.`;
}

/** The target's result from its steps once the search is over. */
export function conclude(name: string, steps: readonly CapacityStep[], s: SearchSettings): TargetCapacity {
  const client = steps.find((st) => st.outcome === 'client');
  const { met, failed } = bracket(steps.filter((st) => st !== client));
  let limitedBy: LimitedBy;
  let limitFactor: number | null;
  let note: string;
  if (client) {
    limitedBy = 'client';
    limitFactor = client.factor;
    note = `${clientNote(client, met, steps.find((st) => st.factor === failed && st.outcome !== 'met' && st !== client))} To go further: more fire threads (--workers), a bigger machine, or the AWS pipeline (amplify in a schedule).`;
  } else if (failed === null) {
    limitedBy = 'cap';
    limitFactor = met;
    note = `Met the objectives at the cap, ${x(s.maxFactor)}: raise --max-factor to look further.`;
  } else {
    const failing = steps.find((st) => st.factor === failed && st.outcome !== 'met') as CapacityStep;
    limitedBy = failing.outcome === 'errors' ? 'errors' : 'objectives';
    limitFactor = failed;
    note = met === null ? `No factor tried met the objectives: at ${x(failed)} ${failing.reason}.` : `Met the objectives at ${x(met)}; at ${x(failed)} ${failing.reason}.`;
  }
  return { name, sustained_factor: met, limited_by: limitedBy, limit_factor: limitFactor, note, steps: [...steps].sort((a, b) => a.factor - b.factor) };
}

/** Runs one step at `factor` for `targets` (one, or several together); one result per target. */
export type StepRunner = (factor: number, targets: readonly string[]) => Promise<Map<string, CapacityStep>>;

/**
 * Searches `targets` (together: sharing every step they want at the same factor; else the
 * caller passes one target at a time). `pause` runs between steps (the cool-down).
 */
export async function searchCapacity(targets: readonly string[], s: SearchSettings, runStep: StepRunner, pause: () => Promise<void>): Promise<TargetCapacity[]> {
  const steps = new Map<string, CapacityStep[]>(targets.map((t) => [t, []]));
  let first = true;
  for (;;) {
    const wanted = new Map<number, string[]>();
    for (const t of targets) {
      const f = nextFactor(steps.get(t) as CapacityStep[], s);
      if (f !== null) wanted.set(f, [...(wanted.get(f) ?? []), t]);
    }
    if (wanted.size === 0) break;
    for (const [factor, group] of [...wanted.entries()].sort((a, b) => a[0] - b[0])) {
      if (!first) await pause();
      first = false;
      const results = await runStep(factor, group);
      for (const t of group) {
        const step = results.get(t);
        if (!step) throw new Error(`the step at ${x(factor)} returned no result for target ${t}`);
        (steps.get(t) as CapacityStep[]).push(step);
      }
    }
  }
  return targets.map((t) => conclude(t, steps.get(t) as CapacityStep[], s));
}
