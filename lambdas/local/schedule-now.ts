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
import { planMessageSchema, SCHEDULE_NAME, windowRunId, type PlanMessage } from '../core/schedule/contract';
import { USAGE_EXIT } from './cli-usage';

export interface ScheduleNowOptions {
  schedule: string;
  queueUrl?: string;
  /** The scheduled time to act as (ISO 8601); default: now. */
  at?: string;
  region?: string;
  /** Print the message and the command that would send it; send nothing. */
  print?: boolean;
}

/** The message, or why it cannot be made (a usage error). */
export function scheduleNowMessage(schedule: string, at: string | undefined, nowMs: number): PlanMessage | string {
  if (!SCHEDULE_NAME.test(schedule)) return `schedule names are 1-64 letters, digits, . _ - (got "${schedule}")`;
  let time = nowMs;
  if (at !== undefined) {
    // A time without a zone would be read in the machine's zone: ask for one.
    if (!/(Z|[+-]\d{2}:?\d{2})$/i.test(at.trim())) return `--at needs a timezone, e.g. 2026-11-23T02:00:00Z or 2026-11-23T03:00:00+01:00 (got "${at}")`;
    time = Date.parse(at);
    if (!Number.isFinite(time)) return `--at is not an ISO 8601 time (got "${at}")`;
  }
  // Whole seconds, as the scheduler's own <aws.scheduler.scheduled-time> is.
  const scheduledTime = new Date(Math.floor(time / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  return planMessageSchema.parse({ v: 1, kind: 'window', schedule, scheduledTime });
}

export async function scheduleNowCommand(options: ScheduleNowOptions, out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  const message = scheduleNowMessage(options.schedule, options.at, Date.now());
  if (typeof message === 'string') {
    err.write(`error: ${message}\n`);
    return USAGE_EXIT;
  }
  const body = JSON.stringify(message);
  const runId = windowRunId(message.schedule, message.scheduledTime);
  if (options.print) {
    out.write(`${body}\n`);
    out.write(`# send it with: aws sqs send-message --queue-url <PlanQueueUrl> --message-body '${body}'\n`);
    out.write(`# run id: ${runId}\n`);
    return 0;
  }
  if (!options.queueUrl) {
    err.write('error: --queue-url is required (the stack output PlanQueueUrl), or --print to only print the message\n');
    return USAGE_EXIT;
  }
  const sqs = new SQSClient(options.region ? { region: options.region } : {});
  try {
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: options.queueUrl, MessageBody: body }));
    out.write(
      `${JSON.stringify({ sent: true, messageId: sent.MessageId ?? null, schedule: message.schedule, scheduledTime: message.scheduledTime, runId, results: `runs/${runId}/`, history: `schedules/${message.schedule}/history.jsonl` })}\n`,
    );
    return 0;
  } catch (error) {
    const e = error as { name?: string; message?: string };
    err.write(`error: could not send to ${options.queueUrl}: ${e.name ?? 'Error'}: ${e.message ?? String(error)}\n`);
    return 1;
  } finally {
    sqs.destroy();
  }
}
