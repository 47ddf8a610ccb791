import { Aws, Duration, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { HOURS_ROOT, RESULTS_ROOT, WORK_ROOT } from '../lambdas/core/pipeline/keys';
import { ENV, type SageMakerTargetConfig } from '../lambdas/runtime/config';
import type { DeploymentConfig } from './config';
import { ReplayFunction } from './replay-function';
import type { FireSizing } from './sizing';
import type { CaptureReplayStateful } from './stateful';

/**
 * What invoking a SageMaker endpoint takes: InvokeEndpoint for a request answered whole,
 * InvokeEndpointWithResponseStream for a streamed one (a separate IAM action in the Service
 * Authorization Reference; its API reference also names sagemaker:InvokeEndpoint).
 * https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsagemaker.html
 */
export const SAGEMAKER_INVOKE_ACTIONS = ['sagemaker:InvokeEndpoint', 'sagemaker:InvokeEndpointWithResponseStream'] as const;

/**
 * The ARNs a SageMaker target invokes: `arn:<partition>:sagemaker:<region>:<account>:endpoint/<name>`,
 * the name lower-cased as SageMaker writes it in ARNs (IAM compares ARNs case-sensitively, and
 * CreateEndpoint takes names case-insensitively). With an inference component, its ARN too
 * (`inference-component/<name>`), lower-cased and as written when they differ: the reference
 * does not say how its case is kept, and both name the same component.
 */
export function sageMakerTargetArns(t: Pick<SageMakerTargetConfig, 'endpointName' | 'inferenceComponentName'>, region: string): string[] {
  const arn = (type: string, name: string) => `arn:${Aws.PARTITION}:sagemaker:${region}:${Aws.ACCOUNT_ID}:${type}/${name}`;
  const arns = [arn('endpoint', t.endpointName.toLowerCase())];
  const component = t.inferenceComponentName;
  if (component) arns.push(...[...new Set([component.toLowerCase(), component])].map((name) => arn('inference-component', name)));
  return arns;
}

/** Function timeouts of ingest and collect; fire's is derived from the config (lib/sizing.ts). */
export const FUNCTION_TIMEOUTS = {
  ingest: Duration.minutes(15),
  collect: Duration.minutes(5),
} as const;

export interface StatelessProps {
  config: DeploymentConfig;
  stateful: CaptureReplayStateful;
  sizing: FireSizing;
}

/**
 * S3 -> SQS notification whose queue policy names both the bucket (aws:SourceArn) and its
 * owner (aws:SourceAccount): a bucket name can be deleted and recreated by another account,
 * and the account condition stops that bucket from sending us events.
 */
class QueueDestination implements s3.IBucketNotificationDestination {
  constructor(
    private readonly queue: sqs.IQueue,
    private readonly sourceAccount: string,
  ) {}

  bind(_scope: Construct, bucket: s3.IBucket): s3.BucketNotificationDestinationConfig {
    this.queue.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('s3.amazonaws.com')],
        actions: ['sqs:SendMessage'],
        resources: [this.queue.queueArn],
        conditions: { ArnLike: { 'aws:SourceArn': bucket.bucketArn }, StringEquals: { 'aws:SourceAccount': this.sourceAccount } },
      }),
    );
    return { arn: this.queue.queueArn, type: s3.BucketNotificationDestinationType.QUEUE, dependencies: [this.queue] };
  }
}

/**
 * Code and wiring, replaceable at will: the three functions, their SQS event sources (each
 * with partial batch responses), the capture notification (S3 or EventBridge), and IAM
 * exactly as the handlers need it: each action each function calls, on its resources only.
 */
export class CaptureReplayStateless extends Construct {
  public readonly ingestFunction: ReplayFunction;
  public readonly fireFunction: ReplayFunction;
  public readonly collectFunction: ReplayFunction;
  public readonly captureRule?: events.Rule;

  constructor(scope: Construct, id: string, props: StatelessProps) {
    super(scope, id);
    const { config, stateful, sizing } = props;
    const logRetention = retention(config.logRetentionDays);
    const environment: Record<string, string> = {
      [ENV.resultsBucket]: stateful.resultsBucket.bucketName,
      [ENV.replayQueueUrl]: stateful.replay.queue.queueUrl,
      [ENV.collectQueueUrl]: stateful.collect.queue.queueUrl,
      [ENV.targets]: JSON.stringify(config.targets),
      [ENV.mode]: config.mode,
      [ENV.lagMs]: String(config.lagSeconds * 1000),
      [ENV.leadMs]: String(config.leadSeconds * 1000),
      [ENV.graceMs]: String(config.graceSeconds * 1000),
      [ENV.slotMs]: String(Math.round(config.slotSeconds * 1000)),
      [ENV.maxShardRequests]: String(sizing.maxShardRequests),
      [ENV.maxConnectionsPerTarget]: String(sizing.connectionsPerTarget),
      [ENV.fireTimeoutMs]: String(sizing.timeoutSeconds * 1000),
      [ENV.timeScale]: String(config.timeScale),
      [ENV.intraSecond]: config.intraSecond,
      [ENV.forceStreaming]: String(config.forceStreaming),
      [ENV.requestTimeoutMs]: String(config.requestTimeoutSeconds * 1000),
      [ENV.lateToleranceMs]: String(config.lateToleranceMs),
      [ENV.latePolicy]: config.latePolicy,
      ...(config.modelOverride ? { [ENV.modelOverride]: config.modelOverride } : {}),
      ...(config.maxInFlightPerShard ? { [ENV.maxInFlight]: String(config.maxInFlightPerShard) } : {}),
    };

    const vpc = config.vpc
      ? {
          vpc: ec2.Vpc.fromVpcAttributes(this, 'Vpc', { vpcId: config.vpc.vpcId, availabilityZones: config.vpc.availabilityZones }),
          vpcSubnets: { subnets: config.vpc.subnetIds.map((s, i) => ec2.Subnet.fromSubnetId(this, `Subnet${i}`, s)) },
          securityGroups: config.vpc.securityGroupIds.map((g, i) => ec2.SecurityGroup.fromSecurityGroupId(this, `Sg${i}`, g)),
        }
      : {};

    const maxConcurrency = config.maxFireConcurrency ?? sizing.maxConcurrency;
    // A 1 GB capture file is read twice (index, then ranges) inside 15 minutes; the index of
    // 500,000 records is ~250 MB (bench/RESULTS.md).
    this.ingestFunction = new ReplayFunction(this, 'Ingest', { handlerName: 'ingest', logRetention, environment, timeout: FUNCTION_TIMEOUTS.ingest, memorySize: 3008 });
    this.fireFunction = new ReplayFunction(this, 'Fire', {
      handlerName: 'fire',
      logRetention,
      environment,
      timeout: Duration.seconds(sizing.timeoutSeconds),
      memorySize: sizing.memoryMb,
      ...(config.reserveFireConcurrency ? { reservedConcurrentExecutions: maxConcurrency } : {}),
      ...vpc,
    });
    this.collectFunction = new ReplayFunction(this, 'Collect', { handlerName: 'collect', logRetention, environment, timeout: FUNCTION_TIMEOUTS.collect, memorySize: 2048 });

    // ---- IAM: every call each handler makes, on exactly its resources ----
    const bucketArn = stateful.resultsBucket.bucketArn;
    const objects = (...prefixes: string[]) => prefixes.map((p) => `${bucketArn}/${p}*`);
    const allow = (fn: ReplayFunction, actions: string[], resources: string[], conditions?: Record<string, unknown>) =>
      fn.addToRolePolicy(new iam.PolicyStatement({ actions, resources, ...(conditions ? { conditions } : {}) }));
    // Without s3:ListBucket, S3 answers a GET of a missing key with 403, not 404: every
    // existence check (run record, start, claims' results, roll-up state) needs it. It is
    // not conditioned on s3:prefix: S3's implicit check for the 404 has no prefix to match.
    for (const fn of [this.ingestFunction, this.fireFunction, this.collectFunction]) allow(fn, ['s3:ListBucket'], [bucketArn]);
    // ingest: the ingest report under runs/; run record, start, bodies, incompatible drops under work/.
    allow(this.ingestFunction, ['s3:GetObject', 's3:PutObject'], objects(WORK_ROOT, RESULTS_ROOT));
    // fire: reads run state and bodies, writes claims and shard results: work/ only.
    allow(this.fireFunction, ['s3:GetObject', 's3:PutObject'], objects(WORK_ROOT));
    // collect: reads work/ and the hour's roll-up state, writes artifacts under runs/ (and interim/), roll-ups under hours/.
    allow(this.collectFunction, ['s3:GetObject'], objects(WORK_ROOT, HOURS_ROOT));
    allow(this.collectFunction, ['s3:PutObject'], objects(RESULTS_ROOT, HOURS_ROOT));
    // SQS: SendMessageBatch is authorized as sqs:SendMessage. The event sources' receive and
    // delete are the Lambda service's, granted by addEventSource below.
    allow(this.ingestFunction, ['sqs:SendMessage'], [stateful.replay.queue.queueArn, stateful.collect.queue.queueArn]);
    allow(this.fireFunction, ['sqs:SendMessage'], [stateful.replay.queue.queueArn, stateful.collect.queue.queueArn]); // deferral hops, last-shard collect
    allow(this.collectFunction, ['sqs:SendMessage'], [stateful.collect.queue.queueArn]); // deadline hops

    // Captures: GetObject under the prefix (ranged reads included), nothing else.
    const captureBucketArn = `arn:${Aws.PARTITION}:s3:::${config.captureBucket}`;
    allow(this.ingestFunction, ['s3:GetObject'], [`${captureBucketArn}/${config.capturePrefix}*`]);
    const region = Stack.of(this).region;
    if (config.captureKmsKeyArn) {
      // SSE-KMS captures: S3 decrypts with the caller's permission on the key, through S3 only.
      allow(this.ingestFunction, ['kms:Decrypt'], [config.captureKmsKeyArn], { StringEquals: { 'kms:ViaService': `s3.${region}.amazonaws.com` } });
    }
    config.targets.forEach((t) => {
      if (t.kind === 'sagemaker') {
        // The runtime API on this endpoint only (and, when the target names one, its inference
        // component: the Service Authorization Reference lists inference-component as a resource
        // type of both actions). No wildcard, no other endpoint.
        allow(this.fireFunction, [...SAGEMAKER_INVOKE_ACTIONS], sageMakerTargetArns(t, t.region ?? region));
        return;
      }
      if (!t.apiKeySecret) return;
      // A name gets the 6-character suffix Secrets Manager appends to every secret's ARN.
      const secretArn = t.apiKeySecret.startsWith('arn:') ? t.apiKeySecret : `arn:${Aws.PARTITION}:secretsmanager:${region}:${Aws.ACCOUNT_ID}:secret:${t.apiKeySecret}-??????`;
      allow(this.fireFunction, ['secretsmanager:GetSecretValue'], [secretArn]);
      if (t.apiKeySecretKmsKeyArn) {
        allow(this.fireFunction, ['kms:Decrypt'], [t.apiKeySecretKmsKeyArn], { StringEquals: { 'kms:ViaService': `secretsmanager.${region}.amazonaws.com` } });
      }
    });

    // ---- How new capture files reach the ingest queue ----
    const sourceAccount = config.captureBucketAccount ?? Aws.ACCOUNT_ID;
    if (config.notifications === 's3') {
      const captures = s3.Bucket.fromBucketName(this, 'Captures', config.captureBucket);
      captures.addEventNotification(s3.EventType.OBJECT_CREATED, new QueueDestination(stateful.ingest.queue, sourceAccount), {
        ...(config.capturePrefix ? { prefix: config.capturePrefix } : {}),
        suffix: '.jsonl',
      });
    } else {
      this.captureRule = new events.Rule(this, 'CaptureObjectCreated', {
        description: 'capture-replay: new Data Capture files (EventBridge notifications must be on for the bucket)',
        eventPattern: {
          source: ['aws.s3'],
          detailType: ['Object Created'],
          account: [sourceAccount],
          detail: { bucket: { name: [config.captureBucket] }, object: { key: [{ wildcard: `${config.capturePrefix}*.jsonl` }] } },
        },
      });
      this.captureRule.addTarget(new eventTargets.SqsQueue(stateful.ingest.queue, { deadLetterQueue: stateful.ingest.dlq, retryAttempts: 8 }));
    }

    this.ingestFunction.addEventSource(new SqsEventSource(stateful.ingest.queue, { batchSize: 1, reportBatchItemFailures: true, maxConcurrency: 10 }));
    this.fireFunction.addEventSource(new SqsEventSource(stateful.replay.queue, { batchSize: sizing.batchSize, reportBatchItemFailures: true, maxConcurrency }));
    this.collectFunction.addEventSource(new SqsEventSource(stateful.collect.queue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: 5 }));
  }
}

function retention(days: number): logs.RetentionDays {
  const allowed = Object.values(logs.RetentionDays).filter((v): v is number => typeof v === 'number' && v > 0).sort((a, b) => a - b);
  return (allowed.find((d) => d >= days) ?? logs.RetentionDays.TEN_YEARS) as logs.RetentionDays;
}
