/**
 * Scheduled A/B comparisons (issue 9), the configuration: what `captureReplay.schedules` accepts,
 * its messages for what it refuses, and the plan function's environment at the schedules' budget.
 * The deployed shape of the schedules: schedules.test.ts.
 */
import { Aspects } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { CaptureReplayStack } from '../../lib/capture-replay-stack';
import { DeploymentConfigError, parseDeploymentConfig } from '../../lib/config';
import { functionEnvironment, type CfnTemplate } from '../support/iam/template-policies';
import { templateApp } from '../support/cdk-app';

const ACCOUNT = '123456789012';

/** The issue's example, as a user writes it: it must synthesize as written. */
const ISSUE_CONFIG =
  `{"captureBucket": "my-capture-bucket", "capturePrefix": "datacapture/", "targets": [{"name": "A", "url": ` +
  `"https://a.example.com"}, {"name": "B", "url": "https://b.example.com"}], "schedules": [{"name": "nightly", ` +
  `"expression": "cron(0 2 * * ? *)", "timezone": "UTC", "window": {"lastHours": 1}, "targets": ["A", "B"]}]}`;
const base = JSON.parse(ISSUE_CONFIG) as Record<string, unknown> & { schedules: Record<string, unknown>[] };

function synth(raw: unknown, id: string): { stack: CaptureReplayStack; t: CfnTemplate } {
  const app = templateApp({ featureFlags: true });
  const stack = new CaptureReplayStack(app, id, { config: parseDeploymentConfig(raw) });
  Aspects.of(app).add(new AwsSolutionsChecks());
  return { stack, t: Template.fromStack(stack).toJSON() as CfnTemplate };
}

describe('schedule configuration', () => {
  const problems = (raw: unknown): string[] => {
    try {
      parseDeploymentConfig(raw);
    } catch (error) {
      expect(error).toBeInstanceOf(DeploymentConfigError);
      return (error as Error).message.split('\n').slice(1);
    }
    throw new Error('expected the configuration to be refused');
  };
  const schedule = base.schedules[0]!;
  const withSchedules = (...schedules: unknown[]) => ({ ...base, schedules });

  it('names a schedule target that is not configured, with the one probably meant', () => {
    expect(problems(withSchedules({ ...schedule, targets: ['A', 'b'] }))).toEqual([
      '- captureReplay.schedules.0.targets.1: "b" is not a configured target ("A", "B"); did you mean `B`?',
    ]);
    expect(problems(withSchedules({ ...schedule, targets: ['A', 'candidate'] }))).toEqual([
      '- captureReplay.schedules.0.targets.1: "candidate" is not a configured target ("A", "B")',
    ]);
    expect(problems(withSchedules({ ...schedule, targets: ['A', 'A'] }))).toEqual([
      '- captureReplay.schedules.0.targets.1: target "A" is named twice: a comparison needs two different targets',
    ]);
    expect(problems(withSchedules({ ...schedule, targets: ['A'] }))).toEqual([
      '- captureReplay.schedules.0.targets: a scheduled comparison needs two targets or more, the first the baseline',
    ]);
  });

  it('refuses two schedules of one name', () => {
    expect(problems(withSchedules(schedule, { ...schedule, expression: 'rate(6 hours)' }))).toEqual([
      '- captureReplay.schedules.1.name: schedule name "nightly" is used twice',
    ]);
  });

  it("refuses a timezone that is not IANA's, and one written in the wrong case", () => {
    expect(problems(withSchedules({ ...schedule, timezone: 'Europe/Pari' }))).toEqual([
      '- captureReplay.schedules.0.timezone: "Europe/Pari" is not an IANA timezone (e.g. UTC, Europe/Paris, America/New_York)',
    ]);
    // A UTC offset, which Node 22's Intl takes as a time zone and EventBridge Scheduler does not.
    for (const offset of ['+02:00', '-0530', '+02']) {
      expect(problems(withSchedules({ ...schedule, timezone: offset })), offset).toEqual([
        `- captureReplay.schedules.0.timezone: "${offset}" is not an IANA timezone (e.g. UTC, Europe/Paris, America/New_York)`,
      ]);
    }
    expect(() => parseDeploymentConfig(withSchedules({ ...schedule, timezone: 'Etc/GMT+2' }))).not.toThrow();
    expect(problems(withSchedules({ ...schedule, timezone: 'america/new_york' }))).toEqual([
      '- captureReplay.schedules.0.timezone: "america/new_york" is written "America/New_York"',
    ]);
    expect(() => parseDeploymentConfig(withSchedules({ ...schedule, timezone: 'Asia/Kolkata' }))).not.toThrow();
  });

  it('refuses an expression EventBridge Scheduler would not take or never run, naming the field and the rule', () => {
    const refused: [string, string][] = [
      [
        'cron(0 2 * * *)',
        'cron(0 2 * * *): a cron takes six fields (minutes hours day-of-month month day-of-week year), got 5',
      ],
      [
        'at(2025-06-01T02:00:00)',
        '"at(2025-06-01T02:00:00)" is not cron(minutes hours day-of-month month day-of-week year) or ' +
          'rate(<n> minute(s)|hour(s)|day(s)), as EventBridge Scheduler takes them',
      ],
      ['rate(1 week)', 'rate(1 week): rate(<n> <unit>) with a whole number n and minute(s), hour(s) or day(s)'],
      [
        '0 2 * * ? *',
        '"0 2 * * ? *" is not cron(minutes hours day-of-month month day-of-week year) or rate(<n> ' +
          'minute(s)|hour(s)|day(s)), as EventBridge Scheduler takes them',
      ],
      // Issue 22 item 8: these synthesized as written.
      ['rate(0 minutes)', 'rate(0 minutes): the value must be 1 or more'],
      ['rate(1 minutes)', 'rate(1 minutes): write rate(1 minute) (the unit is singular for 1)'],
      ['rate(5 minute)', 'rate(5 minute): write rate(5 minutes) (the unit is plural above 1)'],
      [
        'cron(0 2 * * * *)',
        'cron(0 2 * * * *): exactly one of day-of-month and day-of-week must be ? (e.g. cron(0 2 * * ? *) ' +
          'every day at 02:00, cron(0 2 ? * MON-FRI *) on weekdays)',
      ],
    ];
    for (const [expression, message] of refused) {
      expect(problems(withSchedules({ ...schedule, expression })), expression).toEqual([
        `- captureReplay.schedules.0.expression: ${message}`,
      ]);
    }
    expect(problems(withSchedules({ ...schedule, expression: 'cron(99 99 99 99 ? 99999)' }))).toHaveLength(5);
  });

  it('refuses a timeScale the plan would refuse at every run (issue 22 item 7), in a schedule and in the deployment', () => {
    // The plan's own rule (plan.ts validatePlanOptions), said under the setting's key.
    const message = 'must be a number >= 0.001, 1000 times slower than captured (got 1e-9)';
    expect(problems(withSchedules({ ...schedule, timeScale: 1e-9 }))).toEqual([
      `- captureReplay.schedules.0.timeScale: ${message}`,
    ]);
    expect(problems({ ...base, timeScale: 1e-9 })).toEqual([`- captureReplay.timeScale: ${message}`]);
    expect(() => parseDeploymentConfig(withSchedules({ ...schedule, timeScale: 0.001, limit: 1e15 }))).not.toThrow();
  });

  it('refuses the schedule names . and .. (they would be folders of the results bucket\'s keys), and timezone "" in one line', () => {
    for (const name of ['.', '..']) {
      expect(problems(withSchedules({ ...schedule, name }))).toEqual([
        '- captureReplay.schedules.0.name: a schedule name of dots only would be a . or .. folder in the ' +
          'results bucket (schedules/<name>/): use letters or digits too',
      ]);
    }
    expect(problems(withSchedules({ ...schedule, timezone: '' }))).toEqual([
      '- captureReplay.schedules.0.timezone: an IANA timezone, e.g. UTC, Europe/Paris, America/New_York (or leave timezone out: UTC)',
    ]);
  });

  it('names misspelled keys in a schedule, its window and notify, and says what a window is', () => {
    expect(
      problems({
        ...withSchedules({ ...schedule, timezon: 'UTC', window: { lastHour: 1 } }),
        notify: { email: ['a@example.com'] },
      }),
    ).toEqual([
      '- captureReplay.schedules.0.window.lastHour: unknown setting; did you mean `lastHours`?',
      '- captureReplay.schedules.0.window: either { "lastHours": 1-168 } or { "daysAgo": 0-31, "from": "HH:MM", "to": "HH:MM" }',
      '- captureReplay.schedules.0.timezon: unknown setting; did you mean `timezone`?',
      '- captureReplay.notify.email: unknown setting; did you mean `emails`?',
    ]);
    expect(problems(withSchedules({ ...schedule, window: { daysAgo: 1, from: '25:00', to: '15:00' } }))).toEqual([
      '- captureReplay.schedules.0.window.from: HH:MM, 24-hour',
    ]);
  });

  it("refuses more schedules than the plan function's 4 KB environment holds, before a deploy fails on it", () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ ...schedule, name: `nightly-${i}` }));
    const found = problems(withSchedules(...many));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      new RegExp(
        /^- captureReplay\.schedules: the schedules and targets take \d+ bytes of the plan function's /.source +
          /environment, at most 3000 fit in Lambda's 4 KB: fewer or shorter schedules$/.source,
      ),
    );
    expect(() => parseDeploymentConfig(withSchedules(...many.slice(0, 10)))).not.toThrow();
  });

  it(
    "a configuration just inside the budget deploys: the plan function's whole environment stays under " +
      "Lambda's 4 KB with every value at its longest",
    () => {
      // Schedules grown until the next one would cross the budget, with the settings that add
      // variables (notify, a model override) on, and the longest names the values can take.
      const extras = {
        notify: { emails: ['ml-team@example.com'] },
        modelOverride: 'meta-llama/Llama-3.1-70B-Instruct',
        maxInFlightPerShard: 1000,
      };
      const fill: Record<string, unknown>[] = [];
      for (let i = 0; ; i++) {
        const next = [
          ...fill,
          {
            ...schedule,
            name: `nightly-schedule-${String(i).padStart(2, '0')}`,
            timezone: 'America/Argentina/ComodRivadavia',
            endpoints: ['my-endpoint'],
          },
        ];
        try {
          parseDeploymentConfig({ ...base, ...extras, schedules: next });
        } catch {
          break;
        }
        fill.push(next[next.length - 1]!);
      }
      expect(fill.length).toBeGreaterThan(3);
      const config = { ...base, ...extras, schedules: fill };
      const { t } = synth(config, 'EnvBudget');
      // At deploy: a bucket name of 63 characters, queue URLs and a topic ARN with 80-character
      // generated names in the longest region name (the resolver's placeholders are shorter).
      const long = (prefix: string) => prefix + 'x'.repeat(80);
      const resources = Object.fromEntries(
        Object.entries(t.Resources).map(([id, r]) => {
          const ref =
            r.Type === 'AWS::S3::Bucket'
              ? 'b'.repeat(63)
              : r.Type === 'AWS::SQS::Queue'
                ? long('https://sqs.ap-southeast-4.amazonaws.com/123456789012/')
                : long('arn:aws:sns:ap-southeast-4:123456789012:');
          return [id, { Ref: ref, Arn: ref }];
        }),
      );
      const env = functionEnvironment(t, 'StatelessPlan', {
        partition: 'aws',
        region: 'ap-southeast-4',
        accountId: ACCOUNT,
        resources,
      });
      expect(env.NOTIFY_TOPIC_ARN).toBeDefined();
      const bytes = Object.entries(env).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
      // 4 KB; some tools count it as 4,000 bytes: this stays under the smaller.
      console.info(`[env] plan function environment at the budget: ${bytes} bytes, ${fill.length} schedules`);
      expect(bytes).toBeLessThanOrEqual(4000);
    },
  );

  it('refuses notify without schedules, a topic ARN that is not one, and emails beside an existing topic', () => {
    const { schedules: _, ...unscheduled } = base;
    expect(problems({ ...unscheduled, notify: { emails: ['a@example.com'] } })).toEqual([
      '- captureReplay.notify: notify is for scheduled runs: declare schedules, or remove notify',
    ]);
    expect(problems({ ...base, notify: { topicArn: 'arn:aws:sns:us-east-1:123456789012:alerts.fifo' } })).toEqual([
      '- captureReplay.notify.topicArn: an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>), not a FIFO topic',
    ]);
    expect(
      problems({
        ...base,
        notify: { topicArn: 'arn:aws:sns:us-east-1:123456789012:alerts', emails: ['a@example.com'] },
      }),
    ).toEqual([
      '- captureReplay.notify.emails: emails are subscribed to the topic the stack creates; with topicArn, ' +
        'subscribe them to that topic yourself',
    ]);
    expect(problems({ ...base, notify: { emails: ['not an address'] } })).toEqual([
      '- captureReplay.notify.emails.0: an email address',
    ]);
  });
});
