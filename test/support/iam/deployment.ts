/**
 * The deployed pipeline on moto, as the IAM tests run it: the synthesized stack's stateful
 * resources created on moto and every logical id mapped to them, and each function running
 * its real handler on its own recorded clients, with its template environment and the event
 * source its mapping describes (moved from test/integration/iam.test.ts, shared with
 * test/integration/sagemaker-pipeline.test.ts).
 */
import {
  CreateBucketCommand,
  ListObjectsV2Command,
  GetObjectCommand,
  PutBucketNotificationConfigurationCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { SageMakerRuntimeClient, type SageMakerRuntimeClientConfig } from '@aws-sdk/client-sagemaker-runtime';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { expect } from 'vitest';
import { makeCollectHandler } from '../../../lambdas/handlers/collect';
import { makeFireHandler } from '../../../lambdas/handlers/fire';
import { makeIngestHandler } from '../../../lambdas/handlers/ingest';
import type { Clock } from '../../../lambdas/ports';
import { ENV, type SageMakerTargetConfig } from '../../../lambdas/runtime/config';
import { createDeps, type Deps } from '../../../lambdas/runtime/deps';
import { askRunServer } from '../run-server';
import { startSqsEventSource, type EventSource, type SqsLambdaHandler } from '../sqs-event-source';
import { recordCalls, type AwsCall, type Recording } from './aws-call-recorder';
import { motoCompatibleS3Signing, type Credentials } from './moto-iam';
import { STACK_TEMPLATE_SERVER_ENV } from './stack-template-server';
import {
  functionEnvironment,
  functionPolicies,
  logicalIds,
  resolveIntrinsics,
  type CfnTemplate,
  type FunctionPolicies,
  type Resolver,
  type ResourceValues,
} from './template-policies';

export const ACCOUNT = '123456789012'; // moto's default account
export const REGION = 'us-east-1';
// Timing knobs only (the policies do not depend on them): a short lead, as pipeline.test.ts.
export const TIMING_ENV = { [ENV.leadMs]: '2500', [ENV.graceMs]: '30000' };

export type FnName = 'ingest' | 'fire' | 'collect' | 'plan';
/** A function of the template to run: its name, its logical id prefix, and its handler. */
export interface FunctionSpec {
  name: FnName;
  prefix: string;
  make: (getDeps: () => Deps) => SqsLambdaHandler;
}
/** The pipeline's functions, in every deployment; startFunctions runs these unless told otherwise. */
export const FUNCTIONS: FunctionSpec[] = [
  { name: 'ingest', prefix: 'StatelessIngest', make: makeIngestHandler },
  { name: 'fire', prefix: 'StatelessFire', make: makeFireHandler },
  { name: 'collect', prefix: 'StatelessCollect', make: makeCollectHandler },
];
/**
 * The plan function's logical id prefix: it exists only in a deployment with schedules. Run it
 * with the others by passing `functions: [...FUNCTIONS, planFunction(makePlanHandler)]`; its
 * role's policies are read like theirs (functionPolicies), its environment too.
 */
export const PLAN_PREFIX = 'StatelessPlan';
export const planFunction = (make: FunctionSpec['make']): FunctionSpec => ({ name: 'plan', prefix: PLAN_PREFIX, make });

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function clientConfig(endpoint: string, credentials: Credentials) {
  return { region: REGION, endpoint, forcePathStyle: true, credentials, maxAttempts: 2 };
}

/**
 * The stack's template as `cdk synth` writes it for this deployment configuration
 * (stack-template.ts): from the run's stack-template server when there is one, else
 * synthesized in this process.
 */
export async function synthesizeStack(config: Record<string, unknown>, id = 'IamTest'): Promise<CfnTemplate> {
  const answer = await askRunServer<{ template?: CfnTemplate; error?: string }>(STACK_TEMPLATE_SERVER_ENV, {
    config,
    id,
  });
  if (answer === null) return (await import('./stack-template')).stackTemplate(config, id);
  if (answer.error !== undefined || !answer.template)
    throw new Error(answer.error ?? 'the stack-template server answered no template');
  return answer.template;
}

export interface Deployment {
  template: CfnTemplate;
  resolver: Resolver;
  /** Event source mappings, by function logical id. */
  mappings: Map<string, { queueUrl: string; batchSize: number; batchingWindowMs: number; maxConcurrency: number }>;
}

/**
 * Creates the template's buckets and queues on moto (queues with the template's attributes,
 * dead-letter queues first), applies its S3 notification, and returns the resolver mapping
 * each logical id to what was created. The capture bucket is imported by the stack: the test
 * creates it, as it exists before a deploy. SNS topics (a deployment with schedules and
 * notify) need `sns`; an existing topic named by ARN is not in the template.
 */
export async function deployStateful(
  template: CfnTemplate,
  s3: S3Client,
  sqs: SQSClient,
  sns?: SNSClient,
): Promise<Deployment> {
  const resources: Record<string, ResourceValues> = {};
  const resolver: Resolver = { partition: 'aws', region: REGION, accountId: ACCOUNT, resources };
  for (const id of logicalIds(template, 'AWS::S3::Bucket')) {
    const name = id.toLowerCase();
    await s3.send(new CreateBucketCommand({ Bucket: name }));
    resources[id] = { Ref: name, Arn: `arn:aws:s3:::${name}` };
  }
  const queueIds = logicalIds(template, 'AWS::SQS::Queue');
  const hasRedrive = (id: string) => template.Resources[id]!.Properties?.RedrivePolicy !== undefined;
  for (const id of [...queueIds.filter((q) => !hasRedrive(q)), ...queueIds.filter(hasRedrive)]) {
    const p = (resolveIntrinsics(template.Resources[id]!.Properties ?? {}, template, resolver) ?? {}) as Record<
      string,
      unknown
    >;
    const attributes: Record<string, string> = {};
    for (const key of [
      'VisibilityTimeout',
      'MessageRetentionPeriod',
      'DelaySeconds',
      'ReceiveMessageWaitTimeSeconds',
    ] as const)
      if (p[key] !== undefined) attributes[key] = String(p[key]);
    if (p.RedrivePolicy !== undefined) attributes.RedrivePolicy = JSON.stringify(p.RedrivePolicy);
    const url = (await sqs.send(new CreateQueueCommand({ QueueName: id, Attributes: attributes }))).QueueUrl!;
    const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] })))
      .Attributes!.QueueArn!;
    resources[id] = { Ref: url, Arn: arn, QueueName: id, QueueUrl: url };
  }
  for (const id of logicalIds(template, 'AWS::SNS::Topic')) {
    if (!sns) throw new Error(`${id}: the template has an SNS topic; pass an SNSClient to deployStateful`);
    // Ref of a topic is its ARN. Subscriptions (email) are not emulated.
    const arn = (await sns.send(new CreateTopicCommand({ Name: id }))).TopicArn!;
    resources[id] = { Ref: arn, TopicArn: arn, TopicName: id };
  }
  for (const id of logicalIds(template, 'AWS::KMS::Key')) {
    // A topic's key (alarms notify it): SNS on moto does not encrypt, so only its ARN is needed,
    // for the publishers' kms: statements.
    const keyId = id.toLowerCase();
    resources[id] = { Ref: keyId, Arn: `arn:aws:kms:${REGION}:${ACCOUNT}:key/${keyId}`, KeyId: keyId };
  }
  for (const id of logicalIds(template, 'Custom::S3BucketNotifications')) {
    // ServiceToken (the CDK's notification-handler function) is not emulated: only what it would apply.
    const { BucketName, NotificationConfiguration } = template.Resources[id]!.Properties ?? {};
    const p = resolveIntrinsics({ BucketName, NotificationConfiguration }, template, resolver) as {
      BucketName: string;
      NotificationConfiguration: Record<string, unknown>;
    };
    const { QueueConfigurations, ...others } = p.NotificationConfiguration as { QueueConfigurations?: unknown[] };
    if (Object.keys(others).length > 0)
      throw new Error(`${id}: only queue notifications are emulated, got ${Object.keys(others).join(', ')}`);
    await s3.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: p.BucketName,
        NotificationConfiguration: { QueueConfigurations: QueueConfigurations as never },
      }),
    );
  }
  const mappings = new Map<
    string,
    { queueUrl: string; batchSize: number; batchingWindowMs: number; maxConcurrency: number }
  >();
  for (const id of logicalIds(template, 'AWS::Lambda::EventSourceMapping')) {
    const p = template.Resources[id]!.Properties ?? {};
    const fnId = (p.FunctionName as { Ref?: string }).Ref;
    const arn = resolveIntrinsics(p.EventSourceArn, template, resolver);
    const queue = Object.values(resources).find((r) => r.Arn === arn && r.QueueUrl !== undefined);
    if (!fnId || !queue) throw new Error(`${id}: cannot emulate (function ${String(fnId)}, source ${String(arn)})`);
    // The stand-in always applies partial batch responses: the mapping must ask for them.
    expect(p.FunctionResponseTypes, `${id} FunctionResponseTypes`).toEqual(['ReportBatchItemFailures']);
    const maximum = (p.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency ?? 10;
    mappings.set(fnId, {
      queueUrl: queue.QueueUrl!,
      batchSize: Number(p.BatchSize ?? 10),
      batchingWindowMs: Number(p.MaximumBatchingWindowInSeconds ?? 0) * 1000,
      maxConcurrency: Math.min(maximum, 10),
    });
  }
  return { template, resolver, mappings };
}

export interface Running {
  name: FnName;
  policies: FunctionPolicies;
  calls: AwsCall[];
  recordings: Recording[];
  source: EventSource;
}

/** A different configuration or clock for one function, e.g. mirror mode for the ingest. */
export type Variant = { env?: Record<string, string>; clock?: Clock };

export interface StartOptions {
  motoSigning: boolean;
  /** Read on every invocation; deps are rebuilt when it changes (clients and recordings stay). */
  variant?: (name: FnName) => Variant | undefined;
  /** Sees every message body a function sends, by queue URL. */
  onSend?: (name: FnName, queueUrl: string, bodies: string[]) => void;
  /**
   * Where SageMaker targets' runtime clients go (the bundled mock runtime): each function's
   * SageMaker calls are signed with its credentials, in REGION unless the target names one,
   * and recorded with its other calls (account ACCOUNT, as the ARNs AWS would authorize).
   */
  sageMakerEndpoint?: string;
  /** Environment added to each function's (after TIMING_ENV). */
  env?: Record<string, string>;
  /** The functions to run (default FUNCTIONS); add planFunction(...) for a deployment with schedules. */
  functions?: readonly FunctionSpec[];
  /** Sees each function's S3 client before it is used (e.g. to add a middleware). */
  configureS3?: (name: FnName, s3: S3Client) => void;
}

/** Each topic's key, by topic ARN (KmsMasterKeyId resolved), for the calls a publish implies. */
function topicKeys(d: Deployment): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const id of logicalIds(d.template, 'AWS::SNS::Topic')) {
    const key = d.template.Resources[id]!.Properties?.KmsMasterKeyId;
    if (key === undefined) continue;
    const topic = d.resolver.resources[id]?.TopicArn;
    const arn = resolveIntrinsics(key, d.template, d.resolver);
    if (typeof topic === 'string' && typeof arn === 'string') keys[topic] = arn;
  }
  return keys;
}

/**
 * Each function with its own clients (recorded), its template environment, and the event
 * source its mapping describes, polling with the same clients (the execution role).
 */
export async function startFunctions(
  d: Deployment,
  endpoint: string,
  credentialsOf: (name: FnName) => Credentials,
  options: StartOptions,
): Promise<Running[]> {
  const out: Running[] = [];
  for (const fn of options.functions ?? FUNCTIONS) {
    const policies = functionPolicies(d.template, fn.prefix, d.resolver);
    const creds = credentialsOf(fn.name);
    const s3 = new S3Client(clientConfig(endpoint, creds));
    const sqs = new SQSClient(clientConfig(endpoint, creds));
    const secrets = new SecretsManagerClient(clientConfig(endpoint, creds));
    const sns = new SNSClient(clientConfig(endpoint, creds));
    if (options.motoSigning) motoCompatibleS3Signing(s3, creds);
    options.configureS3?.(fn.name, s3);
    const calls: AwsCall[] = [];
    const recordings = [
      recordCalls(s3, calls),
      recordCalls(sqs, calls),
      recordCalls(secrets, calls),
      recordCalls(sns, calls, { topicKeys: topicKeys(d) }),
    ];
    const onSend = options.onSend;
    if (onSend) {
      sqs.middlewareStack.add(
        (next, context) => async (args) => {
          const input = args.input as { QueueUrl?: string; MessageBody?: string; Entries?: { MessageBody?: string }[] };
          if (context.commandName === 'SendMessageBatchCommand' || context.commandName === 'SendMessageCommand') {
            onSend(
              fn.name,
              input.QueueUrl ?? '',
              input.Entries ? input.Entries.map((e) => e.MessageBody ?? '') : [input.MessageBody ?? ''],
            );
          }
          return next(args);
        },
        { step: 'initialize', name: 'sendTap' },
      );
    }
    const env = { ...functionEnvironment(d.template, fn.prefix, d.resolver), ...TIMING_ENV, ...options.env };
    const sageMakerEndpoint = options.sageMakerEndpoint;
    const sageMakerClient = sageMakerEndpoint
      ? (_target: SageMakerTargetConfig, config: SageMakerRuntimeClientConfig) => {
          const client = new SageMakerRuntimeClient({
            region: REGION,
            ...config,
            endpoint: sageMakerEndpoint,
            credentials: creds,
          });
          recordings.push(recordCalls(client, calls, { account: ACCOUNT }));
          return client;
        }
      : undefined;
    const base = createDeps({ env, s3, sqs, secrets, sns, ...(sageMakerClient ? { sageMakerClient } : {}) });
    let current = { key: '', deps: base };
    const getDeps = () => {
      const v = options.variant?.(fn.name);
      const key = v ? JSON.stringify({ env: v.env, clock: v.clock ? 'skewed' : undefined }) : '';
      if (key !== current.key)
        current = {
          key,
          deps: v
            ? createDeps({
                env: { ...env, ...v.env },
                s3,
                sqs,
                secrets,
                sns,
                ...(sageMakerClient ? { sageMakerClient } : {}),
                ...(v.clock ? { clock: v.clock } : {}),
              })
            : base,
        };
      return current.deps;
    };
    const mapping = d.mappings.get(policies.functionId);
    if (!mapping) throw new Error(`${policies.functionId} has no event source mapping`);
    const source = await startSqsEventSource({
      client: sqs,
      queueUrl: mapping.queueUrl,
      handler: fn.make(getDeps),
      batchSize: mapping.batchSize,
      batchingWindowMs: mapping.batchingWindowMs,
      maxConcurrency: mapping.maxConcurrency,
      functionName: policies.functionId,
    });
    out.push({ name: fn.name, policies, calls, recordings, source });
  }
  return out;
}

/**
 * How long a test waits for a run's manifest on moto: a wait for the pipeline, not a check on
 * its time. On a machine shared with the other test files a run that takes seconds alone can
 * take a minute.
 */
export const RUN_WAIT_MS = 150_000;
/** A test that waits for one run: the wait and a margin for what comes before and after it. */
export const RUN_TEST_TIMEOUT_MS = RUN_WAIT_MS + 60_000;

export async function waitForObject(
  s3: S3Client,
  bucket: string,
  prefix: string,
  suffix: string,
  timeoutMs: number,
  diagnose: () => string,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const keys = ((await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).map(
      (o) => o.Key!,
    );
    const hit = keys.find((k) => k.endsWith(suffix));
    if (hit) return hit;
    if (Date.now() > deadline)
      throw new Error(`no ${prefix}...${suffix} in ${bucket} after ${timeoutMs} ms; ${diagnose()}`);
    await sleep(250);
  }
}

export async function json(s3: S3Client, bucket: string, key: string): Promise<Record<string, unknown>> {
  return JSON.parse(
    await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString(),
  ) as Record<string, unknown>;
}

export const show = (c: AwsCall) =>
  `${c.operation} -> ${c.action} on ${c.resource}${Object.keys(c.context).length ? ` ${JSON.stringify(c.context)}` : ''}`;

/** Distinct requests (action, resource, context): the minimality checks need each once. */
export function distinct(calls: AwsCall[]): AwsCall[] {
  const seen = new Map<string, AwsCall>();
  for (const c of calls)
    seen.set(`${c.action} ${c.resource} ${JSON.stringify(c.context)} ${c.impliedBy ? 'implied' : ''}`, c);
  return [...seen.values()];
}

export function errorsOf(running: Running[]): string {
  return running
    .map(
      (r) =>
        `${r.name}: ${r.source.stats.handlerErrors} handler errors, ${r.source.stats.failedRecords} failed records ${r.source.stats.errors
          .slice(-2)
          .map((e) => String(e))
          .join(' | ')}`,
    )
    .join('; ');
}
