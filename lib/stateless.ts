import { Aws, Duration, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { createHash } from 'node:crypto';
import { HOURS_ROOT, RESULTS_ROOT, WORK_ROOT } from '../lambdas/core/pipeline/keys';
import { SCHEDULES_ROOT, type PlanMessage } from '../lambdas/core/scheduled-runs/contract';
import { fireNodeOptions } from '../lambdas/adapters/lane-heap';
import { ENV, type SageMakerTargetConfig } from '../lambdas/runtime/config';
import { CaptureBucketCheck } from './capture-bucket-check';
import { wireCaptureSource, type CaptureSource } from './capture-source';
import type { DeploymentConfig } from './config';
import { autoReplayTargets } from './deployment-rules';
import { replaysNewCaptures } from './placement';
import { ReplayFunction } from './replay-function';
import type { FireSizing } from './sizing';
import {
  COLLECT_BATCHING_WINDOW_SECONDS,
  EVENT_SOURCE_BATCH_SIZE,
  EVENT_SOURCE_CONCURRENCY,
  FUNCTION_MEMORY_MB,
  FUNCTION_TIMEOUT_SECONDS,
} from './stack-constants';
import type { CaptureReplayStateful } from './stateful';

/**
 * What invoking a SageMaker endpoint takes: InvokeEndpoint for a request answered whole,
 * InvokeEndpointWithResponseStream for a streamed one (a separate IAM action in the Service
 * Authorization Reference; its API reference also names sagemaker:InvokeEndpoint).
 * https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsagemaker.html
 */
export const SAGEMAKER_INVOKE_ACTIONS = [
  'sagemaker:InvokeEndpoint',
  'sagemaker:InvokeEndpointWithResponseStream',
] as const;

/**
 * The ARNs a SageMaker target invokes: `arn:<partition>:sagemaker:<region>:<account>:endpoint/<name>`,
 * the name lower-cased as SageMaker writes it in ARNs (IAM compares ARNs case-sensitively, and
 * CreateEndpoint takes names case-insensitively). With an inference component, its ARN too
 * (`inference-component/<name>`), lower-cased and as written when they differ: the reference
 * does not say how its case is kept, and both name the same component.
 */
export function sageMakerTargetArns(
  t: Pick<SageMakerTargetConfig, 'endpointName' | 'inferenceComponentName'>,
  region: string,
): string[] {
  const arn = (type: string, name: string) =>
    `arn:${Aws.PARTITION}:sagemaker:${region}:${Aws.ACCOUNT_ID}:${type}/${name}`;
  const arns = [arn('endpoint', t.endpointName.toLowerCase())];
  const component = t.inferenceComponentName;
  if (component)
    arns.push(...[...new Set([component.toLowerCase(), component])].map((name) => arn('inference-component', name)));
  return arns;
}

/**
 * How EventBridge Scheduler retries sending a plan message to the plan queue before it puts
 * it in the scheduler dead-letter queue. A send to SQS fails only on throttling, an outage
 * or a broken permission: 20 attempts with the Scheduler's backoff cover a regional blip of
 * minutes, and an hour bounds how late a run may start (its window is taken from the
 * scheduled time, not the delivery's, so a late run still replays the same traffic; beyond an
 * hour it would start to overlap an hourly schedule's next run, and a person should look).
 * The Scheduler's defaults, its maxima, are 185 attempts over 24 hours.
 * https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html
 */
export const SCHEDULE_RETRY = { MaximumRetryAttempts: 20, MaximumEventAgeInSeconds: 3600 } as const;

/** EventBridge Scheduler's schedule names: at most 64 of letters, digits, `.`, `_`, `-`. */
const SCHEDULE_NAME_MAX = 64;

/**
 * The schedule's name in EventBridge Scheduler: `<stack>-<schedule>`, unique per stack (the
 * schedules share the account's default group). Too long, it keeps its start and ends with
 * 8 hex digits of a hash of the whole, so two long names stay apart.
 */
export function scheduleResourceName(stackName: string, schedule: string): string {
  const full = `${stackName}-${schedule}`;
  if (full.length <= SCHEDULE_NAME_MAX) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, SCHEDULE_NAME_MAX - 9)}-${hash}`;
}

/**
 * The target input of a schedule: the plan message, with EventBridge Scheduler's
 * `<aws.scheduler.scheduled-time>` keyword, which it replaces in the payload at each
 * invocation with the time the schedule was due (ISO 8601 UTC, e.g. 2022-03-22T18:59:43Z).
 * https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-context-attributes.html
 */
export function planMessageInput(schedule: string): string {
  const message: PlanMessage = { v: 1, kind: 'window', schedule, scheduledTime: '<aws.scheduler.scheduled-time>' };
  return JSON.stringify(message);
}

export interface StatelessProps {
  config: DeploymentConfig;
  stateful: CaptureReplayStateful;
  sizing: FireSizing;
  /** The capture bucket belongs to another account than the stack's (known at synth). */
  crossAccount: boolean;
  /** captureBucketAccount, when synth could not compare it with the stack's account: the deploy checks it. */
  uncheckedAccount?: string;
}

/** What every function is told of the deployment: its buckets, queues, targets and timing. */
function functionEnvironment(
  config: DeploymentConfig,
  stateful: CaptureReplayStateful,
  sizing: FireSizing,
): Record<string, string> {
  return {
    [ENV.resultsBucket]: stateful.resultsBucket.bucketName,
    [ENV.replayQueueUrl]: stateful.replay.queue.queueUrl,
    [ENV.collectQueueUrl]: stateful.collect.queue.queueUrl,
    [ENV.targets]: JSON.stringify(config.targets),
    [ENV.mode]: config.mode,
    [ENV.lagMs]: String(config.lagSeconds * 1000),
    [ENV.leadMs]: String(config.leadSeconds * 1000),
    [ENV.graceMs]: String(config.graceSeconds * 1000),
    [ENV.slotMs]: String(Math.round(sizing.slotSeconds * 1000)),
    [ENV.maxShardRequests]: String(sizing.maxShardRequests),
    [ENV.maxConnectionsPerTarget]: String(sizing.connectionsPerTarget),
    [ENV.fireTimeoutMs]: String(sizing.timeoutSeconds * 1000),
    [ENV.timeScale]: String(config.timeScale),
    // Only when amplified: a deployment without it keeps its environment.
    ...(config.amplify !== 1 ? { [ENV.amplify]: String(config.amplify) } : {}),
    [ENV.intraSecond]: config.intraSecond,
    [ENV.forceStreaming]: String(config.forceStreaming),
    [ENV.requestTimeoutMs]: String(config.requestTimeoutSeconds * 1000),
    [ENV.lateToleranceMs]: String(config.lateToleranceMs),
    [ENV.latePolicy]: config.latePolicy,
    ...(config.modelOverride ? { [ENV.modelOverride]: config.modelOverride } : {}),
    ...(config.maxInFlightPerShard ? { [ENV.maxInFlight]: String(config.maxInFlightPerShard) } : {}),
  };
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
  /** Plans scheduled runs; only when the configuration declares schedules. */
  public readonly planFunction?: ReplayFunction;
  public readonly schedulerRole?: iam.Role;
  public readonly schedules: scheduler.CfnSchedule[] = [];
  public readonly captureRule?: events.Rule;
  /** Fails the deploy when the capture bucket is in another Region; created before the notification or rule. */
  public readonly bucketCheck: CaptureBucketCheck;
  public readonly captureSource: CaptureSource;

  constructor(scope: Construct, id: string, props: StatelessProps) {
    super(scope, id);
    const { config, stateful, sizing } = props;
    const functions = this.createFunctions(props);
    this.ingestFunction = functions.ingest;
    this.fireFunction = functions.fire;
    this.collectFunction = functions.collect;
    if (functions.plan) this.planFunction = functions.plan;
    this.grantResultsAndQueues(stateful);
    this.grantCapturesAndTargets(config);

    // ---- How new capture files reach the ingest queue, once the bucket is known to be in this Region ----
    this.bucketCheck = new CaptureBucketCheck(this, 'CaptureBucketCheck', {
      bucket: config.captureBucket,
      logRetention: retention(config.logRetentionDays),
      ...(props.uncheckedAccount ? { declaredAccount: props.uncheckedAccount } : {}),
    });
    const autoReplay = replaysNewCaptures(config);
    this.captureSource = autoReplay
      ? wireCaptureSource(this, {
          config,
          ingest: stateful.ingest,
          crossAccount: props.crossAccount,
          check: this.bucketCheck.resource,
        })
      : {};
    if (this.captureSource.rule) this.captureRule = this.captureSource.rule;

    if (autoReplay)
      this.ingestFunction.addEventSource(
        new SqsEventSource(stateful.ingest.queue, {
          batchSize: EVENT_SOURCE_BATCH_SIZE.ingest,
          reportBatchItemFailures: true,
          maxConcurrency: EVENT_SOURCE_CONCURRENCY.ingest,
        }),
      );
    this.fireFunction.addEventSource(
      new SqsEventSource(stateful.replay.queue, {
        batchSize: sizing.batchSize,
        reportBatchItemFailures: true,
        maxConcurrency: config.maxFireConcurrency ?? sizing.maxConcurrency,
      }),
    );
    this.collectFunction.addEventSource(
      new SqsEventSource(stateful.collect.queue, {
        batchSize: EVENT_SOURCE_BATCH_SIZE.collect,
        maxBatchingWindow: Duration.seconds(COLLECT_BATCHING_WINDOW_SECONDS),
        reportBatchItemFailures: true,
        maxConcurrency: EVENT_SOURCE_CONCURRENCY.collect,
      }),
    );
    const scheduled = stateful.schedules;
    if (scheduled && this.planFunction) {
      // One window per invocation (each may take minutes); two at once at most (Lambda's floor).
      this.planFunction.addEventSource(
        new SqsEventSource(scheduled.plan.queue, {
          batchSize: EVENT_SOURCE_BATCH_SIZE.plan,
          reportBatchItemFailures: true,
          maxConcurrency: EVENT_SOURCE_CONCURRENCY.plan,
        }),
      );
      this.schedulerRole = this.scheduleRuns(config, scheduled.plan.queue, scheduled.schedulerDlq);
      // A scheduled run reads the captures from this Region too: none is scheduled before the check.
      for (const schedule of this.schedules) schedule.node.addDependency(this.bucketCheck.resource);
    }
  }

  /** The functions, their environment, memory and timeouts (the fire function's from the sizing). */
  private createFunctions(props: StatelessProps): {
    ingest: ReplayFunction;
    fire: ReplayFunction;
    collect: ReplayFunction;
    plan?: ReplayFunction;
  } {
    const { config, stateful, sizing } = props;
    const logRetention = retention(config.logRetentionDays);
    const environment = functionEnvironment(config, stateful, sizing);
    const maxConcurrency = config.maxFireConcurrency ?? sizing.maxConcurrency;
    // A subset of the targets for new captures; without it, the ingest replays to every target.
    const subset: Record<string, string> =
      typeof config.autoReplay === 'object'
        ? { [ENV.autoReplayTargets]: JSON.stringify(autoReplayTargets(config)) }
        : {};
    const vpc = this.vpcOf(config);
    // The functions that dispatch runs weigh each run's lanes against the fire function's concurrency.
    // The functions that write metrics (the runs' capacity; the collector, what runs found) name the stack and the namespace.
    const metrics: Record<string, string> = {
      [ENV.stackName]: Stack.of(this).stackName,
      [ENV.metricsNamespace]: config.metricsNamespace,
    };
    const dispatching: Record<string, string> = {
      [ENV.fireConcurrency]: String(maxConcurrency),
      [ENV.fireConcurrencySetting]: config.maxFireConcurrency ? 'maxFireConcurrency' : 'peakRequestsPerSecond',
      ...metrics,
    };
    // Memory and timeouts but the fire function's: lib/stack-constants.ts says why.
    const ingest = new ReplayFunction(this, 'Ingest', {
      handlerName: 'ingest',
      logRetention,
      environment: { ...environment, ...subset, ...dispatching },
      timeout: Duration.seconds(FUNCTION_TIMEOUT_SECONDS.ingest),
      memorySize: FUNCTION_MEMORY_MB.ingest,
    });
    const fire = new ReplayFunction(this, 'Fire', {
      handlerName: 'fire',
      logRetention,
      nodeOptions: fireNodeOptions(sizing.memoryMb),
      environment: { ...environment, [ENV.secretsMaxAgeSeconds]: String(config.secretsMaxAgeSeconds) },
      timeout: Duration.seconds(sizing.timeoutSeconds),
      memorySize: sizing.memoryMb,
      ...(config.reserveFireConcurrency ? { reservedConcurrentExecutions: maxConcurrency } : {}),
      ...vpc,
    });
    const scheduled = stateful.schedules;
    const topic = scheduled?.topic;
    const notifyEnv: Record<string, string> = topic ? { [ENV.notifyTopicArn]: topic.topicArn } : {};
    const collect = new ReplayFunction(this, 'Collect', {
      handlerName: 'collect',
      logRetention,
      environment: { ...environment, ...notifyEnv, ...metrics },
      timeout: Duration.seconds(FUNCTION_TIMEOUT_SECONDS.collect),
      memorySize: FUNCTION_MEMORY_MB.collect,
    });
    if (!scheduled) return { ingest, fire, collect };
    const plan = new ReplayFunction(this, 'Plan', {
      handlerName: 'plan',
      logRetention,
      environment: {
        ...environment,
        ...dispatching,
        [ENV.schedules]: JSON.stringify(config.schedules),
        [ENV.captureBucket]: config.captureBucket,
        [ENV.capturePrefix]: config.capturePrefix,
        ...notifyEnv,
      },
      timeout: Duration.seconds(FUNCTION_TIMEOUT_SECONDS.plan),
      memorySize: FUNCTION_MEMORY_MB.plan,
    });
    return { ingest, fire, collect, plan };
  }

  /** The fire function in the configured VPC, when there is one. */
  private vpcOf(
    config: DeploymentConfig,
  ): Pick<ConstructorParameters<typeof ReplayFunction>[2], 'vpc' | 'vpcSubnets' | 'securityGroups'> {
    if (!config.vpc) return {};
    return {
      vpc: ec2.Vpc.fromVpcAttributes(this, 'Vpc', {
        vpcId: config.vpc.vpcId,
        availabilityZones: config.vpc.availabilityZones,
      }),
      vpcSubnets: { subnets: config.vpc.subnetIds.map((s, i) => ec2.Subnet.fromSubnetId(this, `Subnet${i}`, s)) },
      securityGroups: config.vpc.securityGroupIds.map((g, i) =>
        ec2.SecurityGroup.fromSecurityGroupId(this, `Sg${i}`, g),
      ),
    };
  }

  private allow(
    fn: ReplayFunction,
    actions: string[],
    resources: string[],
    conditions?: Record<string, unknown>,
  ): void {
    fn.addToRolePolicy(new iam.PolicyStatement({ actions, resources, ...(conditions ? { conditions } : {}) }));
  }

  /** IAM: every call each handler makes on the results bucket, the queues and the notify topic, on exactly its resources. */
  private grantResultsAndQueues(stateful: CaptureReplayStateful): void {
    const allow = this.allow.bind(this);
    const bucketArn = stateful.resultsBucket.bucketArn;
    const objects = (...prefixes: string[]) => prefixes.map((p) => `${bucketArn}/${p}*`);
    // Without s3:ListBucket, S3 answers a GET of a missing key with 403, not 404: every
    // existence check (run record, start, claims' results, roll-up state) needs it. It is
    // not conditioned on s3:prefix: S3's implicit check for the 404 has no prefix to match.
    for (const fn of [this.ingestFunction, this.fireFunction, this.collectFunction])
      allow(fn, ['s3:ListBucket'], [bucketArn]);
    // ingest: the ingest report under runs/; run record, start, bodies, incompatible drops under work/.
    allow(this.ingestFunction, ['s3:GetObject', 's3:PutObject'], objects(WORK_ROOT, RESULTS_ROOT));
    // fire: reads run state and bodies, writes claims and shard results: work/ only.
    allow(this.fireFunction, ['s3:GetObject', 's3:PutObject'], objects(WORK_ROOT));
    // collect: reads work/ and the hour's roll-up state, writes artifacts under runs/ (and interim/), roll-ups under hours/.
    // The run's root (core/pipeline/run-analysis.ts): reads the targets' run_manifest.json under
    // runs/ and writes its marker work/<run>/_analysis.json, for every pipeline run.
    allow(this.collectFunction, ['s3:GetObject'], objects(WORK_ROOT, HOURS_ROOT, RESULTS_ROOT));
    allow(this.collectFunction, ['s3:PutObject'], objects(RESULTS_ROOT, HOURS_ROOT, WORK_ROOT));
    // SQS: SendMessageBatch is authorized as sqs:SendMessage. The event sources' receive and
    // delete are the Lambda service's, granted by addEventSource below.
    allow(this.ingestFunction, ['sqs:SendMessage'], [stateful.replay.queue.queueArn, stateful.collect.queue.queueArn]);
    // deferral hops, last-shard collect
    allow(this.fireFunction, ['sqs:SendMessage'], [stateful.replay.queue.queueArn, stateful.collect.queue.queueArn]);
    allow(this.collectFunction, ['sqs:SendMessage'], [stateful.collect.queue.queueArn]); // deadline hops
    if (this.planFunction) {
      // plan: the run record, bodies and drops under work/, the run's ingest report under runs/,
      // the schedule's history (an empty run's line) under schedules/; then the shards and the collect message.
      allow(this.planFunction, ['s3:ListBucket'], [bucketArn]);
      allow(this.planFunction, ['s3:GetObject', 's3:PutObject'], objects(WORK_ROOT, RESULTS_ROOT, SCHEDULES_ROOT));
      allow(this.planFunction, ['sqs:SendMessage'], [stateful.replay.queue.queueArn, stateful.collect.queue.queueArn]);
      // collect, for scheduled runs: reads the history under schedules/, writes it and the
      // trend page. Only with schedules: a deployment without them never goes there.
      allow(this.collectFunction, ['s3:GetObject', 's3:PutObject'], objects(SCHEDULES_ROOT));
    }
    const scheduled = stateful.schedules;
    const topic = scheduled?.topic;
    if (topic)
      for (const fn of [this.planFunction, this.collectFunction]) if (fn) allow(fn, ['sns:Publish'], [topic.topicArn]);
    const topicKey = scheduled?.topicKey;
    if (topicKey) {
      // A topic under a customer managed key: its publishers need GenerateDataKey and Decrypt on the key
      // (https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html), through SNS only.
      const viaSns = { StringEquals: { 'kms:ViaService': `sns.${Stack.of(this).region}.amazonaws.com` } };
      for (const fn of [this.planFunction, this.collectFunction])
        if (fn) allow(fn, ['kms:GenerateDataKey', 'kms:Decrypt'], [topicKey.keyArn], viaSns);
    }
  }

  /** IAM: the captures (and their key), the SageMaker endpoints and the targets' API key secrets. */
  private grantCapturesAndTargets(config: DeploymentConfig): void {
    const allow = this.allow.bind(this);
    // Captures: GetObject under the prefix (ranged reads included), nothing else.
    const captureBucketArn = `arn:${Aws.PARTITION}:s3:::${config.captureBucket}`;
    allow(this.ingestFunction, ['s3:GetObject'], [`${captureBucketArn}/${config.capturePrefix}*`]);
    if (this.planFunction) {
      // The plan function finds a window's files by listing the hour partitions under the
      // prefix: ListBucket only for listings whose prefix is under it (StringLike on s3:prefix,
      // as IAM's own example of a folder-scoped listing:
      // https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_examples_s3_home-directory-console.html).
      // With no prefix, the whole bucket is the captures (a listing without a prefix has no
      // s3:prefix to match). A missing capture key answers 403, not 404: the plan reads only keys it has listed.
      const listCondition = config.capturePrefix
        ? { StringLike: { 's3:prefix': `${config.capturePrefix}*` } }
        : undefined;
      allow(this.planFunction, ['s3:ListBucket'], [captureBucketArn], listCondition);
      allow(this.planFunction, ['s3:GetObject'], [`${captureBucketArn}/${config.capturePrefix}*`]);
    }
    const region = Stack.of(this).region;
    if (config.captureKmsKeyArn) {
      // SSE-KMS captures: S3 decrypts with the caller's permission on the key, through S3 only.
      for (const fn of [this.ingestFunction, this.planFunction]) {
        if (fn)
          allow(fn, ['kms:Decrypt'], [config.captureKmsKeyArn], {
            StringEquals: { 'kms:ViaService': `s3.${region}.amazonaws.com` },
          });
      }
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
      const secretArn = t.apiKeySecret.startsWith('arn:')
        ? t.apiKeySecret
        : `arn:${Aws.PARTITION}:secretsmanager:${region}:${Aws.ACCOUNT_ID}:secret:${t.apiKeySecret}-??????`;
      allow(this.fireFunction, ['secretsmanager:GetSecretValue'], [secretArn]);
      if (t.apiKeySecretKmsKeyArn) {
        allow(this.fireFunction, ['kms:Decrypt'], [t.apiKeySecretKmsKeyArn], {
          StringEquals: { 'kms:ViaService': `secretsmanager.${region}.amazonaws.com` },
        });
      }
    });
  }

  /**
   * One EventBridge Scheduler schedule per configured schedule, each sending its plan message
   * to the plan queue, under one execution role that can do nothing but that (and put what it
   * could not send in the scheduler dead-letter queue, which the Scheduler also does with the
   * role: https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html).
   * The role trusts the Scheduler for this account's default schedule group only, as its
   * confused-deputy guidance asks (aws:SourceAccount, and aws:SourceArn naming the group,
   * never a schedule: https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html).
   */
  private scheduleRuns(config: DeploymentConfig, planQueue: sqs.IQueue, dlq: sqs.IQueue): iam.Role {
    const stack = Stack.of(this);
    const role = new iam.Role(this, 'SchedulerRole', {
      description: 'capture-replay: EventBridge Scheduler sends plan messages to the plan queue',
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
          ArnEquals: {
            'aws:SourceArn': `arn:${Aws.PARTITION}:scheduler:${Aws.REGION}:${Aws.ACCOUNT_ID}:schedule-group/default`,
          },
        },
      }),
    });
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [planQueue.queueArn, dlq.queueArn] }),
    );
    for (const s of config.schedules) {
      const schedule = new scheduler.CfnSchedule(this, `Schedule-${s.name}`, {
        name: scheduleResourceName(stack.stackName, s.name),
        description: `capture-replay: ${s.name}, ${s.targets.join(' vs ')}`,
        scheduleExpression: s.expression,
        scheduleExpressionTimezone: s.timezone,
        flexibleTimeWindow: { mode: 'OFF' },
        state: 'ENABLED',
        target: {
          arn: planQueue.queueArn,
          roleArn: role.roleArn,
          input: planMessageInput(s.name),
          retryPolicy: {
            maximumRetryAttempts: SCHEDULE_RETRY.MaximumRetryAttempts,
            maximumEventAgeInSeconds: SCHEDULE_RETRY.MaximumEventAgeInSeconds,
          },
          deadLetterConfig: { arn: dlq.queueArn },
        },
      });
      // The role's policy must exist before the first invocation, not only the role.
      schedule.node.addDependency(role);
      this.schedules.push(schedule);
    }
    return role;
  }
}

function retention(days: number): logs.RetentionDays {
  const allowed = Object.values(logs.RetentionDays)
    .filter((v): v is number => typeof v === 'number' && v > 0)
    .sort((a, b) => a - b);
  return (allowed.find((d) => d >= days) ?? logs.RetentionDays.TEN_YEARS) as logs.RetentionDays;
}
