/**
 * Issue 18, the stack in a real account: the capture bucket's Region checked at synth and at
 * deploy (the check before any notification, rule or schedule), a bucket in another account
 * (refused in S3 mode; in EventBridge mode a receiving bus and the owner's part as outputs),
 * every alarm with an action, the outputs a user and the CLI read, autoReplay, and the fire
 * function's secrets max age. Synthesized with cdk.json's feature flags, without bundling.
 */
import { Aspects } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it, vi } from 'vitest';
import { CaptureReplayStack } from '../../lib/capture-replay-stack';
import { DeploymentConfigError, parseDeploymentConfig } from '../../lib/config';
import { evaluate } from '../support/iam/policy-evaluator';
import {
  functionEnvironment,
  functionPolicies,
  logicalIds,
  onlyLogicalId,
  resolveIntrinsics,
  type CfnTemplate,
  type Resolver,
} from '../support/iam/template-policies';
import { templateApp } from '../support/cdk-app';

// Each test synthesizes stacks and runs cdk-nag over some: tens of seconds on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

const ACCOUNT = '123456789012';
const OWNER = '210987654321';
const REGION = 'us-east-1';
const TARGETS = [
  { name: 'A', url: 'https://a.example.com' },
  { name: 'B', url: 'https://b.example.com' },
];
const SCHEDULE = { name: 'nightly', expression: 'cron(0 2 * * ? *)', window: { lastHours: 1 }, targets: ['A', 'B'] };
const base = { captureBucket: 'my-captures', capturePrefix: 'datacapture/', targets: TARGETS };

type Outputs = Record<string, { Value: unknown }>;
type Synth = { stack: CaptureReplayStack; t: CfnTemplate; outputs: Outputs; r: Resolver };

function synth(raw: unknown, id: string, env?: { account: string; region: string }): Synth {
  const app = templateApp({ featureFlags: true });
  const stack = new CaptureReplayStack(app, id, { config: parseDeploymentConfig(raw), ...(env ? { env } : {}) });
  Aspects.of(app).add(new AwsSolutionsChecks());
  const t = Template.fromStack(stack).toJSON() as CfnTemplate & { Outputs: Outputs };
  const resources = Object.fromEntries(
    Object.keys(t.Resources).map((rid) => [
      rid,
      { Ref: `arn:aws:test:${REGION}:${ACCOUNT}:${rid}`, Arn: `arn:aws:test:${REGION}:${ACCOUNT}:${rid}` },
    ]),
  );
  return { stack, t, outputs: t.Outputs, r: { partition: 'aws', region: REGION, accountId: ACCOUNT, resources } };
}

const ofType = (t: CfnTemplate, type: string) => Object.entries(t.Resources).filter(([, r]) => r.Type === type);
const dependsOn = (t: CfnTemplate, id: string) =>
  ([] as string[]).concat((t.Resources[id] as { DependsOn?: string | string[] }).DependsOn ?? []);
const nagFindings = (stack: CaptureReplayStack) =>
  [
    ...Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
    ...Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')),
  ].map((f) => `${f.id}: ${String(f.entry.data).slice(0, 160)}`);
const refusal = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DeploymentConfigError);
    return (error as Error).message.split('\n').slice(1);
  }
  throw new Error('expected the configuration to be refused');
};

describe("the capture bucket's Region", () => {
  it("synth refuses a captureBucketRegion other than the stack's, in one line naming both", () => {
    expect(
      refusal(() =>
        parseDeploymentConfig({ ...base, captureBucketRegion: 'us-west-2' }, 'captureReplay', { region: 'eu-west-1' }),
      ),
    ).toEqual([
      '- captureReplay.captureBucketRegion: the capture bucket is in us-west-2 and the stack would deploy to ' +
        "eu-west-1: deploy to us-west-2 (AWS_REGION or the profile's region), the stack must be in the bucket's Region",
    ]);
    // The stack, given its environment directly, refuses the same.
    expect(
      refusal(() =>
        synth({ ...base, captureBucketRegion: 'us-west-2' }, 'WrongRegion', { account: ACCOUNT, region: 'eu-west-1' }),
      ),
    ).toHaveLength(1);
    expect(() =>
      parseDeploymentConfig({ ...base, captureBucketRegion: 'us-west-2' }, 'captureReplay', { region: 'us-west-2' }),
    ).not.toThrow();
    // Unknown at synth (no credentials): left to the deploy-time check.
    expect(() => parseDeploymentConfig({ ...base, captureBucketRegion: 'us-west-2' })).not.toThrow();
    expect(refusal(() => parseDeploymentConfig({ ...base, captureBucketRegion: 'Oregon' }))).toEqual([
      '- captureReplay.captureBucketRegion: an AWS region name, e.g. us-east-1',
    ]);
  });

  const s3Mode = synth({ ...base, schedules: [SCHEDULE] }, 'Checked');

  it('checks the bucket at deploy with a custom resource of its own function, answering CloudFormation within 5 minutes', () => {
    const [[id, check]] = ofType(s3Mode.t, 'Custom::CaptureBucketCheck') as unknown as [
      [string, { Properties: Record<string, unknown> }],
    ];
    const fnId = onlyLogicalId(s3Mode.t, 'AWS::Lambda::Function', 'StatelessCaptureBucketCheckFunction');
    expect(check.Properties).toEqual({
      ServiceToken: { 'Fn::GetAtt': [fnId, 'Arn'] },
      ServiceTimeout: '300',
      BucketName: 'my-captures',
      StackRegion: { Ref: 'AWS::Region' },
      StackAccount: { Ref: 'AWS::AccountId' },
    });
    expect(id).toMatch(/^StatelessCaptureBucketCheck/);
    // HeadBucket on the capture bucket is all it may do.
    const { statements } = functionPolicies(s3Mode.t, 'StatelessCaptureBucketCheckFunction', s3Mode.r);
    expect(statements).toEqual([{ Effect: 'Allow', Action: 's3:ListBucket', Resource: 'arn:aws:s3:::my-captures' }]);
    expect(evaluate(statements, { action: 's3:ListBucket', resource: 'arn:aws:s3:::other-bucket', context: {} })).toBe(
      'implicit-deny',
    );
  });

  it('creates the S3 notification and every schedule only after the check', () => {
    const checkId = logicalIds(s3Mode.t, 'Custom::CaptureBucketCheck')[0]!;
    const [notification] = logicalIds(s3Mode.t, 'Custom::S3BucketNotifications');
    expect(dependsOn(s3Mode.t, notification!)).toContain(checkId);
    const schedules = logicalIds(s3Mode.t, 'AWS::Scheduler::Schedule');
    expect(schedules).toHaveLength(1);
    for (const s of schedules) expect(dependsOn(s3Mode.t, s)).toContain(checkId);
  });

  it('creates the EventBridge rule only after the check', () => {
    const { t } = synth({ ...base, notifications: 'eventbridge' }, 'CheckedRule');
    const rule = onlyLogicalId(t, 'AWS::Events::Rule', 'StatelessCaptureObjectCreated');
    expect(dependsOn(t, rule)).toContain(logicalIds(t, 'Custom::CaptureBucketCheck')[0]);
  });
});

describe('a capture bucket in another account', () => {
  const owner = { account: ACCOUNT, region: REGION };

  it("synth refuses S3 notifications on another account's bucket, naming both accounts and the way out", () => {
    expect(
      refusal(() => parseDeploymentConfig({ ...base, captureBucketAccount: OWNER }, 'captureReplay', owner)),
    ).toEqual([
      `- captureReplay.notifications: the capture bucket belongs to account ${OWNER}, not ${ACCOUNT}: only ` +
        `its owner can set its S3 notifications; use "notifications": "eventbridge" (the stack then outputs ` +
        `the rule the owner adds)`,
    ]);
    // Its own account's bucket, said explicitly: fine.
    expect(() =>
      parseDeploymentConfig({ ...base, captureBucketAccount: ACCOUNT }, 'captureReplay', owner),
    ).not.toThrow();
  });

  const bridged = synth(
    { ...base, notifications: 'eventbridge', captureBucketAccount: OWNER, schedules: [SCHEDULE] },
    'CrossAccount',
    owner,
  );

  it("receives the owner's forwarded events on a bus of its own that only the owner may put S3 Object Created events on", () => {
    expect(ofType(bridged.t, 'Custom::S3BucketNotifications')).toEqual([]);
    const [[busId, bus]] = ofType(bridged.t, 'AWS::Events::EventBus') as unknown as [
      [string, { Properties: Record<string, unknown> }],
    ];
    expect(bus.Properties.Name).toBe('CrossAccount-capture-events');
    const policy = bus.Properties.Policy as { Version: string; Statement: Record<string, unknown>[] };
    expect(policy.Statement).toHaveLength(1);
    expect(policy.Statement[0]).toMatchObject({
      Sid: 'CaptureBucketOwnerForwards',
      Effect: 'Allow',
      Principal: { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:iam::${OWNER}:root`]] } },
      Action: 'events:PutEvents',
      Condition: {
        'ForAllValues:StringEquals': { 'events:source': ['aws.s3'] },
        StringEquals: { 'events:detail-type': 'Object Created' },
      },
    });
    expect(resolveIntrinsics(policy.Statement[0]!.Resource, bridged.t, bridged.r)).toBe(
      `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/CrossAccount-capture-events`,
    );
    const rule = Object.values(bridged.t.Resources).find((r) => r.Type === 'AWS::Events::Rule')!;
    expect(rule.Properties).toMatchObject({
      EventBusName: { Ref: busId },
      EventPattern: { account: [OWNER], source: ['aws.s3'], 'detail-type': ['Object Created'] },
    });
  });

  it(
    'outputs the rule the owner adds (pattern, target bus, role policy) and the bucket policy statements for ' +
      'the ingest and plan roles',
    () => {
      const text = (name: string) =>
        JSON.parse(resolveIntrinsics(bridged.outputs[name]!.Value, bridged.t, bridged.r) as string) as unknown;
      const busArn = bridged.r.resources[logicalIds(bridged.t, 'AWS::Events::EventBus')[0]!]!.Arn;
      expect(text('CaptureOwnerEventRule')).toEqual({
        eventBusName: 'default',
        eventPattern: {
          source: ['aws.s3'],
          'detail-type': ['Object Created'],
          detail: { bucket: { name: ['my-captures'] }, object: { key: [{ prefix: 'datacapture/' }] } },
        },
        targetArn: busArn,
        roleTrustedService: 'events.amazonaws.com',
        rolePolicy: {
          Version: '2012-10-17',
          Statement: [{ Effect: 'Allow', Action: 'events:PutEvents', Resource: busArn }],
        },
      });
      const role = (prefix: string) => bridged.r.resources[onlyLogicalId(bridged.t, 'AWS::IAM::Role', prefix)]!.Arn;
      expect(text('CaptureOwnerBucketPolicy')).toEqual([
        {
          Sid: 'CaptureReplayReadCaptures',
          Effect: 'Allow',
          Principal: { AWS: [role('StatelessIngestServiceRole'), role('StatelessPlanServiceRole')] },
          Action: 's3:GetObject',
          Resource: 'arn:aws:s3:::my-captures/datacapture/*',
        },
        {
          Sid: 'CaptureReplayListCaptures',
          Effect: 'Allow',
          Principal: { AWS: role('StatelessPlanServiceRole') },
          Action: 's3:ListBucket',
          Resource: 'arn:aws:s3:::my-captures',
          Condition: { StringLike: { 's3:prefix': 'datacapture/*' } },
        },
      ]);
      expect(nagFindings(bridged.stack)).toEqual([]);
    },
  );

  it('with autoReplay false, S3 mode is fine (no notification to set) and only the bucket policy is output', () => {
    const { t, outputs } = synth(
      { ...base, captureBucketAccount: OWNER, schedules: [SCHEDULE], autoReplay: false },
      'CrossScheduled',
      owner,
    );
    expect(ofType(t, 'Custom::S3BucketNotifications')).toEqual([]);
    expect(Object.keys(outputs)).toContain('CaptureOwnerBucketPolicy');
    expect(Object.keys(outputs)).not.toContain('CaptureOwnerEventRule');
  });

  it('when synth cannot know the account, the deploy-time check compares it with the declared owner', () => {
    const { t } = synth({ ...base, notifications: 'eventbridge', captureBucketAccount: OWNER }, 'UnknownAccount');
    const check = ofType(t, 'Custom::CaptureBucketCheck')[0]![1];
    expect(check.Properties).toMatchObject({ DeclaredAccount: OWNER, StackAccount: { Ref: 'AWS::AccountId' } });
    // Built as its own account's bucket: the rule on the default bus, no receiving bus.
    expect(ofType(t, 'AWS::Events::EventBus')).toEqual([]);
  });
});

describe('concurrency that fits the account', () => {
  it(
    'refuses 10,000 requests/s to two targets whose responses take 5 s (median) and 60 s (p99), one line each, ' +
      'naming what is needed',
    () => {
      expect(
        refusal(() =>
          parseDeploymentConfig({
            ...base,
            peakRequestsPerSecond: 10_000,
            peakLatencyMedianSeconds: 5,
            peakLatencySeconds: 60,
          }),
        ),
      ).toEqual([
        '- captureReplay.peakRequestsPerSecond: the fire function needs 1681 concurrent executions for 10000 ' +
          'requests/s to 2 targets, but an SQS event source runs at most 1,000 (MaximumConcurrency): lower ' +
          'peakRequestsPerSecond or peakLatencySeconds',
        '- captureReplay.accountConcurrency: the deployment needs a Lambda concurrency quota of at least 1781 ' +
          '(1681 reserved for the fire function at 10000 requests/s to 2 targets, plus the 100 Lambda keeps ' +
          'unreserved) and accountConcurrency is 1000: raise the account\'s "Concurrent executions" quota ' +
          '(Service Quotas) and set accountConcurrency to it, or lower peakRequestsPerSecond',
      ]);
    },
  );

  it(
    'at the 900-reserved edge of a default account: 10,000/s to two targets fits with 6 s median responses ' +
      '(870 reserved), not with 6.5 s (925)',
    () => {
      expect(() =>
        parseDeploymentConfig({ ...base, peakRequestsPerSecond: 10_000, peakLatencyMedianSeconds: 6 }),
      ).not.toThrow();
      expect(
        refusal(() => parseDeploymentConfig({ ...base, peakRequestsPerSecond: 10_000, peakLatencyMedianSeconds: 6.5 })),
      ).toEqual([
        '- captureReplay.accountConcurrency: the deployment needs a Lambda concurrency quota of at least 1025 ' +
          '(925 reserved for the fire function at 10000 requests/s to 2 targets, plus the 100 Lambda keeps ' +
          'unreserved) and accountConcurrency is 1000: raise the account\'s "Concurrent executions" quota ' +
          '(Service Quotas) and set accountConcurrency to it, or lower peakRequestsPerSecond',
      ]);
      // A raised quota, said in accountConcurrency, takes it; the template reserves what was derived.
      const { t } = synth(
        { ...base, peakRequestsPerSecond: 10_000, peakLatencyMedianSeconds: 6.5, accountConcurrency: 1025 },
        'RaisedQuota',
      );
      const fire = Object.entries(t.Resources).find(
        ([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith('StatelessFire'),
      )![1];
      expect(fire.Properties?.ReservedConcurrentExecutions).toBe(925);
    },
  );

  it("counts the other functions' event sources, which reserve nothing, in the account when the fire function does not reserve", () => {
    // 966 for fire + 10 ingest + 5 collect = 981 <= 1,000; with schedules, + 2 plan = 983.
    expect(() =>
      parseDeploymentConfig({
        ...base,
        peakRequestsPerSecond: 10_000,
        peakLatencyMedianSeconds: 7,
        reserveFireConcurrency: false,
        schedules: [SCHEDULE],
      }),
    ).not.toThrow();
    expect(
      refusal(() =>
        parseDeploymentConfig({
          ...base,
          peakRequestsPerSecond: 10_000,
          peakLatencyMedianSeconds: 7,
          reserveFireConcurrency: false,
          accountConcurrency: 980,
        }),
      ),
    ).toEqual([
      '- captureReplay.accountConcurrency: the deployment needs a Lambda concurrency quota of at least 981 ' +
        '(the fire function at 966 for 10000 requests/s to 2 targets, plus the other functions at 15, all ' +
        'unreserved) and accountConcurrency is 980: raise the account\'s "Concurrent executions" quota ' +
        '(Service Quotas) and set accountConcurrency to it, or lower peakRequestsPerSecond',
    ]);
  });

  it("the defaults pass, and a new account's small quota is refused before a deploy fails on it", () => {
    expect(() => parseDeploymentConfig({})).not.toThrow();
    expect(refusal(() => parseDeploymentConfig({ ...base, accountConcurrency: 10 }))[0]).toMatch(
      /^- captureReplay\.accountConcurrency: the deployment needs a Lambda concurrency quota of at least 1\d\d /,
    );
  });
});

describe('alarms', () => {
  const alarmActions = (t: CfnTemplate) =>
    ofType(t, 'AWS::CloudWatch::Alarm').map(([id, a]) => [id, a.Properties?.AlarmActions]);

  it(
    'with notify, every alarm notifies its topic, which CloudWatch can publish to: a customer managed key that ' +
      "lets it, and a topic policy for this account's alarms",
    () => {
      const { stack, t, r, outputs } = synth(
        { ...base, schedules: [SCHEDULE], notify: { emails: ['ml@example.com'] } },
        'Notified',
      );
      const topicId = onlyLogicalId(t, 'AWS::SNS::Topic', 'StatefulNotifyTopic');
      const actions = alarmActions(t);
      // ingest, replay, collect, plan DLQs; replay age; undersized run; scheduler DLQ; the schedule's worse verdict,
      // lost requests, late run
      expect(actions).toHaveLength(10);
      for (const [id, a] of actions) expect(a, String(id)).toEqual([{ Ref: topicId }]);
      const keyId = onlyLogicalId(t, 'AWS::KMS::Key', 'StatefulNotifyTopicKey');
      expect(t.Resources[topicId]!.Properties?.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
      expect(t.Resources[keyId]!.Properties).toMatchObject({ EnableKeyRotation: true });
      expect(JSON.stringify(t.Resources[keyId]!.Properties?.KeyPolicy)).toContain(
        '{"Action":["kms:Decrypt","kms:GenerateDataKey*"],"Effect":"Allow","Principal":{"Service":' +
          '"cloudwatch.amazonaws.com"},"Resource":"*","Sid":"CloudWatchAlarmsPublish"}',
      );
      const topicPolicy = ofType(t, 'AWS::SNS::TopicPolicy').find(([, p]) =>
        JSON.stringify(p.Properties?.Topics).includes(topicId),
      )![1];
      expect((topicPolicy.Properties!.PolicyDocument as { Statement: unknown[] }).Statement).toContainEqual({
        Sid: 'CloudWatchAlarmsPublish',
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: 'sns:Publish',
        Resource: { Ref: topicId },
        Condition: {
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
          ArnLike: {
            'aws:SourceArn': {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  ':cloudwatch:',
                  { Ref: 'AWS::Region' },
                  ':',
                  { Ref: 'AWS::AccountId' },
                  ':alarm:*',
                ],
              ],
            },
          },
        },
      });
      // The functions that publish summaries use the key, through SNS only.
      const key = r.resources[keyId]!.Arn!;
      for (const fn of ['StatelessPlan', 'StatelessCollect']) {
        const statements = functionPolicies(t, fn, r).statements;
        for (const action of ['kms:GenerateDataKey', 'kms:Decrypt']) {
          expect(
            evaluate(statements, {
              action,
              resource: key,
              context: { 'kms:ViaService': `sns.${REGION}.amazonaws.com` },
            }),
            `${fn} ${action}`,
          ).toBe('allowed');
          expect(
            evaluate(statements, {
              action,
              resource: key,
              context: { 'kms:ViaService': `s3.${REGION}.amazonaws.com` },
            }),
            `${fn} ${action} not through SNS`,
          ).toBe('implicit-deny');
        }
      }
      expect(outputs.AlarmTopicArn?.Value).toEqual({ Ref: topicId });
      expect(nagFindings(stack)).toEqual([]);
    },
  );

  it('alarms.emails: a topic of their own (notify keeps the AWS managed key); alarms.topicArn: that topic', () => {
    const own = synth(
      {
        ...base,
        schedules: [SCHEDULE],
        notify: { emails: ['ml@example.com'] },
        alarms: { emails: ['oncall@example.com'] },
      },
      'OwnAlarmTopic',
    );
    const alarmTopic = onlyLogicalId(own.t, 'AWS::SNS::Topic', 'StatefulAlarmTopic');
    for (const [id, a] of alarmActions(own.t)) expect(a, String(id)).toEqual([{ Ref: alarmTopic }]);
    expect(
      ofType(own.t, 'AWS::SNS::Subscription')
        .map(([, s]) => s.Properties?.Endpoint)
        .sort(),
    ).toEqual(['ml@example.com', 'oncall@example.com']);
    expect(
      JSON.stringify(
        own.t.Resources[onlyLogicalId(own.t, 'AWS::SNS::Topic', 'StatefulNotifyTopic')]!.Properties?.KmsMasterKeyId,
      ),
    ).toContain('alias/aws/sns');
    expect(nagFindings(own.stack)).toEqual([]);
    const arn = `arn:aws:sns:${REGION}:${ACCOUNT}:oncall`;
    const existing = synth({ ...base, alarms: { topicArn: arn } }, 'ExistingAlarmTopic');
    expect(alarmActions(existing.t).length).toBeGreaterThan(0);
    for (const [id, a] of alarmActions(existing.t)) expect(a, String(id)).toEqual([arn]);
    expect(existing.outputs.AlarmTopicArn?.Value).toBe(arn);
  });

  it('without notify or alarms, the alarms have no action and there is no AlarmTopicArn', () => {
    const { t, outputs } = synth(base, 'Silent');
    for (const [id, a] of alarmActions(t)) expect(a, String(id)).toBeUndefined();
    expect(outputs.AlarmTopicArn).toBeUndefined();
  });
});

describe('outputs', () => {
  it('names every queue, the buckets, the prefix, each function role, the topics and what new captures replay to', () => {
    const { t, outputs } = synth({ ...base, schedules: [SCHEDULE], notify: { emails: ['ml@example.com'] } }, 'Outputs');
    const ref = (type: string, prefix: string) => ({ Ref: onlyLogicalId(t, type, prefix) });
    const roleArn = (prefix: string) => ({ 'Fn::GetAtt': [onlyLogicalId(t, 'AWS::IAM::Role', prefix), 'Arn'] });
    expect(
      Object.fromEntries(
        Object.entries(outputs)
          .filter(([k]) => k !== 'FireSizing')
          .map(([k, v]) => [k, v.Value]),
      ),
    ).toEqual({
      ResultsBucketName: ref('AWS::S3::Bucket', 'StatefulResults'),
      CaptureBucketName: 'my-captures',
      CapturePrefix: 'datacapture/',
      IngestQueueUrl: ref('AWS::SQS::Queue', 'StatefulIngestQueue'),
      ReplayQueueUrl: ref('AWS::SQS::Queue', 'StatefulReplayQueue'),
      CollectQueueUrl: ref('AWS::SQS::Queue', 'StatefulCollectQueue'),
      ReplayDlqUrl: ref('AWS::SQS::Queue', 'StatefulReplayDlq'),
      PlanQueueUrl: ref('AWS::SQS::Queue', 'StatefulPlanQueue'),
      SchedulerDlqUrl: ref('AWS::SQS::Queue', 'StatefulSchedulerDlq'),
      NotifyTopicArn: ref('AWS::SNS::Topic', 'StatefulNotifyTopic'),
      AlarmTopicArn: ref('AWS::SNS::Topic', 'StatefulNotifyTopic'),
      IngestRoleArn: roleArn('StatelessIngestServiceRole'),
      FireRoleArn: roleArn('StatelessFireServiceRole'),
      CollectRoleArn: roleArn('StatelessCollectServiceRole'),
      PlanRoleArn: roleArn('StatelessPlanServiceRole'),
      AutoReplay: 'all',
      // The runs' dashboard, named after the stack and its Region (dashboards are global to an account).
      DashboardUrl: {
        'Fn::Join': [
          '',
          [
            'https://',
            { Ref: 'AWS::Region' },
            '.console.aws.amazon.com/cloudwatch/home?region=',
            { Ref: 'AWS::Region' },
            '#dashboards/dashboard/Outputs-',
            { Ref: 'AWS::Region' },
          ],
        ],
      },
    });
    expect(JSON.parse(outputs.FireSizing!.Value as string)).toMatchObject({ maxConcurrency: expect.any(Number) });
  });

  it('without schedules: no plan queue, scheduler DLQ or plan role; an empty prefix has no CapturePrefix', () => {
    const { outputs } = synth({ ...base, capturePrefix: '' }, 'NoSchedules');
    for (const name of ['PlanQueueUrl', 'SchedulerDlqUrl', 'PlanRoleArn', 'NotifyTopicArn', 'CapturePrefix'])
      expect(outputs[name], name).toBeUndefined();
    expect(outputs.IngestRoleArn).toBeDefined();
  });
});

describe('autoReplay', () => {
  it('false: no notification, no rule, no ingest event source; scheduled runs still planned, fired and collected', () => {
    const { stack, t, outputs } = synth({ ...base, schedules: [SCHEDULE], autoReplay: false }, 'ScheduledOnly');
    expect(ofType(t, 'Custom::S3BucketNotifications')).toEqual([]);
    expect(ofType(t, 'AWS::Events::Rule')).toEqual([]);
    const sources = ofType(t, 'AWS::Lambda::EventSourceMapping').map(([, m]) =>
      JSON.stringify(m.Properties?.EventSourceArn),
    );
    expect(sources.some((s) => s.includes('StatefulIngestQueue'))).toBe(false);
    for (const q of ['StatefulReplayQueue', 'StatefulCollectQueue', 'StatefulPlanQueue'])
      expect(
        sources.some((s) => s.includes(q)),
        q,
      ).toBe(true);
    expect(outputs.AutoReplay?.Value).toBe('none');
    expect(nagFindings(stack)).toEqual([]);
    expect(refusal(() => parseDeploymentConfig({ ...base, autoReplay: false }))).toEqual([
      '- captureReplay.autoReplay: autoReplay false replays nothing without schedules: declare schedules, or set autoReplay to true',
    ]);
  });

  it('{ targets }: the ingest function alone gets the subset; schedules keep their own targets', () => {
    const { t, r, outputs } = synth({ ...base, schedules: [SCHEDULE], autoReplay: { targets: ['A'] } }, 'SubsetReplay');
    expect(functionEnvironment(t, 'StatelessIngest', r).AUTO_REPLAY_TARGETS).toBe('["A"]');
    for (const fn of ['StatelessFire', 'StatelessCollect', 'StatelessPlan'])
      expect(functionEnvironment(t, fn, r).AUTO_REPLAY_TARGETS, fn).toBeUndefined();
    expect(JSON.parse(functionEnvironment(t, 'StatelessPlan', r).SCHEDULES_JSON!)).toMatchObject([
      { targets: ['A', 'B'] },
    ]);
    expect(outputs.AutoReplay?.Value).toBe('A');
    expect(refusal(() => parseDeploymentConfig({ ...base, autoReplay: { targets: ['C'] } }))).toEqual([
      '- captureReplay.autoReplay.targets.0: "C" is not a configured target ("A", "B"); did you mean `A`?',
    ]);
    expect(refusal(() => parseDeploymentConfig({ ...base, autoReplay: { target: ['A'] } }))[0]).toMatch(/autoReplay/);
  });
});

describe('settings of issue 18 item 9', () => {
  it('gives the fire function SECRETS_MAX_AGE_SECONDS (default 300), and refuses a value outside 0-3600', () => {
    const { t, r } = synth({ ...base, secretsMaxAgeSeconds: 60 }, 'SecretsAge');
    expect(functionEnvironment(t, 'StatelessFire', r).SECRETS_MAX_AGE_SECONDS).toBe('60');
    expect(functionEnvironment(t, 'StatelessIngest', r).SECRETS_MAX_AGE_SECONDS).toBeUndefined();
    expect(parseDeploymentConfig(base).secretsMaxAgeSeconds).toBe(300);
    expect(refusal(() => parseDeploymentConfig({ ...base, secretsMaxAgeSeconds: 3601 }))).toEqual([
      '- captureReplay.secretsMaxAgeSeconds: must be a whole number from 0 to 3600 (got 3601)',
    ]);
  });

  it('takes a CloudFormation stack name (default CaptureReplay) and refuses others', () => {
    expect(parseDeploymentConfig(base).stackName).toBe('CaptureReplay');
    expect(parseDeploymentConfig({ ...base, stackName: 'Replay-llama-70b' }).stackName).toBe('Replay-llama-70b');
    for (const bad of ['1replay', 'replay_llama', 'a'.repeat(129), '']) {
      expect(
        refusal(() => parseDeploymentConfig({ ...base, stackName: bad })),
        bad,
      ).toEqual([
        '- captureReplay.stackName: a CloudFormation stack name: letters, digits and hyphens, starting with a letter, at most 128',
      ]);
    }
  });
});
