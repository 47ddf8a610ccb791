/**
 * The plan's options as a configuration holds them (the deployment configuration, a schedule,
 * the functions' environment), checked by the plan's own rules (plan.ts validatePlanOptions)
 * and nowhere else: each problem is said under the key the option has there, so the
 * configuration names it in its own words (`captureReplay.timeScale: must be ...`,
 * `TIME_SCALE: must be ...`), and what a configuration takes is what every run's plan takes.
 */
import { z } from 'zod';
import { validatePlanOptions, type PlanField, type PlanOptions } from './plan';

/** Options the plan takes: each option is checked against these, its own value in place. */
const VALID: PlanOptions = { runId: 'check', targetKind: 'openai-chat', timeScale: 1, intraSecond: 'spread' };

/** What the plan says of `value` as its option `field` (said after the option's name), or null when it takes it. */
export function planOptionProblem(field: PlanField, value: unknown): string | null {
  const problem = validatePlanOptions({ ...VALID, [field]: value } as PlanOptions).find((p) => p.field === field);
  return problem?.message ?? null;
}

/** A zod refinement that adds the plan's problem with the value, if any. */
const planRule =
  (field: PlanField) =>
  (value: unknown, ctx: z.RefinementCtx): void => {
    const message = planOptionProblem(field, value);
    if (message) ctx.addIssue({ code: 'custom', message });
  };

/** A numeric plan option (timeScale, amplify, sampleRate, limit): a number the plan takes, said in its words if not. */
export function planNumber(field: 'timeScale' | 'amplify' | 'sampleRate' | 'limit' | 'seed') {
  return z
    .number({ error: (issue) => planOptionProblem(field, issue.input) ?? 'must be a number' })
    .superRefine(planRule(field));
}

/** The intra-second policy, as the plan takes it. */
export function planIntraSecond() {
  return z.enum(['spread', 'burst'], {
    error: (issue) => planOptionProblem('intraSecond', issue.input) ?? 'must be spread or burst',
  });
}

/** The model override, as the plan takes it (not empty, nor blank). */
export function planModelOverride() {
  return z.string({ error: 'must be a model name (a string)' }).superRefine(planRule('modelOverride'));
}
