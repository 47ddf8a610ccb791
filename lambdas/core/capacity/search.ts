/**
 * The capacity search: for each target, the largest factor of the captured traffic at which it
 * meets the objectives. Growth by `growth` while met (up to `maxFactor`: `cap`), then bisection
 * on the `resolution` grid; division when the start factor already fails; a client-limited or
 * broken step ends the search, an empty one is passed over. Every factor is on FACTOR_GRID, at
 * most MAX_STEPS steps per target. The rules as the user sees them: docs/capacity.md#how-it-works
 * (steps, targets) and #the-replayers-own-limit-is-never-reported-as-the-targets.
 *
 * Each step is run by the caller (`runStep`): a full replay at that factor. Targets searched
 * together share each step whose factor they all want next (the geometric steps); a target
 * whose search has ended leaves the rounds.
 */
import type { CapacityStep, LimitedBy, SearchSettings, TargetCapacity } from './types';

/** A safety bound: geometric steps and bisection to any sane resolution end well before it. */
export const MAX_STEPS = 60;

/**
 * Every factor tried is a multiple of this, and is written with it (factorText): two steps
 * of a target never share a name, a folder or a line of the summary.
 */
export const FACTOR_GRID = 1e-6;
/** The smallest --start-factor and --resolution: one request in a thousand of the window's. */
export const MIN_FACTOR = 0.001;
/** The smallest --growth: each geometric step at least 1 % above the last (MAX_STEPS of them reach 1.8x). */
export const MIN_GROWTH = 1.01;

/** Every problem with the settings at once; empty when valid. */
export function validateSearchSettings(s: SearchSettings): string[] {
  const problems: string[] = [];
  const positive = (name: string, v: number, least?: string) => {
    if (!(Number.isFinite(v) && v > 0)) problems.push(`${name} must be a number > 0 (got ${String(v)})`);
    else if (least && v < MIN_FACTOR)
      problems.push(`${name} must be at least ${MIN_FACTOR}, ${least} (got ${String(v)})`);
  };
  positive('startFactor', s.startFactor, "one request in a thousand of the window's");
  positive('resolution', s.resolution, 'a thousandth of the traffic: no step tells finer apart');
  positive('maxFactor', s.maxFactor);
  if (!(Number.isFinite(s.growth) && s.growth > 1))
    problems.push(`growth must be a number > 1 (got ${String(s.growth)})`);
  else if (s.growth < MIN_GROWTH)
    problems.push(`growth must be at least ${MIN_GROWTH}, each step 1 % above the last (got ${String(s.growth)})`);
  if (s.maxFactor < s.startFactor) problems.push(`maxFactor (${s.maxFactor}) is below startFactor (${s.startFactor})`);
  return problems;
}

/** `x` rounded to a multiple of `step`, without binary noise (0.30000000000000004). */
export function roundTo(x: number, step: number): number {
  return Number((Math.round(x / step) * step).toPrecision(12));
}

/** A factor on FACTOR_GRID. */
const onGrid = (f: number): number => roundTo(f, FACTOR_GRID);

type Tried = Pick<CapacityStep, 'factor' | 'outcome'>;

/** Where a target's search is: the factor to run next, or why it is over. */
export type SearchState = { next: number } | { over: 'done' | 'client' | 'broken' | 'step_limit' };

export function searchState(steps: readonly Tried[], s: SearchSettings): SearchState {
  if (steps.length === 0) return { next: onGrid(s.startFactor) };
  if (steps.some((st) => st.outcome === 'client')) return { over: 'client' };
  if (steps.some((st) => st.outcome === 'broken')) return { over: 'broken' };
  const next = unboundedNext(steps, s);
  if (next === null) return { over: 'done' };
  return steps.length >= MAX_STEPS ? { over: 'step_limit' } : { next };
}

/** The factor to run next given the steps so far (in any order), or null when the search is over. */
export function nextFactor(steps: readonly Tried[], s: SearchSettings): number | null {
  const state = searchState(steps, s);
  return 'next' in state ? state.next : null;
}

/** The next factor without the step limit: geometric, then down from a failing start, then bisection. */
function unboundedNext(steps: readonly Tried[], s: SearchSettings): number | null {
  const { met, failed } = bracket(steps);
  const tried = new Set(steps.map((st) => st.factor));
  const fresh = (f: number): number | null => (tried.has(f) ? null : f);
  if (failed === null) {
    // Growing, from the largest factor met or that held no request (a sample of too few).
    const top = Math.max(
      ...steps.filter((st) => st.outcome === 'met' || st.outcome === 'empty').map((st) => st.factor),
    );
    return top >= s.maxFactor ? null : fresh(onGrid(Math.min(s.maxFactor, top * s.growth)));
  }
  if (met === null) {
    // A factor that held no request: a smaller one holds none either (a sample of fewer).
    if (steps.some((st) => st.outcome === 'empty' && st.factor < failed)) return null;
    const lower = onGrid(failed / s.growth);
    return lower < s.resolution ? null : fresh(lower);
  }
  if (failed - met <= s.resolution * (1 + 1e-9)) return null;
  const mid = onGrid(roundTo((met + failed) / 2, s.resolution));
  return mid > met && mid < failed ? fresh(mid) : null;
}

/** The largest factor that met the objectives and the smallest that failed them (null: none). */
function bracket(steps: readonly Tried[]): { met: number | null; failed: number | null } {
  let met: number | null = null;
  let failed: number | null = null;
  for (const st of steps) {
    if (st.outcome === 'met') met = met === null ? st.factor : Math.max(met, st.factor);
    else if (st.outcome === 'objectives' || st.outcome === 'errors')
      failed = failed === null ? st.factor : Math.min(failed, st.factor);
  }
  return { met, failed };
}

const x = (f: number) => `${roundTo(f, FACTOR_GRID)}x`;

/** What a client-limited search tells of the target: the largest factor met, or plainly that none was. */
function clientNote(client: CapacityStep, met: number | null, failing: CapacityStep | undefined): string {
  if (met !== null) {
    const failedToo = failing ? ` and failed the objectives at ${x(failing.factor)}` : '';
    return (
      `The target sustained at least ${x(met)}${failedToo}; the replayer could not send ${x(client.factor)} on ` +
      `time (${client.reason}), so this machine cannot tell more.`
    );
  }
  if (failing)
    return (
      `No factor sustained: ${x(failing.factor)} already failed (${failing.reason}), and at ` +
      `${x(client.factor)} the replayer could not send on time (${client.reason}).`
    );
  return (
    `No factor sustained: at ${x(client.factor)}, the first step, the replayer already could not send on time ` +
    `(${client.reason}), so this machine cannot tell whether the target sustains it.`
  );
}

/** What the steps measured before the search ended early, in a clause. */
function measuredNote(met: number | null, failing: CapacityStep | undefined): string {
  if (met !== null)
    return `the target met the objectives at ${x(met)}${failing ? ` and failed them at ${x(failing.factor)} (${failing.reason})` : ''}`;
  if (failing) return `no factor tried met the objectives (at ${x(failing.factor)} ${failing.reason})`;
  return 'nothing was measured';
}

/** A factor below the failing one that held no request: said, with what to do. */
function emptyNote(steps: readonly CapacityStep[]): string {
  const empty = steps.filter((st) => st.outcome === 'empty').sort((a, b) => b.factor - a.factor)[0];
  return empty
    ? ` ${x(empty.factor)} held no request (the window's requests sampled at ${x(empty.factor)} kept none), so ` +
        `no smaller factor can be measured: a longer --window holds more.`
    : '';
}

/** Why a search ended before its end (the caller knows): a signal, or a step that could not be run. */
export type SearchCut = { by: 'stopped'; signal: string } | { by: 'step_failed'; cause: string };

function cutNote(cut: SearchCut, next: number, steps: readonly CapacityStep[], measured: string): string {
  const pending = steps.length > 0 ? `the step at ${x(next)} was not measured` : "this target's first step was not run";
  if (cut.by === 'stopped')
    return (
      `The search was stopped by ${cut.signal} before it ended (${pending}): ${measured}. What was measured is ` +
      `kept; run the search again to finish it.`
    );
  return `The search ended early: a step could not be run (${cut.cause}); ${pending}: ${measured}. What was measured is kept.`;
}

/** The broken step's note: no request succeeded, with the errors seen. */
function brokenNote(broken: CapacityStep, met: number | null): string {
  const seen = broken.errors.map((e) => `${e.error} ${e.count}${e.message ? ` ("${e.message}")` : ''}`).join(', ');
  const before =
    met !== null ? `It met the objectives at ${x(met)}, then at ${x(broken.factor)}` : `At ${x(broken.factor)}`;
  return (
    `${before} no request succeeded: ${broken.failed} of ${broken.requests} failed${seen ? ` (${seen})` : ''}. ` +
    `A target that fails every request is broken or down, not at its capacity: check that it is up, its URL and --path.`
  );
}

/**
 * The target's result from its steps: once its search is over, or (with `cut`) when the
 * search ended before it was: stopped by a signal, or a step that could not be run. Without
 * `cut`, steps whose search could go on are concluded by what they bracket.
 */
export function conclude(
  name: string,
  steps: readonly CapacityStep[],
  s: SearchSettings,
  cut?: SearchCut,
): TargetCapacity {
  const state = searchState(steps, s);
  const { met, failed } = bracket(steps);
  const failing = steps.find((st) => st.factor === failed && (st.outcome === 'objectives' || st.outcome === 'errors'));
  const result = (limitedBy: LimitedBy, limitFactor: number | null, note: string): TargetCapacity => ({
    name,
    sustained_factor: met,
    limited_by: limitedBy,
    limit_factor: limitFactor,
    note,
    steps: [...steps].sort((a, b) => a.factor - b.factor),
  });
  if ('next' in state && cut)
    return result(
      cut.by,
      steps.length > 0 ? state.next : null,
      cutNote(cut, state.next, steps, measuredNote(met, failing)),
    );
  const over = 'over' in state ? state.over : 'done';
  if (over === 'client') {
    const client = steps.find((st) => st.outcome === 'client') as CapacityStep;
    return result(
      'client',
      client.factor,
      `${clientNote(client, met, failing)} To go further: more fire threads (--workers), a bigger machine, ` +
        `or the AWS pipeline (amplify in a schedule).`,
    );
  }
  if (over === 'broken') {
    const broken = steps.find((st) => st.outcome === 'broken') as CapacityStep;
    return result('broken', broken.factor, brokenNote(broken, met));
  }
  if (over === 'step_limit') {
    return result(
      'step_limit',
      failed,
      `The search reached its limit of ${MAX_STEPS} steps before it ended: ${measuredNote(met, failing)}. To ` +
        `need fewer steps: a larger --growth, a coarser --resolution, or a --start-factor nearer the answer.`,
    );
  }
  if (failed === null) {
    if (met === null)
      return result(
        'empty',
        null,
        `No step held a request: at every factor tried, up to ${x(s.maxFactor)}, the sample of the window's ` +
          `requests was empty. A longer --window holds more; a larger --max-factor goes further.`,
      );
    return result(
      'cap',
      met,
      `Met the objectives at the cap, ${x(s.maxFactor)}: ${s.capHint ?? 'raise --max-factor to look further'}.`,
    );
  }
  const limitedBy = failing?.outcome === 'errors' ? 'errors' : 'objectives';
  const reason = failing?.reason ?? '';
  const note =
    met === null
      ? `No factor tried met the objectives: at ${x(failed)} ${reason}.${emptyNote(steps)}`
      : `Met the objectives at ${x(met)}; at ${x(failed)} ${reason}.`;
  return result(limitedBy, failed, note);
}

/** Runs one step at `factor` for `targets` (one, or several together); one result per target. */
export type StepRunner = (factor: number, targets: readonly string[]) => Promise<Map<string, CapacityStep>>;

/**
 * Searches `targets` (together: sharing every step they want at the same factor; else the
 * caller passes one target at a time). `pause` runs between steps (the cool-down).
 */
export async function searchCapacity(
  targets: readonly string[],
  s: SearchSettings,
  runStep: StepRunner,
  pause: () => Promise<void>,
): Promise<TargetCapacity[]> {
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
