/**
 * Schedule expressions as EventBridge Scheduler takes them (schedule-expression.ts): the
 * issue's expressions that synthesized and could never run, each refused in a line naming the
 * field and the rule; the documented examples taken.
 */
import { describe, expect, it } from 'vitest';
import { scheduleConfigSchema, planMessageSchema } from '../../../lambdas/core/scheduled-runs/contract';
import { scheduleExpressionProblems } from '../../../lambdas/core/scheduled-runs/schedule-expression';

describe('scheduleExpressionProblems', () => {
  it.each([
    'cron(0 2 * * ? *)',
    'cron(30 6 ? * MON-FRI *)',
    'cron(0/15 * * * ? *)',
    'cron(0 8 1 * ? *)',
    'cron(0 18 ? * MON-FRI *)',
    'cron(0 10 * * ? *)',
    'cron(15 12 * * ? *)',
    'cron(0 9 ? * 2#1 *)',
    'cron(0 0 L * ? *)',
    'cron(0 0 3W * ? *)',
    'cron(0 0 ? * 6L 2026-2030)',
    'cron(5,35 14 * JAN,FEB ? *)',
    'rate(1 minute)',
    'rate(5 minutes)',
    'rate(1 hour)',
    'rate(12 hours)',
    'rate(1 day)',
    'rate(7 days)',
  ])('takes %s', (expression) => {
    expect(scheduleExpressionProblems(expression)).toEqual([]);
  });

  it.each([
    [
      'cron(a b c d e f)',
      [
        'cron(a b c d e f): minutes a: minutes takes 0-59',
        'cron(a b c d e f): hours b: hours takes 0-23',
        'cron(a b c d e f): day-of-month c: day-of-month takes 1-31',
        'cron(a b c d e f): month d: month takes 1-12 or JAN-DEC',
        'cron(a b c d e f): day-of-week e: day-of-week takes 1-7 or SUN-SAT',
        'cron(a b c d e f): year f: year takes 1970-2199',
        'cron(a b c d e f): exactly one of day-of-month and day-of-week must be ? (e.g. cron(0 2 * * ? *) ' +
          'every day at 02:00, cron(0 2 ? * MON-FRI *) on weekdays)',
      ],
    ],
    ['rate(0 minutes)', ['rate(0 minutes): the value must be 1 or more']],
    [
      'cron(0 2 * * * *)',
      [
        'cron(0 2 * * * *): exactly one of day-of-month and day-of-week must be ? (e.g. cron(0 2 * * ? *) ' +
          'every day at 02:00, cron(0 2 ? * MON-FRI *) on weekdays)',
      ],
    ],
    [
      'cron(99 99 99 99 ? 99999)',
      [
        'cron(99 99 99 99 ? 99999): minutes 99: minutes takes 0-59',
        'cron(99 99 99 99 ? 99999): hours 99: hours takes 0-23',
        'cron(99 99 99 99 ? 99999): day-of-month 99: day-of-month takes 1-31',
        'cron(99 99 99 99 ? 99999): month 99: month takes 1-12 or JAN-DEC',
        'cron(99 99 99 99 ? 99999): year 99999: year takes 1970-2199',
      ],
    ],
    ['rate(1 minutes)', ['rate(1 minutes): write rate(1 minute) (the unit is singular for 1)']],
    ['rate(5 minute)', ['rate(5 minute): write rate(5 minutes) (the unit is plural above 1)']],
    [
      'cron(0 2 * *)',
      ['cron(0 2 * *): a cron takes six fields (minutes hours day-of-month month day-of-week year), got 4'],
    ],
    [
      'cron(0 2 ? * ? *)',
      [
        'cron(0 2 ? * ? *): exactly one of day-of-month and day-of-week must be ? (e.g. cron(0 2 * * ? *) ' +
          'every day at 02:00, cron(0 2 ? * MON-FRI *) on weekdays)',
      ],
    ],
    ['cron(? 2 * * ? *)', ['cron(? 2 * * ? *): ? is taken only in day-of-month and day-of-week, not minutes']],
    ['cron(0/0 2 * * ? *)', ['cron(0/0 2 * * ? *): minutes 0/0: the increment after / must be 1-60']],
    ['cron(0 9 ? * 2#6 *)', ['cron(0 9 ? * 2#6 *): day-of-week 2#6: <day>#<1-5>, e.g. 3#2 for the second Tuesday']],
    ['rate(1 week)', ['rate(1 week): rate(<n> <unit>) with a whole number n and minute(s), hour(s) or day(s)']],
    [
      'at(2025-06-01T02:00:00)',
      [
        '"at(2025-06-01T02:00:00)" is not cron(minutes hours day-of-month month day-of-week year) or ' +
          'rate(<n> minute(s)|hour(s)|day(s)), as EventBridge Scheduler takes them',
      ],
    ],
  ])('refuses %s', (expression, problems) => {
    expect(scheduleExpressionProblems(expression)).toEqual(problems);
  });
});

describe('a schedule in the configuration', () => {
  const schedule = {
    name: 'nightly',
    expression: 'cron(0 2 * * ? *)',
    timezone: 'UTC',
    window: { lastHours: 1 },
    targets: ['A', 'B'],
  };
  const messages = (value: unknown) => {
    const r = scheduleConfigSchema.safeParse(value);
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('refuses the names . and .. (S3 key segments schedules/<name>/), in the config and in a plan message', () => {
    for (const name of ['.', '..', '...']) {
      expect(messages({ ...schedule, name })).toEqual([
        'name: a schedule name of dots only would be a . or .. folder in the results bucket (schedules/<name>/): use letters or digits too',
      ]);
      expect(
        planMessageSchema.safeParse({ v: 1, kind: 'window', schedule: name, scheduledTime: '2026-04-29T02:00:00Z' })
          .success,
      ).toBe(false);
    }
    expect(messages({ ...schedule, name: 'v1.2' })).toEqual([]);
  });

  it('refuses timezone "" in one line', () => {
    expect(messages({ ...schedule, timezone: '' })).toEqual([
      'timezone: an IANA timezone, e.g. UTC, Europe/Paris, America/New_York (or leave timezone out: UTC)',
    ]);
  });

  it('says every problem of an expression at the expression', () => {
    expect(messages({ ...schedule, expression: 'rate(5 minute)' })).toEqual([
      'expression: rate(5 minute): write rate(5 minutes) (the unit is plural above 1)',
    ]);
  });
});
