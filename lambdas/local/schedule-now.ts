/**
 * `capture-replay schedule-now <schedule>`: runs a deployed schedule for a given time without
 * waiting for its cron, by sending the plan queue the message EventBridge Scheduler would
 * send (contract.ts). The plan function then plans that time's window exactly as it would at
 * the scheduled time; the same (schedule, time) twice plans one run (its id is printed).
 *
 * The queue is the stack's `PlanQueueUrl` output. Credentials and region come from the AWS
 * SDK's default chain (`AWS_PROFILE`, `AWS_REGION`...); `AWS_ENDPOINT_URL_SQS` points it
 * elsewhere (an emulator).
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { exitCodeOf } from '../core/errors';
import { planMessageSchema, SCHEDULE_NAME, windowRunId, type PlanMessage } from '../core/scheduled-runs/contract';
import { usageMessage, USAGE_EXIT } from './cli-usage';
import { terminalLine } from './terminal-text';
import { parseTimeFlag } from './time-flag';
import { regionConfig } from './aws-region';

export interface ScheduleNowOptions {
  schedule: string;
  queueUrl?: string;
  /** The scheduled time to act as (ISO 8601 with a zone, or before now: -1h); default: now. */
  at?: string;
  region?: string;
  /** Print the message and the command that would send it; send nothing. */
  print?: boolean;
}

/**
 * Why `--at` takes no time after now: the plan function replays the window as it is captured
 * when the message arrives, and the run's id is the schedule's and the time's, so a later time
 * would plan a window not captured yet and take the place of that time's own run.
 */
const NOT_AFTER_NOW =
  "a scheduled run replays a window already captured, and that time's own run would be taken as done";

/**
 * The message, or why it cannot be made (a usage error). `--at` takes the forms of replay's
 * --from (time-flag.ts): ISO 8601 with a zone, on a calendar date (2026-02-30 is refused, where
 * `Date.parse` takes it as March 2), or a time before now (`-1h`, `now`).
 */
export function scheduleNowMessage(schedule: string, at: string | undefined, nowMs: number): PlanMessage | string {
  if (!SCHEDULE_NAME.test(schedule)) return `schedule names are 1-64 letters, digits, . _ - (got "${schedule}")`;
  let time = nowMs;
  if (at !== undefined) {
    const parsed = parseTimeFlag('--at', at, nowMs, { ms: nowMs, why: NOT_AFTER_NOW });
    if (typeof parsed === 'string') return parsed;
    time = parsed;
  }
  // Whole seconds, as the scheduler's own <aws.scheduler.scheduled-time> is.
  const scheduledTime = new Date(Math.floor(time / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  return planMessageSchema.parse({ v: 1, kind: 'window', schedule, scheduledTime });
}

/**
 * The plan queue's URL, or why it is not one. An SQS queue URL is
 * https://sqs.<region>.amazonaws.com/<account>/<name>; an emulator's may be http.
 */
function queueUrlProblem(raw: string): string | null {
  const url = URL.canParse(raw) ? new URL(raw) : null;
  if (url && (url.protocol === 'https:' || url.protocol === 'http:')) return null;
  return (
    `--queue-url must be the plan queue's URL (the stack output PlanQueueUrl, ` +
    `https://sqs.<region>.amazonaws.com/<account>/<name>), got "${raw}"`
  );
}

/**
 * The region an AWS queue URL names (sqs.<region>.amazonaws.com: the SQS endpoints,
 * https://docs.aws.amazon.com/general/latest/gr/sqs-service.html), which requests to it
 * are signed for: the URL says it when neither --region nor the SDK's chain does.
 */
function regionOfQueue(raw: string): string | undefined {
  return /^sqs\.([a-z]{2}(?:-[a-z]+)+-\d+)\.amazonaws\.com(?:\.cn)?$/.exec(new URL(raw).hostname)?.[1];
}

export async function scheduleNowCommand(
  options: ScheduleNowOptions,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const usage = (message: string): number => {
    err.write(usageMessage('schedule-now', terminalLine(message)));
    return USAGE_EXIT;
  };
  const message = scheduleNowMessage(options.schedule, options.at, Date.now());
  if (typeof message === 'string') return usage(message);
  const body = JSON.stringify(message);
  const runId = windowRunId(message.schedule, message.scheduledTime);
  if (options.print) {
    out.write(`${body}\n`);
    out.write(`# send it with: aws sqs send-message --queue-url <PlanQueueUrl> --message-body '${body}'\n`);
    out.write(`# run id: ${runId}\n`);
    return 0;
  }
  if (!options.queueUrl)
    return usage('--queue-url is required (the stack output PlanQueueUrl), or --print to only print the message');
  const badUrl = queueUrlProblem(options.queueUrl);
  if (badUrl) return usage(badUrl);
  const region = options.region ?? regionOfQueue(options.queueUrl);
  const sqs = new SQSClient(regionConfig(region));
  try {
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: options.queueUrl, MessageBody: body }));
    out.write(
      JSON.stringify({
        sent: true,
        messageId: sent.MessageId ?? null,
        schedule: message.schedule,
        scheduledTime: message.scheduledTime,
        runId,
        results: `runs/${runId}/`,
        history: `schedules/${message.schedule}/history.jsonl`,
      }) + '\n',
    );
    return 0;
  } catch (error) {
    const e = error as { name?: string; message?: string };
    err.write(
      `capture-replay schedule-now: ` +
        `${terminalLine(`could not send to ${options.queueUrl}: ${e.name ?? 'Error'}: ${e.message ?? String(error)}`)}\n`,
    );
    return exitCodeOf(error);
  } finally {
    sqs.destroy();
  }
}
