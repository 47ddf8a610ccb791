/**
 * The single composition root of the Lambda functions: configuration, AWS clients, stores,
 * queues and targets, built once per cold start. Tests pass their own clients (pointed at
 * the AWS emulator) and clock; nothing else differs from production.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SageMakerRuntimeClient, type SageMakerRuntimeClientConfig } from '@aws-sdk/client-sagemaker-runtime';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { Logger } from '@aws-lambda-powertools/logger';
import { S3ObjectStore } from '../adapters/aws/s3-object-store';
import { SnsNotifier } from '../adapters/aws/sns-notifier';
import { SqsQueue } from '../adapters/aws/sqs-queue';
import { createOpenAITarget } from '../adapters/http/openai-target';
import { createSageMakerTarget, sageMakerRuntimeClientConfig } from '../adapters/sagemaker/sagemaker-target';
import { systemClock } from '../adapters/system-clock';
import { Semaphore } from '../core/fire/semaphore';
import type { Clock, Notifier, TargetClient } from '../ports';
import { parseRuntimeConfig, type HttpTargetConfig, type RuntimeConfig, type SageMakerTargetConfig } from './config';
import { connectionsPerTarget } from './limits';
import { bearerKeyFromSecret } from './secrets';

export interface Target {
  client: TargetClient;
  /** Requests in flight to this target across every shard of the invocation: the pool's size. */
  inFlight: Semaphore;
}

export interface Deps {
  config: RuntimeConfig;
  s3: S3Client;
  store: S3ObjectStore;
  replayQueue: SqsQueue;
  collectQueue: SqsQueue;
  clock: Clock;
  logger: Logger;
  /** Scheduled runs' summaries (SNS), when the deployment names a topic. */
  notifier: Notifier | null;
  /**
   * Target clients by name, keep-alive pools reused across invocations. A failed secret read
   * is not kept: the next call reads again.
   */
  targets(): Promise<Map<string, Target>>;
}

export interface DepsOverrides {
  env?: Record<string, string | undefined>;
  s3?: S3Client;
  sqs?: SQSClient;
  secrets?: SecretsManagerClient;
  sns?: SNSClient;
  /**
   * Builds the SageMaker runtime client of a `sagemaker` target from the settings production
   * uses (`config`: region, retries off, the connection pool); tests add an endpoint,
   * credentials or a recorder. Default: `new SageMakerRuntimeClient(config)`, which finds
   * credentials with the SDK's default chain (in Lambda: the function's role).
   */
  sageMakerClient?: (target: SageMakerTargetConfig, config: SageMakerRuntimeClientConfig) => SageMakerRuntimeClient;
  clock?: Clock;
}

/**
 * AWS SDK calls must fail in bounded time: in a VPC without the endpoints the default
 * handler would wait for a connection until the function's 15 minutes run out. Connect within
 * 5 s, and a socket silent for 60 s is dead (a large S3 GET streams, so this is idle time).
 */
export const SDK_TIMEOUTS = { connectionTimeout: 5_000, requestTimeout: 60_000 } as const;

/** The SDK builds its Node HTTP handler from these options (no direct dependency on it). */
function sdkHandler(): { connectionTimeout: number; requestTimeout: number } {
  return { ...SDK_TIMEOUTS };
}

export function createDeps(overrides: DepsOverrides = {}): Deps {
  const config = parseRuntimeConfig(overrides.env ?? process.env);
  const s3 = overrides.s3 ?? new S3Client({ requestHandler: sdkHandler(), ...(config.s3ForcePathStyle ? { forcePathStyle: true } : {}) });
  const sqs = overrides.sqs ?? new SQSClient({ requestHandler: sdkHandler() });
  const clock = overrides.clock ?? systemClock;
  let targets: Promise<Map<string, Target>> | null = null;
  const connections = connectionsPerTarget(config.targets.length, config.maxConnectionsPerTarget);
  const httpClient = async (t: HttpTargetConfig, secrets: () => SecretsManagerClient): Promise<TargetClient> => {
    let apiKey: string | undefined;
    if (t.apiKeySecret) {
      const out = await secrets().send(new GetSecretValueCommand({ SecretId: t.apiKeySecret }));
      apiKey = bearerKeyFromSecret(out.SecretString, t.apiKeySecret, t.apiKeySecretField);
    }
    return createOpenAITarget({ name: t.name, baseUrl: t.url, path: t.path, timeoutMs: config.requestTimeoutMs, clock, connections, ...(apiKey ? { apiKey } : {}) });
  };
  const sageMakerClient = (t: SageMakerTargetConfig): TargetClient => {
    // Region: the target's, else the SDK's default (AWS_REGION: the function's own region).
    const clientConfig = sageMakerRuntimeClientConfig({ timeoutMs: config.requestTimeoutMs, connections, ...(t.region ? { region: t.region } : {}) });
    return createSageMakerTarget({
      name: t.name,
      endpointName: t.endpointName,
      timeoutMs: config.requestTimeoutMs,
      clock,
      connections,
      client: overrides.sageMakerClient ? overrides.sageMakerClient(t, clientConfig) : new SageMakerRuntimeClient(clientConfig),
      ...(t.region ? { region: t.region } : {}),
      ...(t.variant ? { targetVariant: t.variant } : {}),
      ...(t.inferenceComponentName ? { inferenceComponentName: t.inferenceComponentName } : {}),
      ...(t.containerHostname ? { targetContainerHostname: t.containerHostname } : {}),
      ...(t.customAttributes ? { customAttributes: t.customAttributes } : {}),
    });
  };
  const build = async (): Promise<Map<string, Target>> => {
    let secrets: SecretsManagerClient | undefined;
    const secretsClient = () => (secrets ??= overrides.secrets ?? new SecretsManagerClient({ requestHandler: sdkHandler() }));
    const map = new Map<string, Target>();
    for (const t of config.targets) {
      // Every kind gets the same per-target pool size and in-flight limit.
      map.set(t.name, { client: t.kind === 'sagemaker' ? sageMakerClient(t) : await httpClient(t, secretsClient), inFlight: new Semaphore(connections) });
    }
    return map;
  };
  return {
    config,
    s3,
    store: new S3ObjectStore(s3, config.resultsBucket),
    replayQueue: new SqsQueue(sqs, config.replayQueueUrl),
    collectQueue: new SqsQueue(sqs, config.collectQueueUrl),
    clock,
    logger: new Logger({ serviceName: 'capture-replay' }),
    notifier: config.notifyTopicArn ? new SnsNotifier(overrides.sns ?? new SNSClient({ requestHandler: sdkHandler() }), config.notifyTopicArn) : null,
    targets() {
      if (!targets) {
        const attempt = build();
        targets = attempt;
        // Never cache a failure (a throttled or denied secret read): the next record retries.
        attempt.catch(() => {
          if (targets === attempt) targets = null;
        });
      }
      return targets;
    },
  };
}

let cached: Deps | null = null;

/** Production deps: from the environment, once per cold start. */
export function defaultDeps(): Deps {
  cached ??= createDeps();
  return cached;
}
