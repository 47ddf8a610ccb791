/**
 * `capture-replay schedule-now`: the CLI sends the plan queue the message EventBridge
 * Scheduler would send, through the AWS SDK's default chain (here: moto, via
 * AWS_ENDPOINT_URL_SQS and static credentials from the environment).
 */
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planMessageSchema, windowRunId } from '../../lambdas/core/scheduled-runs/contract';
import { scheduleNowMessage } from '../../lambdas/local/schedule-now';
import { awsClientConfig, describeWithMoto, startMoto, type Moto } from '../support/moto';
import { runCli } from '../support/processes';

describe('schedule-now message', () => {
  const now = Date.parse('2026-11-23T02:00:07.250Z');

  it('acts as the scheduler would: whole seconds in UTC, the schedule named', () => {
    expect(scheduleNowMessage('nightly', undefined, now)).toEqual({
      v: 1,
      kind: 'window',
      schedule: 'nightly',
      scheduledTime: '2026-11-23T02:00:07Z',
    });
    expect(scheduleNowMessage('nightly', '2026-11-23T02:30:00+01:00', now)).toEqual({
      v: 1,
      kind: 'window',
      schedule: 'nightly',
      scheduledTime: '2026-11-23T01:30:00Z',
    });
  });

  it('refuses a time without a zone, a time that is not one, and a bad schedule name', () => {
    expect(scheduleNowMessage('nightly', '2026-11-23T02:00:00', now)).toMatch(/add its zone/);
    expect(scheduleNowMessage('nightly', 'yesterdayZ', now)).toMatch(/must be an ISO 8601 time/);
    expect(scheduleNowMessage('night ly', undefined, now)).toMatch(/schedule names/);
  });
});

describeWithMoto('schedule-now against a queue (moto)', () => {
  let moto: Moto;
  let sqs: SQSClient;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    moto = await startMoto();
    sqs = new SQSClient(awsClientConfig(moto.endpoint));
    dir = await mkdtemp(join(tmpdir(), 'schedule-now-'));
    env = {
      ...process.env,
      AWS_ENDPOINT_URL_SQS: moto.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_CONFIG_FILE: join(dir, 'none'),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
    };
  }, 60_000);

  afterAll(async () => {
    sqs?.destroy();
    await moto?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('sends one plan message and prints the run id it will make', async () => {
    const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'plan' }))).QueueUrl!;
    const run = await runCli(['schedule-now', 'nightly', '--queue-url', queueUrl, '--at', '2026-11-23T02:00:00Z'], {
      env,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.stdout) as { runId: string; results: string };
    expect(printed.runId).toBe(windowRunId('nightly', '2026-11-23T02:00:00Z'));
    expect(printed.results).toBe(`runs/${printed.runId}/`);
    const got = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    expect(got.Messages).toHaveLength(1);
    expect(planMessageSchema.parse(JSON.parse(got.Messages![0]!.Body!))).toEqual({
      v: 1,
      kind: 'window',
      schedule: 'nightly',
      scheduledTime: '2026-11-23T02:00:00Z',
    });
  });

  it('a queue that does not exist: exit 1 with the reason, nothing thrown at the user', async () => {
    const run = await runCli(['schedule-now', 'nightly', '--queue-url', `${moto.endpoint}/123456789012/missing`], {
      env,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^capture-replay schedule-now: could not send to .*missing: /);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('no queue and no --print: a usage error (exit 2)', async () => {
    const run = await runCli(['schedule-now', 'nightly'], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--queue-url is required/);
  });
});
