/**
 * How new capture files reach the ingest queue: an S3 event notification on the bucket, or an
 * EventBridge rule on "Object Created" events; for a bucket in another account, a bus of this
 * stack that the bucket's owner forwards those events to. Each depends on the capture bucket
 * check, so a bucket in another Region fails the deploy before anything is created.
 *
 * Constructs are created in the caller's scope with the ids they always had, so an existing
 * stack's notification and rule keep their logical ids.
 */
import { Aws, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct, IDependable } from 'constructs';
import type { DeploymentConfig } from './config';

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
        conditions: {
          ArnLike: { 'aws:SourceArn': bucket.bucketArn },
          StringEquals: { 'aws:SourceAccount': this.sourceAccount },
        },
      }),
    );
    return { arn: this.queue.queueArn, type: s3.BucketNotificationDestinationType.QUEUE, dependencies: [this.queue] };
  }
}

export interface CaptureSourceProps {
  config: Pick<DeploymentConfig, 'captureBucket' | 'capturePrefix' | 'captureBucketAccount' | 'notifications'>;
  ingest: { queue: sqs.IQueue; dlq: sqs.IQueue };
  /** The bucket belongs to another account than the stack's (known at synth). */
  crossAccount: boolean;
  /** The capture bucket check: created before the notification or rule. */
  check: IDependable;
}

export interface CaptureSource {
  rule?: events.Rule;
  /** The bus the owner of another account's bucket forwards its events to. */
  bus?: events.EventBus;
  /** What that owner adds in their account: the rule on their default bus, its target and role policy. */
  ownerRule?: Record<string, unknown>;
}

/** S3's "Object Created" events of the capture bucket under the prefix, as an EventBridge pattern's detail. */
function objectCreatedDetail(bucket: string, keyFilter: Record<string, string>[] | undefined): Record<string, unknown> {
  return { bucket: { name: [bucket] }, ...(keyFilter ? { object: { key: keyFilter } } : {}) };
}

export function wireCaptureSource(scope: Construct, props: CaptureSourceProps): CaptureSource {
  const { config, ingest } = props;
  const sourceAccount = config.captureBucketAccount ?? Aws.ACCOUNT_ID;
  if (config.notifications === 's3') {
    // Never another account's bucket: the configuration refuses it (lib/placement.ts).
    const captures = s3.Bucket.fromBucketName(scope, 'Captures', config.captureBucket);
    captures.addEventNotification(s3.EventType.OBJECT_CREATED, new QueueDestination(ingest.queue, sourceAccount), {
      ...(config.capturePrefix ? { prefix: config.capturePrefix } : {}),
      suffix: '.jsonl',
    });
    captures.node.findChild('Notifications').node.addDependency(props.check);
    return {};
  }
  const bus = props.crossAccount ? receivingBus(scope, config.captureBucketAccount as string) : undefined;
  const rule = new events.Rule(scope, 'CaptureObjectCreated', {
    description: props.crossAccount
      ? `capture-replay: new Data Capture files, forwarded by account ${config.captureBucketAccount} (its rule ` +
        `is the CaptureOwnerEventRule output)`
      : 'capture-replay: new Data Capture files (EventBridge notifications must be on for the bucket)',
    ...(bus ? { eventBus: bus } : {}),
    eventPattern: {
      source: ['aws.s3'],
      detailType: ['Object Created'],
      // The bucket owner's, forwarded or not: the receiver's rules "match events that come from
      // the sender account" (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-cross-account.html).
      account: [sourceAccount],
      detail: objectCreatedDetail(config.captureBucket, [{ wildcard: `${config.capturePrefix}*.jsonl` }]),
    },
  });
  rule.addTarget(new eventTargets.SqsQueue(ingest.queue, { deadLetterQueue: ingest.dlq, retryAttempts: 8 }));
  rule.node.addDependency(props.check);
  if (!bus) return { rule };
  return { rule, bus, ownerRule: ownerRule(config, bus) };
}

/**
 * A bus of this stack that the bucket's owner may send S3 "Object Created" events to, and
 * nothing else: the owner account as principal, conditioned on the events' source and
 * detail-type, as EventBridge's example for a custom bus in another account:
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-bus-example-policy-cross-account-custom-bus-source.html
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-cross-account.html
 */
function receivingBus(scope: Construct, owner: string): events.EventBus {
  // Named after the stack, so its policy can name it without referring to the bus it is part of.
  const name = `${Stack.of(scope).stackName}-capture-events`;
  const bus = new events.EventBus(scope, 'CaptureEvents', {
    eventBusName: name,
    description: `capture-replay: S3 Object Created events forwarded by account ${owner}`,
  });
  const statement = new iam.PolicyStatement({
    sid: 'CaptureBucketOwnerForwards',
    principals: [new iam.AccountPrincipal(owner)],
    actions: ['events:PutEvents'],
    resources: [`arn:${Aws.PARTITION}:events:${Aws.REGION}:${Aws.ACCOUNT_ID}:event-bus/${name}`],
    conditions: {
      'ForAllValues:StringEquals': { 'events:source': ['aws.s3'] },
      StringEquals: { 'events:detail-type': 'Object Created' },
    },
  });
  // The bus's own Policy property (not a separate AWS::Events::EventBusPolicy): removed with the bus.
  (bus.node.defaultChild as events.CfnEventBus).policy = new iam.PolicyDocument({ statements: [statement] }).toJSON();
  return bus;
}

/**
 * The rule the bucket's owner adds on their default bus (where S3 sends the bucket's events,
 * once EventBridge notifications are on for it), targeting this stack's bus with a role of
 * theirs that may put events on it: EventBridge recommends a role whenever a rule's target is
 * an event bus (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-bus-perms.html).
 */
function ownerRule(config: CaptureSourceProps['config'], bus: events.EventBus): Record<string, unknown> {
  return {
    eventBusName: 'default',
    eventPattern: {
      source: ['aws.s3'],
      'detail-type': ['Object Created'],
      detail: objectCreatedDetail(
        config.captureBucket,
        config.capturePrefix ? [{ prefix: config.capturePrefix }] : undefined,
      ),
    },
    targetArn: bus.eventBusArn,
    roleTrustedService: 'events.amazonaws.com',
    rolePolicy: {
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: 'events:PutEvents', Resource: bus.eventBusArn }],
    },
  };
}

/**
 * The bucket policy statements the owner of another account's capture bucket adds, so the
 * functions can read the captures: GetObject under the prefix for the ingest and plan roles,
 * and, for the plan role, listings under the prefix (as its own role policy, lib/stateless.ts).
 * Cross-account access needs both the role's policy and the bucket's:
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/example-walkthroughs-managing-access-example2.html
 */
export function ownerBucketPolicyStatements(
  config: Pick<DeploymentConfig, 'captureBucket' | 'capturePrefix'>,
  roles: { ingest: iam.IRole; plan?: iam.IRole },
): Record<string, unknown>[] {
  const bucketArn = `arn:${Aws.PARTITION}:s3:::${config.captureBucket}`;
  const readers = [roles.ingest, ...(roles.plan ? [roles.plan] : [])].map((r) => r.roleArn);
  const statements: Record<string, unknown>[] = [
    {
      Sid: 'CaptureReplayReadCaptures',
      Effect: 'Allow',
      Principal: { AWS: readers },
      Action: 's3:GetObject',
      Resource: `${bucketArn}/${config.capturePrefix}*`,
    },
  ];
  if (roles.plan) {
    statements.push({
      Sid: 'CaptureReplayListCaptures',
      Effect: 'Allow',
      Principal: { AWS: roles.plan.roleArn },
      Action: 's3:ListBucket',
      Resource: bucketArn,
      ...(config.capturePrefix ? { Condition: { StringLike: { 's3:prefix': `${config.capturePrefix}*` } } } : {}),
    });
  }
  return statements;
}
