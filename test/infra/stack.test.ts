/**
 * CDK assertions for what matters in the deployed shape: the notification filter, event
 * sources with partial batch responses, redrive and alarms, visibility vs timeout,
 * encryption and TLS-only policies, the read-only capture grant, runtime and architecture,
 * no physical names, and cdk-nag's AwsSolutions pack without unsuppressed errors.
 * SageMaker targets: sagemaker-stack.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Aspects } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { lambdaBootstrapHeap } from '../../lambdas/adapters/lane-heap';
import { DEFAULT_METRICS_NAMESPACE } from '../../lambdas/core/metrics/cloudwatch';
import { ENV } from '../../lambdas/runtime/config';
import { CaptureReplayStack } from '../../lib/capture-replay-stack';
import { DeploymentConfigError, loadDeploymentConfig, parseDeploymentConfig, placeholdersIn } from '../../lib/config';
import { deriveFireSizing } from '../../lib/sizing';
import { templateApp } from '../support/cdk-app';
import { REPO_ROOT } from '../support/processes';

const config = parseDeploymentConfig({
  captureBucket: 'my-capture-bucket',
  capturePrefix: 'datacapture/llm/',
  targets: [
    { name: 'A', url: 'https://a.example.com', apiKeySecret: 'replay/key-a' },
    { name: 'B', url: 'https://b.example.com' },
  ],
});

/** Stacks here are synthesized for their template only (templateApp: no code bundled). */
const app = templateApp();
const stack = new CaptureReplayStack(app, 'Test', { config });
Aspects.of(app).add(new AwsSolutionsChecks());
const template = Template.fromStack(stack);
const sizing = deriveFireSizing({
  peakRequestsPerSecond: 50,
  peakLatencySeconds: 30,
  peakLatencyMedianSeconds: 2,
  targets: 2,
  leadSeconds: 20,
  requestTimeoutSeconds: 300,
});
const fn = (name: string) =>
  Object.entries(template.findResources('AWS::Lambda::Function')).find(
    ([id]) => id.startsWith(`Stateless${name}`) && !id.includes('Role'),
  )![1] as { Properties: Record<string, unknown> };
const resources = (type: string) =>
  Object.values(template.findResources(type)) as { Properties: Record<string, unknown> }[];

describe('CaptureReplayStack', () => {
  it('notifies the ingest queue of .jsonl objects under the capture prefix only', () => {
    template.hasResourceProperties('Custom::S3BucketNotifications', {
      BucketName: 'my-capture-bucket',
      NotificationConfiguration: {
        QueueConfigurations: [
          {
            Events: ['s3:ObjectCreated:*'],
            QueueArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('StatefulIngestQueue'), 'Arn'] },
            Filter: {
              Key: {
                FilterRules: Match.arrayWith([
                  { Name: 'suffix', Value: '.jsonl' },
                  { Name: 'prefix', Value: 'datacapture/llm/' },
                ]),
              },
            },
          },
        ],
      },
      Managed: false, // an imported bucket: existing notifications are kept
    });
  });

  it('every event source reports batch item failures; the fire source is sized from the peak rate', () => {
    const mappings = resources('AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(3);
    for (const m of mappings) expect(m.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('StatefulReplayQueue'), 'Arn'] },
      BatchSize: sizing.batchSize,
      ScalingConfig: { MaximumConcurrency: sizing.maxConcurrency },
    });
    const fire = fn('Fire');
    expect(fire.Properties).toMatchObject({
      MemorySize: sizing.memoryMb,
      Timeout: sizing.timeoutSeconds,
      ReservedConcurrentExecutions: sizing.maxConcurrency,
    });
  });

  it("the collect event source gathers a run's end for 5 s (a batching window); the others invoke as soon as a message is there", () => {
    const windowOf = (queue: string) =>
      resources('AWS::Lambda::EventSourceMapping').find((m) =>
        JSON.stringify(m.Properties.EventSourceArn).includes(`Stateful${queue}Queue`),
      )?.Properties.MaximumBatchingWindowInSeconds;
    expect(windowOf('Collect')).toBe(5);
    expect(windowOf('Replay')).toBeUndefined();
    expect(windowOf('Ingest')).toBeUndefined();
  });

  it(
    'every work queue has a DLQ (3 receives) and SSE; visibility outlasts each function, and the replay ' +
      "queue's is its timeout + 60 s",
    () => {
      const queues = template.findResources('AWS::SQS::Queue');
      const byName = (name: string) =>
        Object.entries(queues).find(([id]) => id.startsWith(`Stateful${name}Queue`))?.[1] as {
          Properties: {
            VisibilityTimeout: number;
            RedrivePolicy: { maxReceiveCount: number };
            SqsManagedSseEnabled: boolean;
          };
        };
      for (const [queue, name, factor] of [
        ['Ingest', 'Ingest', 6],
        ['Collect', 'Collect', 6],
      ] as const) {
        expect(byName(queue).Properties.RedrivePolicy.maxReceiveCount).toBe(3);
        expect(byName(queue).Properties.VisibilityTimeout).toBeGreaterThanOrEqual(
          Math.min(43_200, factor * (fn(name).Properties.Timeout as number)),
        );
      }
      // 6 x 900 s would bring a failed shard back 90 minutes later, into a finalised run.
      expect(byName('Replay').Properties.VisibilityTimeout).toBe((fn('Fire').Properties.Timeout as number) + 60);
      for (const q of resources('AWS::SQS::Queue')) expect(q.Properties.SqsManagedSseEnabled).toBe(true);
      // The plumbing's five, and the runs' two (lost requests, late runs: lib/run-alarms.ts).
      expect(resources('AWS::CloudWatch::Alarm')).toHaveLength(7);
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Threshold: 1,
      });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'ApproximateAgeOfOldestMessage',
        Threshold: 900 + sizing.timeoutSeconds + 120,
      });
    },
  );

  it(
    "runs the fire function with a young generation of 4 MB semi-spaces and the old space Lambda's bootstrap " +
      'would give its memory (NODE_OPTIONS, which Node accepts and sizes the heap by), the others with source maps only',
    () => {
      const nodeOptions = (name: string) =>
        (fn(name).Properties.Environment as { Variables: Record<string, string> }).Variables.NODE_OPTIONS;
      const memoryMb = fn('Fire').Properties.MemorySize as number;
      const oldSpaceMb = lambdaBootstrapHeap(memoryMb).oldSpaceMb;
      expect(nodeOptions('Fire')).toBe(
        `--enable-source-maps --max-semi-space-size=4 --max-old-space-size=${oldSpaceMb}`,
      );
      expect(nodeOptions('Ingest')).toBe('--enable-source-maps');
      expect(nodeOptions('Collect')).toBe('--enable-source-maps');
      // Node refuses a flag it does not allow in NODE_OPTIONS; the new space is two semi-spaces,
      // and the heap's limit is the old space and the young generation.
      const run = spawnSync(
        process.execPath,
        [
          '-e',
          "const v8 = require('v8'); console.log(JSON.stringify({ newSpace: v8.getHeapSpaceStatistics()" +
            ".find((s) => s.space_name === 'new_space').space_size, limit: v8.getHeapStatistics().heap_size_limit }))",
        ],
        { env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: nodeOptions('Fire') }, encoding: 'utf8' },
      );
      expect(run.stderr).toBe('');
      const heap = JSON.parse(run.stdout) as { newSpace: number; limit: number };
      const MB = 1024 * 1024;
      expect(heap.newSpace).toBeLessThanOrEqual(2 * 4 * MB);
      expect(heap.limit).toBeGreaterThanOrEqual(oldSpaceMb * MB);
      expect(heap.limit).toBeLessThanOrEqual((oldSpaceMb + 3 * 4) * MB);
    },
  );

  it(
    "tells the ingest the fire event source's concurrency, and alarms when a run is expected late (its " +
      'ExpectedLatenessSeconds metric above 0, by stack)',
    () => {
      const fireSource = resources('AWS::Lambda::EventSourceMapping').find((m) =>
        JSON.stringify(m.Properties.EventSourceArn).includes('StatefulReplayQueue'),
      )!;
      const maximum = (fireSource.Properties.ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency;
      const env = (fn('Ingest').Properties.Environment as { Variables: Record<string, string> }).Variables;
      expect(env).toMatchObject({
        [ENV.fireConcurrency]: String(maximum),
        [ENV.fireConcurrencySetting]: 'peakRequestsPerSecond',
        [ENV.stackName]: stack.stackName,
      });
      expect(maximum).toBe(sizing.maxConcurrency);
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: DEFAULT_METRICS_NAMESPACE,
        MetricName: 'ExpectedLatenessSeconds',
        Dimensions: [{ Name: 'Stack', Value: stack.stackName }],
        Statistic: 'Maximum',
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
      });
      // A concurrency set by hand is the setting to raise.
      const capped = Template.fromStack(
        new CaptureReplayStack(templateApp(), 'Capped', {
          config: parseDeploymentConfig({ ...config, maxFireConcurrency: 7 }),
        }),
      );
      const ingest = Object.entries(capped.findResources('AWS::Lambda::Function')).find(([id]) =>
        id.startsWith('StatelessIngest'),
      )![1] as { Properties: { Environment: { Variables: Record<string, string> } } };
      expect(ingest.Properties.Environment.Variables).toMatchObject({
        [ENV.fireConcurrency]: '7',
        [ENV.fireConcurrencySetting]: 'maxFireConcurrency',
        [ENV.stackName]: 'Capped',
      });
    },
  );

  it(
    'grants each function exactly the actions its handler calls: no deletes, retention, tagging or queue reads ' +
      'beyond its event source',
    () => {
      const byFn = (name: string) =>
        resources('AWS::IAM::Policy')
          .filter((p) => JSON.stringify(p.Properties.Roles).includes(`Stateless${name}ServiceRole`))
          .flatMap(
            (p) =>
              (
                p.Properties.PolicyDocument as {
                  Statement: { Action: string | string[]; Resource: unknown; Condition?: unknown }[];
                }
              ).Statement,
          );
      const actions = (name: string) => new Set(byFn(name).flatMap((st) => ([] as string[]).concat(st.Action)));
      const eventSource = [
        'sqs:ReceiveMessage',
        'sqs:ChangeMessageVisibility',
        'sqs:GetQueueUrl',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
      ];
      expect([...actions('Ingest')].sort()).toEqual(
        ['s3:GetObject', 's3:ListBucket', 's3:PutObject', 'sqs:SendMessage', ...eventSource].sort(),
      );
      expect([...actions('Fire')].sort()).toEqual(
        [
          's3:GetObject',
          's3:ListBucket',
          's3:PutObject',
          'secretsmanager:GetSecretValue',
          'sqs:SendMessage',
          ...eventSource,
        ].sort(),
      );
      expect([...actions('Collect')].sort()).toEqual(
        ['s3:GetObject', 's3:ListBucket', 's3:PutObject', 'sqs:SendMessage', ...eventSource].sort(),
      );
      // The fire function writes only working files; results are the collector's.
      const firePuts = byFn('Fire').filter((st) => ([] as string[]).concat(st.Action).includes('s3:PutObject'));
      expect(JSON.stringify(firePuts)).toContain('/work/*');
      expect(JSON.stringify(firePuts)).not.toContain('/runs/*');
      // A secret named without an ARN is matched with Secrets Manager's random suffix.
      expect(JSON.stringify(byFn('Fire'))).toContain(':secret:replay/key-a-??????');
    },
  );

  it("lets only the capture bucket, in its owner's account, send to the ingest queue", () => {
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 's3.amazonaws.com' },
            Action: 'sqs:SendMessage',
            Condition: {
              ArnLike: { 'aws:SourceArn': Match.anyValue() },
              StringEquals: { 'aws:SourceAccount': Match.anyValue() },
            },
          }),
        ]),
      },
    });
  });

  it('expires working files (claims, shard results, bodies with prompts) and keeps results by default', () => {
    const bucket = resources('AWS::S3::Bucket').find((b) =>
      JSON.stringify(b.Properties.LifecycleConfiguration ?? '').includes('WorkingFiles'),
    )!;
    const rules = (
      bucket.Properties.LifecycleConfiguration as { Rules: { Id: string; Prefix: string; ExpirationInDays?: number }[] }
    ).Rules;
    expect(rules.find((r) => r.Id === 'WorkingFiles')).toMatchObject({ Prefix: 'work/', ExpirationInDays: 7 });
    expect(
      rules.filter((r) => r.Prefix === 'runs/' || r.Prefix === 'hours/').every((r) => r.ExpirationInDays === undefined),
    ).toBe(true);
  });

  it('denies non-TLS access to every queue and bucket it owns, and blocks public access', () => {
    const denyInsecure = Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } });
    expect(resources('AWS::SQS::QueuePolicy').length).toBeGreaterThanOrEqual(6);
    for (const p of resources('AWS::SQS::QueuePolicy'))
      expect(JSON.stringify(p.Properties.PolicyDocument)).toContain('aws:SecureTransport');
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: { Statement: Match.arrayWith([denyInsecure]) },
    });
    for (const b of resources('AWS::S3::Bucket')) {
      expect(b.Properties.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(b.Properties.BucketEncryption).toBeDefined();
    }
    for (const p of resources('AWS::S3::BucketPolicy'))
      expect(JSON.stringify(p.Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
  });

  it('reads captures only, and only under the prefix', () => {
    const policies = resources('AWS::IAM::Policy').map((p) => JSON.stringify(p.Properties.PolicyDocument));
    const captureStatements = policies.join('').match(/my-capture-bucket[^"]*"/g) ?? [];
    expect(captureStatements.length).toBeGreaterThan(0);
    const ingest = policies.find((p) => p.includes('my-capture-bucket/datacapture/llm/*'));
    expect(ingest).toBeDefined();
    // No write or delete action anywhere on the capture bucket.
    for (const policy of resources('AWS::IAM::Policy')) {
      for (const st of (
        policy.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }
      ).Statement) {
        if (!JSON.stringify(st.Resource).includes('my-capture-bucket')) continue;
        const actions = ([] as string[]).concat(st.Action);
        expect(actions.filter((a) => /Put|Delete|Abort/.test(a) && !a.includes('BucketNotification'))).toEqual([]);
      }
    }
  });

  it('runs Node.js 22 on arm64, with log retention, and grants the API key secret to the fire function only', () => {
    const fns = resources('AWS::Lambda::Function').filter(
      (f) => f.Properties.Runtime !== undefined && String(f.Properties.Runtime).startsWith('nodejs'),
    );
    // ingest, fire, collect and the capture bucket check.
    expect(
      fns.filter(
        (f) => f.Properties.Runtime === 'nodejs22.x' && JSON.stringify(f.Properties.Architectures) === '["arm64"]',
      ),
    ).toHaveLength(4);
    for (const g of resources('AWS::Logs::LogGroup')) expect(g.Properties.RetentionInDays).toBe(30);
    const secretReaders = resources('AWS::IAM::Policy').filter((p) =>
      JSON.stringify(p.Properties.PolicyDocument).includes('secretsmanager:GetSecretValue'),
    );
    expect(secretReaders).toHaveLength(1);
    expect(JSON.stringify(secretReaders[0]!.Properties.Roles)).toContain('StatelessFire');
  });

  it('sets no physical names', () => {
    for (const b of resources('AWS::S3::Bucket')) expect(b.Properties.BucketName).toBeUndefined();
    for (const q of resources('AWS::SQS::Queue')) expect(q.Properties.QueueName).toBeUndefined();
    for (const f of resources('AWS::Lambda::Function')) expect(f.Properties.FunctionName).toBeUndefined();
  });

  it('passes cdk-nag AwsSolutions with no unsuppressed error or warning', () => {
    const findings = [
      ...Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
      ...Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')),
    ];
    expect(findings.map((f) => `${f.id}: ${String(f.entry.data).slice(0, 120)}`)).toEqual([]);
  }, 120_000); // cdk-nag's first pass over a stack: tens of seconds on a busy machine
});

describe('deployment configuration', () => {
  it('reports every problem at once', () => {
    expect(() => parseDeploymentConfig({ captureBucket: 'Not_A_Bucket', targets: [], leadSeconds: 1 })).toThrow(
      /captureBucket[\s\S]*targets[\s\S]*leadSeconds/,
    );
  });

  const problems = (raw: unknown): string[] => {
    try {
      parseDeploymentConfig(raw);
    } catch (error) {
      expect(error).toBeInstanceOf(DeploymentConfigError);
      return (error as Error).message.split('\n').slice(1);
    }
    throw new Error('expected the configuration to be refused');
  };

  it('refuses misspelled keys at every level, naming the key meant, all at once', () => {
    expect(
      problems({
        ...config,
        leadSecond: 30,
        capturebucket: 'b',
        targets: [
          { name: 'A', url: 'https://a.example.com', apiKeySecrt: 'k' },
          { name: 'B', kind: 'sagemaker', endpointName: 'ep', regoin: 'us-east-1' },
        ],
        vpc: { vpcId: 'vpc-1', subnetId: ['s'], subnetIds: ['s'], securityGroupIds: ['g'], availabilityZones: ['a'] },
        colour: 'blue',
      }),
    ).toEqual([
      '- captureReplay.targets.0.apiKeySecrt: unknown setting; did you mean `apiKeySecret`?',
      '- captureReplay.targets.1.regoin: unknown setting; did you mean `region`?',
      '- captureReplay.vpc.subnetId: unknown setting; did you mean `subnetIds`?',
      '- captureReplay.leadSecond: unknown setting; did you mean `leadSeconds`?',
      '- captureReplay.capturebucket: unknown setting; did you mean `captureBucket`?',
      '- captureReplay.colour: unknown setting',
    ]);
  });

  it('takes only http(s) target URLs, without echoing them', () => {
    expect(problems({ ...config, targets: [{ name: 'A', url: 'ftp://user:secret@models.example.com/' }] })).toEqual([
      '- captureReplay.targets.0.url: url must start with http:// or https:// (got "ftp:")',
    ]);
    expect(problems({ ...config, targets: [{ name: 'A', url: 'localhost:8000' }] })).toEqual([
      '- captureReplay.targets.0.url: url must start with http:// or https:// (got "localhost:") (a host:port needs http:// in front)',
    ]);
    expect(problems({ ...config, targets: [{ name: 'A', url: 'not a url' }] })).toEqual([
      '- captureReplay.targets.0.url: url is not a URL (expected http://host:port or https://host/...)',
    ]);
    for (const url of ['http://10.0.0.5:8000', 'https://inference.example.com/base'])
      expect(() => parseDeploymentConfig({ ...config, targets: [{ name: 'A', url }] })).not.toThrow();
  });

  it('a third target does not hide what is wrong with the others', () => {
    expect(
      problems({
        ...config,
        targets: [
          { name: 'A', url: 'https://a' },
          { name: 'B', url: 'file:///etc/passwd' },
          { name: 'C', url: 'https://c' },
        ],
      }),
    ).toEqual([
      '- captureReplay.targets.1.url: url must start with http:// or https:// (got "file:")',
      '- captureReplay.targets: at most two targets (one, or two for A/B), got 3',
    ]);
  });

  it("keeps the configurations written before kinds and strictness valid (cdk.json, the README's examples)", () => {
    const cdkJson = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
      context: { captureReplay: unknown };
    };
    expect(() => parseDeploymentConfig(cdkJson.context.captureReplay)).not.toThrow();
    // The deployment example, in the README or the deploy page of docs/ it moved to.
    const pages = ['README.md', 'docs/deploy.md']
      .filter((f) => existsSync(join(REPO_ROOT, f)))
      .map((f) => readFileSync(join(REPO_ROOT, f), 'utf8'));
    const readmeExample = pages
      .map((text) => /```json\n("captureReplay": \{[\s\S]*?\n\})\n```/.exec(text)?.[1])
      .find((e) => e !== undefined);
    expect(readmeExample).toBeDefined();
    expect(() =>
      parseDeploymentConfig((JSON.parse(`{${readmeExample}}`) as { captureReplay: unknown }).captureReplay),
    ).not.toThrow();
    expect(() =>
      parseDeploymentConfig({
        captureBucket: 'my-captures',
        targets: [
          {
            name: 'A',
            url: 'https://a.example.com',
            path: '/v1/chat/completions',
            apiKeySecret: 'replay/key',
            apiKeySecretField: 'api_key',
          },
          { name: 'B', kind: 'sagemaker', endpointName: 'llm-g6e', variant: 'AllTraffic' },
        ],
        mode: 'mirror',
        lagSeconds: 900,
        vpc: { vpcId: 'vpc-1', subnetIds: ['s'], securityGroupIds: ['g'], availabilityZones: ['a'] },
      }),
    ).not.toThrow();
  });

  it('says when a context value or config file is not JSON', () => {
    expect(() => loadDeploymentConfig((key) => (key === 'captureReplay' ? '{"captureBucket": ' : undefined))).toThrow(
      DeploymentConfigError,
    );
    expect(() => loadDeploymentConfig((key) => (key === 'captureReplay' ? '{"captureBucket": ' : undefined))).toThrow(
      /^the captureReplay context value is not valid JSON: /,
    );
  });

  it("keeps a fire invocation within Lambda's 15 minutes", () => {
    expect(() => parseDeploymentConfig({ leadSeconds: 240, slotSeconds: 60, requestTimeoutSeconds: 600 })).toThrow(
      /900 s: at most 840 s/,
    );
    expect(() =>
      parseDeploymentConfig({ leadSeconds: 180, slotSeconds: 60, requestTimeoutSeconds: 600 }),
    ).not.toThrow();
  });

  it('defaults synthesize, and deploy-blocking placeholders are named', () => {
    expect(placeholdersIn(parseDeploymentConfig({}))).toEqual(['captureBucket', 'targets[].url']);
    expect(placeholdersIn(config)).toEqual([]);
    expect(template.toJSON().Rules?.ConfiguredBeforeDeploy).toBeUndefined(); // a configured stack carries no deploy guard
  });
});

describe('notifications by EventBridge', () => {
  const bridged = new CaptureReplayStack(templateApp(), 'Bridged', {
    config: parseDeploymentConfig({ ...config, notifications: 'eventbridge' }),
  });
  const t = Template.fromStack(bridged);

  it("routes Object Created events for .jsonl under the prefix to the ingest queue, and leaves the bucket's notifications alone", () => {
    expect(Object.keys(t.findResources('Custom::S3BucketNotifications'))).toEqual([]);
    t.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.s3'],
        'detail-type': ['Object Created'],
        detail: { bucket: { name: ['my-capture-bucket'] }, object: { key: [{ wildcard: 'datacapture/llm/*.jsonl' }] } },
      },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('StatefulIngestQueue'), 'Arn'] } })],
    });
  });
});

describe('KMS keys', () => {
  const arn = 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

  it('refuses an alias where a key ARN is needed', () => {
    expect(() =>
      parseDeploymentConfig({ ...config, captureKmsKeyArn: 'arn:aws:kms:us-east-1:123456789012:alias/captures' }),
    ).toThrow(/captureKmsKeyArn: a KMS key ARN/);
    expect(() =>
      parseDeploymentConfig({
        ...config,
        targets: [{ name: 'A', url: 'https://a.example.com', apiKeySecret: 's', apiKeySecretKmsKeyArn: 'alias/k' }],
      }),
    ).toThrow(/apiKeySecretKmsKeyArn/);
  });

  it('grants kms:Decrypt on the capture key to ingest through S3, and on the secret key to fire through Secrets Manager', () => {
    const keyed = Template.fromStack(
      new CaptureReplayStack(templateApp(), 'Keyed', {
        config: parseDeploymentConfig({
          ...config,
          captureKmsKeyArn: arn,
          targets: [
            {
              name: 'A',
              url: 'https://a.example.com',
              apiKeySecret: 'replay/key-a',
              apiKeySecretField: 'api_key',
              apiKeySecretKmsKeyArn: arn,
            },
          ],
        }),
      }),
    );
    const statements = Object.values(keyed.findResources('AWS::IAM::Policy')).map((p) => JSON.stringify(p));
    const ingest = statements.find((s) => s.includes('StatelessIngestServiceRole'))!;
    const fire = statements.find((s) => s.includes('StatelessFireServiceRole'))!;
    expect(ingest).toMatch(/"Action":"kms:Decrypt","Condition":\{"StringEquals":\{"kms:ViaService":\{[^}]*s3\./);
    expect(fire).toMatch(
      /"Action":"kms:Decrypt","Condition":\{"StringEquals":\{"kms:ViaService":\{[^}]*secretsmanager\./,
    );
  });
});
