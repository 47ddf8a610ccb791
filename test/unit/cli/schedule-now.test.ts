/**
 * `capture-replay schedule-now`'s usage errors (lambdas/local/schedule-now.ts): each one line
 * in the project's words and a hint, exit 2, before any AWS call.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { scheduleNowCommand, scheduleNowMessage, type ScheduleNowOptions } from '../../../lambdas/local/schedule-now';

async function scheduleNow(options: ScheduleNowOptions) {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (c: Buffer) => (stdout += c.toString()));
  err.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await scheduleNowCommand(options, out, err);
  return { code, stdout, stderr };
}

const HINT = "Run 'capture-replay schedule-now --help' for the options.\n";

describe('schedule-now --at', () => {
  const now = Date.UTC(2026, 10, 23, 2, 0, 7);

  it.each(['2026-02-30T02:00:00Z', '2026-02-29T02:00:00Z', '2026-04-31T02:00:00+02:00', '2026-11-23T24:00:00Z', '2026-13-01T00:00:00Z'])('refuses %s, a time on no calendar date', (at) => {
    expect(scheduleNowMessage('nightly', at, now)).toBe(`--at is not an ISO 8601 time on a calendar date, e.g. 2026-11-23T02:00:00Z (got "${at}")`);
  });

  it('takes a leap day, offsets and fractions', () => {
    expect(scheduleNowMessage('nightly', '2028-02-29T02:00:00Z', now)).toMatchObject({ scheduledTime: '2028-02-29T02:00:00Z' });
    expect(scheduleNowMessage('nightly', '2026-03-01T01:30:00.250+01:00', now)).toMatchObject({ scheduledTime: '2026-03-01T00:30:00Z' });
  });

  it('a refused --at is a usage error: one line and the hint, exit 2', async () => {
    const run = await scheduleNow({ schedule: 'nightly', at: '2026-02-30T02:00:00Z', print: true });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`capture-replay schedule-now: --at is not an ISO 8601 time on a calendar date, e.g. 2026-11-23T02:00:00Z (got "2026-02-30T02:00:00Z")\n${HINT}`);
    expect(run.stdout).toBe('');
  });
});

describe('schedule-now --queue-url', () => {
  it('missing: the project\'s usage error, not commander\'s style', async () => {
    const run = await scheduleNow({ schedule: 'nightly' });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`capture-replay schedule-now: --queue-url is required (the stack output PlanQueueUrl), or --print to only print the message\n${HINT}`);
  });

  it('not a URL: one line, exit 2, no stack trace and no call to the default endpoint', async () => {
    const run = await scheduleNow({ schedule: 'nightly', queueUrl: 'notaurl' });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `capture-replay schedule-now: --queue-url must be the plan queue's URL (the stack output PlanQueueUrl, https://sqs.<region>.amazonaws.com/<account>/<name>), got "notaurl"\n${HINT}`,
    );
  });
});
