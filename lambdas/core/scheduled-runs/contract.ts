/**
 * Scheduled A/B runs: the shapes every part agrees on. The deployment config declares
 * schedules (lib/config.ts), the stack turns each into an EventBridge Scheduler schedule that
 * sends a plan message to the plan queue (lib/stateless.ts), the plan function plans one
 * window run (lambdas/handlers/plan.ts), and the collector writes the verdict, the
 * schedule's history and its trend page when every target of the run is final
 * (lambdas/core/scheduled-runs/history.ts).
 *
 * Keys in the results bucket:
 *   runs/<run-id>/comparison.json, runs/<run-id>/report.html   (the run's root)
 *   schedules/<name>/history.jsonl                             (one line per scheduled run)
 *   schedules/<name>/index.html                                (the trend page)
 */
import { z } from 'zod';
import { deterministicUuid } from '../ids';
import { VERDICT_METRICS } from '../metrics/cloudwatch';
import { didYouMean } from '../suggest';
import { planNumber } from '../plan/plan-option-schema';
import { scheduleExpressionProblems } from './schedule-expression';

export const SCHEDULES_ROOT = 'schedules/';
export const scheduleHistoryKey = (name: string) => `${SCHEDULES_ROOT}${name}/history.jsonl`;
export const scheduleIndexKey = (name: string) => `${SCHEDULES_ROOT}${name}/index.html`;

/** EventBridge Scheduler's schedule names: 1-64 of letters, digits, `.`, `_`, `-`. */
export const SCHEDULE_NAME = /^[0-9a-zA-Z._-]{1,64}$/;

/**
 * A schedule's name: the Scheduler's rule, and not dots alone, as the name is a segment of the
 * results bucket's keys (schedules/<name>/history.jsonl), where `.` and `..` read as the folder
 * itself or its parent to every tool that maps keys to paths (aws s3 sync, a download, trend).
 */
const scheduleNameSchema = z
  .string()
  .regex(SCHEDULE_NAME, 'schedule names are 1-64 letters, digits, . _ -')
  .refine(
    (name) => !/^\.+$/.test(name),
    'a schedule name of dots only would be a . or .. folder in the results bucket (schedules/<name>/): use letters or digits too',
  );

/** A metric a comparison can call worse (core/metrics/cloudwatch.ts VERDICT_METRICS). */
const alarmMetricSchema = z.string().refine((tag) => VERDICT_METRICS.includes(tag), {
  error: (issue) =>
    `"${String(issue.input)}" is not a metric a comparison calls worse ` +
    `(${VERDICT_METRICS.join(', ')})${didYouMean(String(issue.input), VERDICT_METRICS)}`,
});

const HH_MM = z.string().regex(/^([01]\d|2[0-3]):([0-5]\d)$/, 'HH:MM, 24-hour');

/**
 * The captured traffic a run replays, selected by inferenceTime: the last N hours before the
 * schedule fires, or a wall-clock range D days before the fire date in the schedule's timezone
 * (`{ daysAgo: 1, from: "14:00", to: "15:00" }`: yesterday 14:00-15:00).
 */
export const captureWindowSchema = z.union([
  z.strictObject({ lastHours: z.number().int().min(1).max(168) }),
  z.strictObject({ daysAgo: z.number().int().min(0).max(31), from: HH_MM, to: HH_MM }),
]);

/**
 * One schedule. `expression` is EventBridge Scheduler's `cron(...)` (six fields) or
 * `rate(...)`; `timezone` an IANA name (the cron's and the window's). `targets` names two
 * or more of the deployment's targets, the first the baseline. `sample` keeps that fraction
 * of the window's requests (chosen by capture event id, so the same requests every run);
 * `limit` keeps the first N in due order; both may be given (sample, then limit). `amplify`
 * replays the window at that factor of its traffic (plan.ts rule 4: above 1, copies of each
 * request spread through the gaps to the next; below 1, a sample), after sample and limit.
 */
export const scheduleConfigSchema = z.strictObject({
  name: scheduleNameSchema,
  expression: z.string().superRefine((expression, ctx) => {
    for (const message of scheduleExpressionProblems(expression)) ctx.addIssue({ code: 'custom', message });
  }),
  /** Checked against the IANA database where the configuration is read (lib/config.ts timezoneProblem). */
  timezone: z
    .string()
    .min(1, 'an IANA timezone, e.g. UTC, Europe/Paris, America/New_York (or leave timezone out: UTC)')
    .default('UTC'),
  window: captureWindowSchema,
  targets: z
    .array(z.string().min(1))
    .min(2, 'a scheduled comparison needs two targets or more, the first the baseline'),
  timeScale: planNumber('timeScale').default(1),
  sample: planNumber('sampleRate').optional(),
  limit: planNumber('limit').optional(),
  amplify: planNumber('amplify').optional(),
  dispatch: z.enum(['parallel', 'sequential']).default('parallel'),
  /** Data Capture endpoint folders to read under the capture prefix; default: every one found. */
  endpoints: z.array(z.string().min(1)).min(1).optional(),
  /** Variant folders to read; default: every one found. */
  variants: z.array(z.string().min(1)).min(1).optional(),
  /**
   * The compared metrics (AIPerf tags, or `error_rate`) whose `worse` verdict sets off the
   * schedule's alarm (lib/run-alarms.ts); `[]`: no alarm. Unset: DEFAULT_ALARM_ON (the stack
   * reads it; left out here, the plan function's environment keeps its size).
   */
  alarmOn: z.array(alarmMetricSchema).optional(),
});
export type ScheduleConfig = z.output<typeof scheduleConfigSchema>;

/**
 * What the scheduler (or `capture-replay schedule-now`) sends to the plan queue. The
 * schedule's target input is this JSON with `scheduledTime` set to EventBridge Scheduler's
 * `<aws.scheduler.scheduled-time>` context attribute (ISO 8601, UTC).
 */
export const planMessageSchema = z.strictObject({
  v: z.literal(1),
  kind: z.literal('window'),
  schedule: scheduleNameSchema,
  scheduledTime: z.string().refine((s) => Number.isFinite(Date.parse(s)), 'an ISO 8601 time'),
});
export type PlanMessage = z.infer<typeof planMessageSchema>;

/** A scheduled run's id: one per (schedule, scheduled time), so a second delivery finds the first's run. */
export function windowRunId(schedule: string, scheduledTime: string): string {
  return `window-${deterministicUuid('window', schedule, new Date(Date.parse(scheduledTime)).toISOString())}`;
}

/**
 * What the plan function records about a scheduled run, under `schedule` in the run record's
 * `inputConfig` (and so in every target's input_config): the collector knows a run is a
 * scheduled one by it.
 */
export const scheduledRunInfoSchema = z.object({
  name: z.string(),
  /** The scheduled time the plan message named (ISO, UTC). */
  scheduledTime: z.string(),
  timezone: z.string(),
  window: z.object({ start: z.string(), end: z.string() }),
  targets: z.array(z.string()).min(2),
  dispatch: z.enum(['parallel', 'sequential']),
});
export type ScheduledRunInfo = z.infer<typeof scheduledRunInfoSchema>;
