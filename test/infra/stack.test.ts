/**
 * CDK assertions for what matters in the deployed shape: the notification filter, event
 * sources with partial batch responses, redrive and alarms, visibility vs timeout,
 * encryption and TLS-only policies, the read-only capture grant, runtime and architecture,
 * no physical names, and cdk-nag's AwsSolutions pack without unsuppressed errors.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { CaptureReplayStack } from '../../lib/capture-replay-stack';
import { parseDeploymentConfig, placeholdersIn } from '../../lib/config';

const config = parseDeploymentConfig({
  captureBucket: 'my-capture-bucket',
  capturePrefix: 'datacapture/llm/',
  targets: [
    { name: 'A', url: 'https://a.example.com', apiKeySecret: 'replay/key-a' },
    { name: 'B', url: 'https://b.example.com' },
  ],
});

const app = new App();
const stack = new CaptureReplayStack(app, 'Test', { config });
Aspects.of(app).add(new AwsSolutionsChecks());
const template = Template.fromStack(stack);
const resources = (type: string) => Object.values(template.findResources(type)) as { Properties: Record<string, unknown> }[];

describe('CaptureReplayStack', () => {
  it('notifies the ingest queue of .jsonl objects under the capture prefix only', () => {
    template.hasResourceProperties('Custom::S3BucketNotifications', {
      BucketName: 'my-capture-bucket',
      NotificationConfiguration: {
        QueueConfigurations: [
          {
            Events: ['s3:ObjectCreated:*'],
            QueueArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('StatefulIngestQueue'), 'Arn'] },
            Filter: { Key: { FilterRules: Match.arrayWith([{ Name: 'suffix', Value: '.jsonl' }, { Name: 'prefix', Value: 'datacapture/llm/' }]) } },
          },
        ],
      },
      Managed: false, // an imported bucket: existing notifications are kept
    });
  });

  it('every event source reports batch item failures', () => {
    const mappings = resources('AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(3);
    for (const m of mappings) expect(m.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('StatefulReplayQueue'), 'Arn'] }, ScalingConfig: { MaximumConcurrency: 50 } });
  });

  it('every work queue has a DLQ (3 receives), SSE, and a visibility of 6x its function timeout', () => {
    const timeouts: Record<string, number> = {};
    for (const [id, r] of Object.entries(template.findResources('AWS::Lambda::Function'))) timeouts[id] = (r as { Properties: { Timeout: number } }).Properties.Timeout;
    const fnTimeout = (name: string) => Object.entries(timeouts).find(([id]) => id.startsWith(`Stateless${name}`) && !id.includes('Role'))?.[1];
    const queues = template.findResources('AWS::SQS::Queue');
    const byName = (name: string) => Object.entries(queues).find(([id]) => id.startsWith(`Stateful${name}Queue`))?.[1] as { Properties: { VisibilityTimeout: number; RedrivePolicy: { maxReceiveCount: number }; SqsManagedSseEnabled: boolean } };
    for (const [queue, fn] of [['Ingest', 'Ingest'], ['Replay', 'Fire'], ['Collect', 'Collect']] as const) {
      const q = byName(queue);
      expect(q.Properties.RedrivePolicy.maxReceiveCount).toBe(3);
      expect(q.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * (fnTimeout(fn) as number));
    }
    for (const q of resources('AWS::SQS::Queue')) expect(q.Properties.SqsManagedSseEnabled).toBe(true);
    expect(resources('AWS::CloudWatch::Alarm')).toHaveLength(3);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1 });
  });

  it('denies non-TLS access to every queue and bucket it owns, and blocks public access', () => {
    const denyInsecure = Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } });
    expect(resources('AWS::SQS::QueuePolicy').length).toBeGreaterThanOrEqual(6);
    for (const p of resources('AWS::SQS::QueuePolicy')) expect(JSON.stringify(p.Properties.PolicyDocument)).toContain('aws:SecureTransport');
    template.hasResourceProperties('AWS::SQS::QueuePolicy', { PolicyDocument: { Statement: Match.arrayWith([denyInsecure]) } });
    for (const b of resources('AWS::S3::Bucket')) {
      expect(b.Properties.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
      expect(b.Properties.BucketEncryption).toBeDefined();
    }
    for (const p of resources('AWS::S3::BucketPolicy')) expect(JSON.stringify(p.Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
  });

  it('reads captures only, and only under the prefix', () => {
    const policies = resources('AWS::IAM::Policy').map((p) => JSON.stringify(p.Properties.PolicyDocument));
    const captureStatements = policies.join('').match(/my-capture-bucket[^"]*"/g) ?? [];
    expect(captureStatements.length).toBeGreaterThan(0);
    const ingest = policies.find((p) => p.includes('my-capture-bucket/datacapture/llm/*'));
    expect(ingest).toBeDefined();
    // No write or delete action anywhere on the capture bucket.
    for (const policy of resources('AWS::IAM::Policy')) {
      for (const st of (policy.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement) {
        if (!JSON.stringify(st.Resource).includes('my-capture-bucket')) continue;
        const actions = ([] as string[]).concat(st.Action);
        expect(actions.filter((a) => /Put|Delete|Abort/.test(a) && !a.includes('BucketNotification'))).toEqual([]);
      }
    }
  });

  it('runs Node.js 22 on arm64, with log retention, and grants the API key secret to the fire function only', () => {
    const fns = resources('AWS::Lambda::Function').filter((f) => f.Properties.Runtime !== undefined && String(f.Properties.Runtime).startsWith('nodejs'));
    expect(fns.filter((f) => f.Properties.Runtime === 'nodejs22.x' && JSON.stringify(f.Properties.Architectures) === '["arm64"]')).toHaveLength(3);
    for (const g of resources('AWS::Logs::LogGroup')) expect(g.Properties.RetentionInDays).toBe(30);
    const secretReaders = resources('AWS::IAM::Policy').filter((p) => JSON.stringify(p.Properties.PolicyDocument).includes('secretsmanager:GetSecretValue'));
    expect(secretReaders).toHaveLength(1);
    expect(JSON.stringify(secretReaders[0]!.Properties.Roles)).toContain('StatelessFire');
  });

  it('sets no physical names', () => {
    for (const b of resources('AWS::S3::Bucket')) expect(b.Properties.BucketName).toBeUndefined();
    for (const q of resources('AWS::SQS::Queue')) expect(q.Properties.QueueName).toBeUndefined();
    for (const f of resources('AWS::Lambda::Function')) expect(f.Properties.FunctionName).toBeUndefined();
  });

  it('passes cdk-nag AwsSolutions with no unsuppressed error or warning', () => {
    const findings = [...Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*')), ...Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*'))];
    expect(findings.map((f) => `${f.id}: ${String(f.entry.data).slice(0, 120)}`)).toEqual([]);
  });
});

describe('deployment configuration', () => {
  it('reports every problem at once', () => {
    expect(() => parseDeploymentConfig({ captureBucket: 'Not_A_Bucket', targets: [], leadSeconds: 1 })).toThrow(/captureBucket[\s\S]*targets[\s\S]*leadSeconds/);
  });

  it('keeps a fire invocation within Lambda\'s 15 minutes', () => {
    expect(() => parseDeploymentConfig({ leadSeconds: 240, slotSeconds: 60, requestTimeoutSeconds: 600 })).toThrow(/900 s: at most 840 s/);
    expect(() => parseDeploymentConfig({ leadSeconds: 180, slotSeconds: 60, requestTimeoutSeconds: 600 })).not.toThrow();
  });

  it('defaults synthesize, and deploy-blocking placeholders are named', () => {
    expect(placeholdersIn(parseDeploymentConfig({}))).toEqual(['captureBucket', 'targets[].url']);
    expect(placeholdersIn(config)).toEqual([]);
    expect(template.toJSON().Rules?.ConfiguredBeforeDeploy).toBeUndefined(); // a configured stack carries no deploy guard
  });
});
