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

  const FORMS =
    'an ISO 8601 time with a zone (2026-04-29T10:00:00Z, 2026-04-29T12:00+02:00) or a time before now (now, -2h, -90m, -1d)';

  it.each([
    '2026-02-30T02:00:00Z',
    '2026-02-29T02:00:00Z',
    '2026-04-31T02:00:00+02:00',
    '2026-11-23T24:00:00Z',
    '2026-13-01T00:00:00Z',
  ])('refuses %s, a time on no calendar date', (at) => {
    expect(scheduleNowMessage('nightly', at, now)).toBe(`--at must be ${FORMS} (got "${at}")`);
  });

  it('takes a leap day, offsets and fractions', () => {
    expect(scheduleNowMessage('nightly', '2024-02-29T02:00:00Z', now)).toMatchObject({
      scheduledTime: '2024-02-29T02:00:00Z',
    });
    expect(scheduleNowMessage('nightly', '2026-03-01T01:30:00.250+01:00', now)).toMatchObject({
      scheduledTime: '2026-03-01T00:30:00Z',
    });
  });

  it('takes the forms --from takes: a time before now, or now (issue 32 item 12)', () => {
    expect(scheduleNowMessage('nightly', '-1h', now)).toMatchObject({ scheduledTime: '2026-11-23T01:00:07Z' });
    expect(scheduleNowMessage('nightly', '-1.5d', now)).toMatchObject({ scheduledTime: '2026-11-21T14:00:07Z' });
    expect(scheduleNowMessage('nightly', 'now', now)).toMatchObject({ scheduledTime: '2026-11-23T02:00:07Z' });
    expect(scheduleNowMessage('nightly', '2026-11-23T02:00Z', now)).toMatchObject({
      scheduledTime: '2026-11-23T02:00:00Z',
    });
    expect(scheduleNowMessage('nightly', '2026-11-23T02:00:00', now)).toBe(
      `--at must be ${FORMS} (got "2026-11-23T02:00:00": add its zone, e.g. Z for UTC)`,
    );
  });

  it("refuses a time after now, the far future as the next minute: that time's own run would be taken as done (issue 32 item 12)", () => {
    const why =
      "a scheduled run replays a window already captured, and that time's own run would be taken as done; " +
      'give now or a time before it (e.g. -1h)';
    expect(scheduleNowMessage('nightly', '9999-12-31T23:59:59Z', now)).toBe(
      `--at 9999-12-31T23:59:59Z is 7973 years after now: ${why}`,
    );
    expect(scheduleNowMessage('nightly', '2026-11-23T02:01:00Z', now)).toBe(
      `--at 2026-11-23T02:01:00Z is 53 s after now: ${why}`,
    );
  });

  it('a refused --at is a usage error: one line and the hint, exit 2', async () => {
    const run = await scheduleNow({ schedule: 'nightly', at: '2026-02-30T02:00:00Z', print: true });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`capture-replay schedule-now: --at must be ${FORMS} (got "2026-02-30T02:00:00Z")\n${HINT}`);
    expect(run.stdout).toBe('');
    const future = await scheduleNow({ schedule: 'nightly', at: '9999-12-31T23:59:59Z', print: true });
    expect(future.code).toBe(2);
    expect(future.stderr).toMatch(/^capture-replay schedule-now: --at 9999-12-31T23:59:59Z is \d+ years after now: /);
    expect(future.stdout).toBe('');
  });
});

describe('schedule-now --queue-url', () => {
  it("missing: the project's usage error, not commander's style", async () => {
    const run = await scheduleNow({ schedule: 'nightly' });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `capture-replay schedule-now: --queue-url is required (the stack output PlanQueueUrl), or --print to only print the message\n${HINT}`,
    );
  });

  it('not a URL: one line, exit 2, no stack trace and no call to the default endpoint', async () => {
    const run = await scheduleNow({ schedule: 'nightly', queueUrl: 'notaurl' });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `capture-replay schedule-now: --queue-url must be the plan queue's URL (the stack output PlanQueueUrl, ` +
        `https://sqs.<region>.amazonaws.com/<account>/<name>), got "notaurl"\n${HINT}`,
    );
  });
});
