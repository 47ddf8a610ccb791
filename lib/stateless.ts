import { Duration } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3n from 'aws-cdk-lib/aws-s3-notifications';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { ENV } from '../lambdas/runtime/config';
import type { DeploymentConfig } from './config';
import { ReplayFunction } from './replay-function';
import type { CaptureReplayStateful } from './stateful';

/** Function timeouts; the queues' visibility timeouts are derived from these (6x). */
export const FUNCTION_TIMEOUTS = {
  ingest: Duration.minutes(5),
  // Lead + a slot + the slowest response must fit: Lambda's maximum.
  fire: Duration.minutes(15),
  collect: Duration.minutes(5),
} as const;

export interface StatelessProps {
  config: DeploymentConfig;
  stateful: CaptureReplayStateful;
}

/**
 * Code and wiring, replaceable at will: the three functions, their SQS event sources (each
 * with partial batch responses), the capture bucket's notification, and least-privilege
 * grants (read-only on the capture prefix).
 */
export class CaptureReplayStateless extends Construct {
  public readonly ingestFunction: ReplayFunction;
  public readonly fireFunction: ReplayFunction;
  public readonly collectFunction: ReplayFunction;

  constructor(scope: Construct, id: string, props: StatelessProps) {
    super(scope, id);
    const { config, stateful } = props;
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

    this.ingestFunction = new ReplayFunction(this, 'Ingest', { handlerName: 'ingest', logRetention, environment, timeout: FUNCTION_TIMEOUTS.ingest, memorySize: 2048 });
    this.fireFunction = new ReplayFunction(this, 'Fire', { handlerName: 'fire', logRetention, environment, timeout: FUNCTION_TIMEOUTS.fire, ...vpc });
    this.collectFunction = new ReplayFunction(this, 'Collect', { handlerName: 'collect', logRetention, environment, timeout: FUNCTION_TIMEOUTS.collect, memorySize: 2048 });

    // Captures: read-only, and only under the prefix.
    const captures = s3.Bucket.fromBucketName(this, 'Captures', config.captureBucket);
    captures.grantRead(this.ingestFunction, `${config.capturePrefix}*`);
    if (config.captureKmsKeyArn) kms.Key.fromKeyArn(this, 'CaptureKey', config.captureKmsKeyArn).grantDecrypt(this.ingestFunction);
    captures.addEventNotification(s3.EventType.OBJECT_CREATED, new s3n.SqsDestination(stateful.ingest.queue), {
      ...(config.capturePrefix ? { prefix: config.capturePrefix } : {}),
      suffix: '.jsonl',
    });

    const results = stateful.resultsBucket;
    results.grantReadWrite(this.ingestFunction, 'runs/*');
    results.grantReadWrite(this.fireFunction, 'runs/*');
    results.grantReadWrite(this.collectFunction, 'runs/*');
    stateful.replay.queue.grantSendMessages(this.ingestFunction);
    stateful.replay.queue.grantSendMessages(this.fireFunction); // deferral hops
    stateful.collect.queue.grantSendMessages(this.ingestFunction);
    stateful.collect.queue.grantSendMessages(this.fireFunction);
    stateful.collect.queue.grantSendMessages(this.collectFunction); // deadline hops
    config.targets.forEach((t, i) => {
      if (!t.apiKeySecret) return;
      const secret = t.apiKeySecret.startsWith('arn:')
        ? secretsmanager.Secret.fromSecretCompleteArn(this, `ApiKey${i}`, t.apiKeySecret)
        : secretsmanager.Secret.fromSecretNameV2(this, `ApiKey${i}`, t.apiKeySecret);
      secret.grantRead(this.fireFunction);
    });

    this.ingestFunction.addEventSource(new SqsEventSource(stateful.ingest.queue, { batchSize: 5, reportBatchItemFailures: true, maxConcurrency: 10 }));
    this.fireFunction.addEventSource(new SqsEventSource(stateful.replay.queue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: config.maxFireConcurrency }));
    this.collectFunction.addEventSource(new SqsEventSource(stateful.collect.queue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: 5 }));
  }
}

function retention(days: number): logs.RetentionDays {
  const allowed = Object.values(logs.RetentionDays).filter((v): v is number => typeof v === 'number' && v > 0).sort((a, b) => a - b);
  return (allowed.find((d) => d >= days) ?? logs.RetentionDays.TEN_YEARS) as logs.RetentionDays;
}
