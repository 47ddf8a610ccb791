/**
 * A problem with one option the core takes (a plan's options, plan.ts): the option's camelCase
 * name and what is wrong with it, said after that name. Each caller names the option in its
 * own words: the command line its flag (`--end-offset`), the deployment configuration its key
 * (`captureReplay.timeScale`), the core itself its field name. No caller rewrites a message.
 */

export interface OptionProblem<F extends string = string> {
  /** The option, as the core's options object names it. */
  field: F;
  /** What is wrong, said after the option's name: `must be a whole number > 0 (got 0)`. */
  message: string;
}

/** How a caller names an option: its flag, its configuration key; the core's own field name by default. */
export type OptionNamer<F extends string> = (field: F) => string;

/** `<name> <message>` for each problem, separated by `; `: one line. */
export function problemsLine<F extends string>(
  problems: readonly OptionProblem<F>[],
  name: OptionNamer<F> = (field) => field,
): string {
  return problems.map((p) => `${name(p.field)} ${p.message}`).join('; ');
}
