/**
 * Scheduled A/B comparisons (issue 9), the deployed shape: EventBridge Scheduler schedules
 * sending plan messages to the plan queue under a role that can do nothing else, the plan
 * function's read-only, prefix-limited access to the captures, the topic and who publishes
 * to it, the history's lifecycle, the outputs and cdk-nag.
 *
 * Stacks are synthesized with cdk.json's feature flags (the policies as `cdk synth` writes
 * them) and without bundling the functions' code (nothing here reads it).
 * The configuration's checks and messages: schedule-config.test.ts.
 */
import { Aspects } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { CaptureReplayStack } from '../../lib/capture-replay-stack';
import { parseDeploymentConfig } from '../../lib/config';
import { scheduleResourceName } from '../../lib/stateless';
import { evaluate, type PolicyStatement } from '../support/iam/policy-evaluator';
import {
  functionEnvironment,
  functionPolicies,
  onlyLogicalId,
  resolveIntrinsics,
  type CfnTemplate,
  type Resolver,
} from '../support/iam/template-policies';
import { templateApp } from '../support/cdk-app';

const ACCOUNT = '123456789012';
const REGION = 'us-east-1';

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

/** Every logical id resolves to a recognisable ARN (Ref is the ARN too: an SNS topic's Ref is). */
function resolverFor(t: CfnTemplate): Resolver {
  const resources = Object.fromEntries(
    Object.keys(t.Resources).map((id) => [
      id,
      { Ref: `arn:aws:test:${REGION}:${ACCOUNT}:${id}`, Arn: `arn:aws:test:${REGION}:${ACCOUNT}:${id}` },
    ]),
  );
  return { partition: 'aws', region: REGION, accountId: ACCOUNT, resources };
}

const arnOf = (t: CfnTemplate, type: string, prefix: string) =>
  `arn:aws:test:${REGION}:${ACCOUNT}:${onlyLogicalId(t, type, prefix)}`;
const resourcesOf = (t: CfnTemplate, type: string) => Object.entries(t.Resources).filter(([, r]) => r.Type === type);
const call = (action: string, resource: string, context: Record<string, string> = {}) => ({
  action,
  resource,
  context,
});
const nagFindings = (stack: CaptureReplayStack) =>
  [
    ...Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
    ...Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')),
  ].map((f) => `${f.id}: ${String(f.entry.data).slice(0, 160)}`);

/** The statements of a role that is not a function's (the scheduler's), resolved. */
function roleStatements(t: CfnTemplate, roleId: string, r: Resolver): PolicyStatement[] {
  return resourcesOf(t, 'AWS::IAM::Policy')
    .filter(([, p]) => JSON.stringify(p.Properties?.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap(([, p]) =>
      (p.Properties!.PolicyDocument as { Statement: unknown[] }).Statement.map(
        (s) => resolveIntrinsics(s, t, r) as PolicyStatement,
      ),
    );
}

describe("the issue's example configuration", () => {
  const { stack, t } = synth(JSON.parse(ISSUE_CONFIG), 'Sched');
  const r = resolverFor(t);
  const planQueue = arnOf(t, 'AWS::SQS::Queue', 'StatefulPlanQueue');
  const schedulerDlq = arnOf(t, 'AWS::SQS::Queue', 'StatefulSchedulerDlq');
  const [[, schedule]] = resourcesOf(t, 'AWS::Scheduler::Schedule') as unknown as [
    [string, { Properties: Record<string, unknown> }],
  ];

  // cdk-nag's first run over a stack takes tens of seconds on a busy machine.
  it('synthesizes as written, cdk-nag clean', () => {
    expect(resourcesOf(t, 'AWS::Scheduler::Schedule')).toHaveLength(1);
    expect(nagFindings(stack)).toEqual([]);
  }, 120_000);

  it('is one schedule: the expression and timezone as written, no flexible window, enabled, named after the stack', () => {
    expect(schedule.Properties).toMatchObject({
      Name: 'Sched-nightly',
      ScheduleExpression: 'cron(0 2 * * ? *)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
    });
  });

  it(
    'sends the plan message, with the scheduled time substituted by the Scheduler, to the plan queue; retries ' +
      'for an hour, then the scheduler DLQ',
    () => {
      const target = resolveIntrinsics(schedule.Properties.Target, t, r) as Record<string, unknown>;
      expect(target).toEqual({
        Arn: planQueue,
        RoleArn: arnOf(t, 'AWS::IAM::Role', 'StatelessSchedulerRole'),
        Input: expect.any(String) as unknown,
        RetryPolicy: { MaximumRetryAttempts: 20, MaximumEventAgeInSeconds: 3600 },
        DeadLetterConfig: { Arn: schedulerDlq },
      });
      expect(JSON.parse(target.Input as string)).toEqual({
        v: 1,
        kind: 'window',
        schedule: 'nightly',
        scheduledTime: '<aws.scheduler.scheduled-time>',
      });
    },
  );

  it(
    "runs the schedule under a role trusted by the Scheduler for this account's default group only, allowed " +
      'sqs:SendMessage on the plan queue and its DLQ, nothing else',
    () => {
      const roleId = onlyLogicalId(t, 'AWS::IAM::Role', 'StatelessSchedulerRole');
      const role = t.Resources[roleId]!.Properties!;
      expect(resolveIntrinsics(role.AssumeRolePolicyDocument, t, r)).toEqual({
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Allow',
            Principal: { Service: 'scheduler.amazonaws.com' },
            Action: 'sts:AssumeRole',
            Condition: {
              StringEquals: { 'aws:SourceAccount': ACCOUNT },
              ArnEquals: { 'aws:SourceArn': `arn:aws:scheduler:${REGION}:${ACCOUNT}:schedule-group/default` },
            },
          },
        ],
      });
      expect(role.ManagedPolicyArns).toBeUndefined();
      expect(role.Policies).toBeUndefined();
      const statements = roleStatements(t, roleId, r);
      expect(statements).toEqual([{ Effect: 'Allow', Action: 'sqs:SendMessage', Resource: [planQueue, schedulerDlq] }]);
      expect(evaluate(statements, call('sqs:SendMessage', arnOf(t, 'AWS::SQS::Queue', 'StatefulReplayQueue')))).toBe(
        'implicit-deny',
      );
    },
  );

  it('the plan queue has a DLQ (3 receives) and outlasts six plan invocations; the scheduler DLQ is encrypted, TLS-only, alarmed', () => {
    const queue = t.Resources[onlyLogicalId(t, 'AWS::SQS::Queue', 'StatefulPlanQueue')]!.Properties!;
    const plan = t.Resources[onlyLogicalId(t, 'AWS::Lambda::Function', 'StatelessPlan')]!.Properties!;
    expect(plan).toMatchObject({ Timeout: 900, MemorySize: 3008, Runtime: 'nodejs22.x', Architectures: ['arm64'] });
    expect(queue).toMatchObject({
      VisibilityTimeout: 6 * 900,
      SqsManagedSseEnabled: true,
      RedrivePolicy: { maxReceiveCount: 3 },
    });
    const dlqId = onlyLogicalId(t, 'AWS::SQS::Queue', 'StatefulSchedulerDlq');
    expect(t.Resources[dlqId]!.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 86_400,
    });
    const dlqPolicy = resourcesOf(t, 'AWS::SQS::QueuePolicy').find(
      ([, p]) => JSON.stringify(p.Properties?.Queues) === JSON.stringify([{ Ref: dlqId }]),
    );
    expect(JSON.stringify(dlqPolicy?.[1].Properties?.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
    const alarmed = resourcesOf(t, 'AWS::CloudWatch::Alarm').map(([, a]) => JSON.stringify(a.Properties?.Dimensions));
    for (const q of ['StatefulSchedulerDlq', 'StatefulPlanDlq'])
      expect(alarmed.some((d) => d.includes(onlyLogicalId(t, 'AWS::SQS::Queue', q)))).toBe(true);
  });

  it('feeds the plan function one message at a time, two at most at once, with partial batch responses', () => {
    const [[, mapping]] = resourcesOf(t, 'AWS::Lambda::EventSourceMapping').filter(([, m]) =>
      JSON.stringify(m.Properties?.EventSourceArn).includes('StatefulPlanQueue'),
    ) as unknown as [[string, { Properties: Record<string, unknown> }]];
    expect(mapping.Properties).toMatchObject({
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 2 },
      FunctionName: { Ref: onlyLogicalId(t, 'AWS::Lambda::Function', 'StatelessPlan') },
    });
  });

  it(
    'gives the plan function the shared environment, the schedules as configured, and where the captures are; ' +
      'no topic without notify',
    () => {
      const env = functionEnvironment(t, 'StatelessPlan', r);
      const collect = functionEnvironment(t, 'StatelessCollect', r);
      expect(JSON.parse(env.SCHEDULES_JSON!)).toEqual(parseDeploymentConfig(JSON.parse(ISSUE_CONFIG)).schedules);
      expect(env).toMatchObject({
        CAPTURE_BUCKET: 'my-capture-bucket',
        CAPTURE_PREFIX: 'datacapture/',
        TARGETS_JSON: collect.TARGETS_JSON,
        RESULTS_BUCKET: collect.RESULTS_BUCKET,
        REPLAY_QUEUE_URL: collect.REPLAY_QUEUE_URL,
      });
      expect(env.NOTIFY_TOPIC_ARN).toBeUndefined();
      expect(collect.NOTIFY_TOPIC_ARN).toBeUndefined();
      expect(resourcesOf(t, 'AWS::SNS::Topic')).toEqual([]);
      expect(JSON.stringify(t)).not.toContain('sns:Publish');
    },
  );

  it('the plan function reads the captures only, and only under the prefix: listings under it, objects under it', () => {
    const { statements } = functionPolicies(t, 'StatelessPlan', r);
    const bucket = 'arn:aws:s3:::my-capture-bucket';
    expect(statements.filter((s) => JSON.stringify(s.Resource).includes('my-capture-bucket'))).toEqual([
      {
        Effect: 'Allow',
        Action: 's3:ListBucket',
        Resource: bucket,
        Condition: { StringLike: { 's3:prefix': 'datacapture/*' } },
      },
      { Effect: 'Allow', Action: 's3:GetObject', Resource: `${bucket}/datacapture/*` },
    ]);
    for (const prefix of ['datacapture/', 'datacapture/my-endpoint/AllTraffic/2025/06/01/13/'])
      expect(evaluate(statements, call('s3:ListBucket', bucket, { 's3:prefix': prefix })), prefix).toBe('allowed');
    for (const prefix of ['', 'other/', 'datacaptur'])
      expect(evaluate(statements, call('s3:ListBucket', bucket, { 's3:prefix': prefix })), prefix).toBe(
        'implicit-deny',
      );
    expect(evaluate(statements, call('s3:ListBucket', bucket))).toBe('implicit-deny'); // a listing of the whole bucket
    expect(
      evaluate(statements, call('s3:GetObject', `${bucket}/datacapture/ep/AllTraffic/2025/06/01/13/f.jsonl`)),
    ).toBe('allowed');
    expect(evaluate(statements, call('s3:GetObject', `${bucket}/private/f.jsonl`))).toBe('implicit-deny');
    for (const action of ['s3:PutObject', 's3:DeleteObject', 's3:PutObjectAcl', 's3:PutObjectTagging'])
      expect(evaluate(statements, call(action, `${bucket}/datacapture/f.jsonl`)), action).toBe('implicit-deny');
    // No role of the stack may write or delete anything in the capture bucket.
    for (const [id, p] of resourcesOf(t, 'AWS::IAM::Policy')) {
      for (const s of (
        p.Properties!.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }
      ).Statement) {
        if (!JSON.stringify(s.Resource).includes('my-capture-bucket')) continue;
        expect(
          ([] as string[])
            .concat(s.Action)
            .filter((a) => /Put|Delete|Abort|Restore|\*/.test(a) && !a.includes('BucketNotification')),
          id,
        ).toEqual([]);
      }
    }
  });

  it(
    'the plan function writes work/, runs/ and schedules/ of the results bucket, sends shards and the collect ' +
      'message, and nothing else',
    () => {
      const { statements } = functionPolicies(t, 'StatelessPlan', r);
      const results = arnOf(t, 'AWS::S3::Bucket', 'StatefulResults');
      for (const prefix of ['work/run/_run.json', 'runs/run/ingest_report.json', 'schedules/nightly/history.jsonl']) {
        for (const action of ['s3:GetObject', 's3:PutObject'])
          expect(evaluate(statements, call(action, `${results}/${prefix}`)), `${action} ${prefix}`).toBe('allowed');
      }
      expect(evaluate(statements, call('s3:PutObject', `${results}/hours/2025/x`))).toBe('implicit-deny');
      expect(evaluate(statements, call('s3:DeleteObject', `${results}/work/run/_run.json`))).toBe('implicit-deny');
      for (const q of ['StatefulReplayQueue', 'StatefulCollectQueue'])
        expect(evaluate(statements, call('sqs:SendMessage', arnOf(t, 'AWS::SQS::Queue', q))), q).toBe('allowed');
      expect(evaluate(statements, call('sqs:SendMessage', planQueue))).toBe('implicit-deny');
      const actions = new Set(statements.flatMap((s) => ([] as string[]).concat(s.Action as string | string[])));
      const eventSource = [
        'sqs:ReceiveMessage',
        'sqs:ChangeMessageVisibility',
        'sqs:GetQueueUrl',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
      ];
      expect([...actions].sort()).toEqual(
        ['s3:GetObject', 's3:ListBucket', 's3:PutObject', 'sqs:SendMessage', ...eventSource].sort(),
      );
    },
  );

  it('the collector reads runs/ and schedules/ and writes the history and trend page under schedules/', () => {
    const { statements } = functionPolicies(t, 'StatelessCollect', r);
    const results = arnOf(t, 'AWS::S3::Bucket', 'StatefulResults');
    for (const key of ['runs/window-1/comparison.json', 'schedules/nightly/history.jsonl'])
      expect(evaluate(statements, call('s3:GetObject', `${results}/${key}`)), key).toBe('allowed');
    for (const key of ['schedules/nightly/history.jsonl', 'schedules/nightly/index.html'])
      expect(evaluate(statements, call('s3:PutObject', `${results}/${key}`)), key).toBe('allowed');
    expect(evaluate(statements, call('s3:DeleteObject', `${results}/schedules/nightly/history.jsonl`))).toBe(
      'implicit-deny',
    );
  });

  it('outputs the plan queue (to run one now) and the scheduler DLQ', () => {
    const outputs = (t as unknown as { Outputs: Record<string, { Value: unknown }> }).Outputs;
    expect(outputs.PlanQueueUrl?.Value).toEqual({ Ref: onlyLogicalId(t, 'AWS::SQS::Queue', 'StatefulPlanQueue') });
    expect(outputs.SchedulerDlqUrl?.Value).toEqual({
      Ref: onlyLogicalId(t, 'AWS::SQS::Queue', 'StatefulSchedulerDlq'),
    });
    expect(outputs.NotifyTopicArn).toBeUndefined();
  });
});

describe('notify', () => {
  it('creates a topic under a key of its own (the alarms notify it too: test/infra/deployment.test.ts), TLS ' +
    'only, emails subscribed; plan and collect alone publish to it', () => {
    const { stack, t } = synth(
      { ...base, notify: { emails: ['ml-team@example.com', 'oncall@example.com'] } },
      'Notified',
    );
    const r = resolverFor(t);
    const topicId = onlyLogicalId(t, 'AWS::SNS::Topic', 'StatefulNotifyTopic');
    expect(resolveIntrinsics(t.Resources[topicId]!.Properties!.KmsMasterKeyId, t, r)).toBe(
      arnOf(t, 'AWS::KMS::Key', 'StatefulNotifyTopicKey'),
    );
    const topicPolicy = resourcesOf(t, 'AWS::SNS::TopicPolicy').find(([, p]) =>
      JSON.stringify(p.Properties?.Topics).includes(topicId),
    );
    expect(topicPolicy?.[1].Properties?.PolicyDocument).toMatchObject({
      Statement: expect.arrayContaining([
        expect.objectContaining({
          Effect: 'Deny',
          Action: 'sns:Publish',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      ]),
    });
    expect(resourcesOf(t, 'AWS::SNS::Subscription').map(([, s]) => s.Properties)).toEqual([
      { Protocol: 'email', Endpoint: 'ml-team@example.com', TopicArn: { Ref: topicId } },
      { Protocol: 'email', Endpoint: 'oncall@example.com', TopicArn: { Ref: topicId } },
    ]);
    const topic = r.resources[topicId]!.Ref;
    for (const fn of ['StatelessPlan', 'StatelessCollect']) {
      expect(evaluate(functionPolicies(t, fn, r).statements, call('sns:Publish', topic)), fn).toBe('allowed');
      expect(functionEnvironment(t, fn, r).NOTIFY_TOPIC_ARN, fn).toBe(topic);
    }
    for (const fn of ['StatelessIngest', 'StatelessFire'])
      expect(evaluate(functionPolicies(t, fn, r).statements, call('sns:Publish', topic)), fn).toBe('implicit-deny');
    expect((t as unknown as { Outputs: Record<string, { Value: unknown }> }).Outputs.NotifyTopicArn?.Value).toEqual({
      Ref: topicId,
    });
    expect(nagFindings(stack)).toEqual([]);
  }, 120_000);

  it('uses an existing topic by its ARN: no topic created, the grant and the environment name it', () => {
    const arn = `arn:aws:sns:${REGION}:${ACCOUNT}:ml-alerts`;
    const { stack, t } = synth({ ...base, notify: { topicArn: arn } }, 'ExistingTopic');
    const r = resolverFor(t);
    expect(resourcesOf(t, 'AWS::SNS::Topic')).toEqual([]);
    for (const fn of ['StatelessPlan', 'StatelessCollect']) {
      const statements = functionPolicies(t, fn, r).statements;
      expect(statements.filter((s) => JSON.stringify(s.Action).includes('sns:'))).toEqual([
        { Effect: 'Allow', Action: 'sns:Publish', Resource: arn },
      ]);
      expect(evaluate(statements, call('sns:Publish', `arn:aws:sns:${REGION}:${ACCOUNT}:other`))).toBe('implicit-deny');
      expect(functionEnvironment(t, fn, r).NOTIFY_TOPIC_ARN).toBe(arn);
    }
    expect((t as unknown as { Outputs: Record<string, { Value: unknown }> }).Outputs.NotifyTopicArn?.Value).toBe(arn);
    expect(nagFindings(stack)).toEqual([]);
  }, 120_000);
});

describe('variants', () => {
  it(
    'without schedules: no plan function, queue, schedule, scheduler role or topic, and the collector gets ' +
      'nothing under schedules/',
    () => {
      const { schedules: _, ...unscheduled } = base;
      const { t } = synth(unscheduled, 'Unscheduled');
      for (const type of ['AWS::Scheduler::Schedule', 'AWS::SNS::Topic'])
        expect(resourcesOf(t, type), type).toEqual([]);
      expect(Object.keys(t.Resources).filter((id) => /Plan|Scheduler/.test(id))).toEqual([]);
      expect(JSON.stringify(functionPolicies(t, 'StatelessCollect', resolverFor(t)).statements)).not.toContain(
        '/schedules/',
      );
      expect(Object.keys((t as unknown as { Outputs: Record<string, unknown> }).Outputs)).not.toContain('PlanQueueUrl');
    },
  );

  it(
    'several schedules, an empty capture prefix and a capture key: one schedule each, the whole bucket listed, ' +
      'the key used through S3 only',
    () => {
      const key = `arn:aws:kms:${REGION}:${ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab`;
      const second = {
        name: 'weekday-peak',
        expression: 'cron(30 6 ? * MON-FRI *)',
        timezone: 'Europe/Paris',
        window: { daysAgo: 1, from: '14:00', to: '15:00' },
        targets: ['B', 'A'],
        sample: 0.25,
      };
      const { t } = synth(
        { ...base, capturePrefix: '', captureKmsKeyArn: key, schedules: [...base.schedules, second] },
        'Multi',
      );
      const r = resolverFor(t);
      const schedules = resourcesOf(t, 'AWS::Scheduler::Schedule').map(([, s]) => s.Properties!);
      expect(schedules.map((s) => [s.Name, s.ScheduleExpression, s.ScheduleExpressionTimezone])).toEqual([
        ['Multi-nightly', 'cron(0 2 * * ? *)', 'UTC'],
        ['Multi-weekday-peak', 'cron(30 6 ? * MON-FRI *)', 'Europe/Paris'],
      ]);
      expect(JSON.parse((schedules[1]!.Target as { Input: string }).Input)).toMatchObject({ schedule: 'weekday-peak' });
      const { statements } = functionPolicies(t, 'StatelessPlan', r);
      expect(evaluate(statements, call('s3:ListBucket', 'arn:aws:s3:::my-capture-bucket'))).toBe('allowed');
      expect(statements.filter((s) => JSON.stringify(s.Action).includes('kms:'))).toEqual([
        {
          Effect: 'Allow',
          Action: 'kms:Decrypt',
          Resource: key,
          Condition: { StringEquals: { 'kms:ViaService': `s3.${REGION}.amazonaws.com` } },
        },
      ]);
    },
  );

  it("keeps a schedule's history when results expire: schedules/ has no expiration, runs/ has", () => {
    const { t } = synth({ ...base, resultsExpireDays: 30 }, 'Expiring');
    const bucketId = onlyLogicalId(t, 'AWS::S3::Bucket', 'StatefulResults');
    const rules = (
      t.Resources[bucketId]!.Properties!.LifecycleConfiguration as {
        Rules: { Prefix: string; ExpirationInDays?: number; AbortIncompleteMultipartUpload?: unknown }[];
      }
    ).Rules;
    expect(rules.find((x) => x.Prefix === 'runs/')?.ExpirationInDays).toBe(30);
    const history = rules.find((x) => x.Prefix === 'schedules/');
    expect(history).toBeDefined();
    expect(history?.ExpirationInDays).toBeUndefined();
    expect(history?.AbortIncompleteMultipartUpload).toEqual({ DaysAfterInitiation: 1 });
  });

  it('derives schedule names within 64 characters, unique for long names', () => {
    expect(scheduleResourceName('CaptureReplay', 'nightly')).toBe('CaptureReplay-nightly');
    const stackName = 'capture-replay-production-eu-west-1';
    const a = scheduleResourceName(stackName, 'weekday-peak-hour-comparison-a');
    const b = scheduleResourceName(stackName, 'weekday-peak-hour-comparison-b');
    for (const n of [a, b]) expect(n).toMatch(/^[0-9a-zA-Z._-]{1,64}$/);
    expect(a).toHaveLength(64);
    expect(a).not.toBe(b);
    expect(a.startsWith(`${stackName}-weekday`)).toBe(true);
  });
});
