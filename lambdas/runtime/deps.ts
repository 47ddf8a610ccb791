/**
 * The single composition root of the Lambda functions: configuration, AWS clients, stores,
 * queues and targets, built once per cold start. Tests pass their own clients (pointed at
 * the AWS emulator) and clock; nothing else differs from production.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SageMakerRuntimeClient, type SageMakerRuntimeClientConfig } from '@aws-sdk/client-sagemaker-runtime';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { Logger } from '@aws-lambda-powertools/logger';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { CloudWatchMetrics } from '../adapters/aws/cloudwatch-metrics';
import { S3ObjectStore } from '../adapters/aws/s3-object-store';
import { SnsNotifier } from '../adapters/aws/sns-notifier';
import { SqsQueue } from '../adapters/aws/sqs-queue';
import { createOpenAITarget, type OpenAITargetClient } from '../adapters/http/openai-target';
import type { WarmOptions } from '../adapters/http/socket-reserve';
import { startOpenAISink } from '../adapters/http/rehearsal-sink';
import { rehearsalSageMakerClient, startSageMakerSink } from '../adapters/sagemaker/rehearsal-sink';
import {
  createSageMakerTarget,
  sageMakerRuntimeClientConfig,
  type SageMakerTargetOptions,
} from '../adapters/sagemaker/sagemaker-target';
import { systemClock } from '../adapters/system-clock';
import type { Twin } from '../core/fire/rehearsal';
import { Semaphore } from '../core/fire/semaphore';
import type { Clock, Notifier, TargetClient } from '../ports';
import {
  parseRuntimeConfig,
  type HttpTargetConfig,
  type RuntimeConfig,
  type SageMakerTargetConfig,
  type TargetConfig,
} from './config';
import { connectionsPerTarget } from './limits';
import { SecretApiKey } from './secrets';

/** How long a target's API key is kept before its secret is read again, when SECRETS_MAX_AGE_SECONDS is not set. */
export const DEFAULT_SECRETS_MAX_AGE_SECONDS = 300;

export interface Target {
  client: TargetClient;
  /** Requests in flight to this target across every shard of the invocation: the pool's size. */
  inFlight: Semaphore;
  /** Opens connections ahead so that this many are ready (socket-reserve.ts: WarmOptions). */
  openAhead?(connections: number, options?: WarmOptions): void;
}

export interface Deps {
  config: RuntimeConfig;
  s3: S3Client;
  store: S3ObjectStore;
  replayQueue: SqsQueue;
  collectQueue: SqsQueue;
  clock: Clock;
  logger: Logger;
  /** The runs' CloudWatch metrics, as EMF log lines (Powertools' Metrics; adapters/aws/cloudwatch-metrics.ts). */
  metrics: CloudWatchMetrics;
  /** Scheduled runs' summaries (SNS), when the deployment names a topic. */
  notifier: Notifier | null;
  /**
   * Target clients by name, keep-alive pools reused across invocations. A failed first
   * secret read is not kept: the next call reads again. Each call (one per shard) first
   * reads again any API key older than its time-to-live (SECRETS_MAX_AGE_SECONDS).
   */
  targets(): Promise<Map<string, Target>>;
  /**
   * The rehearsal's twin of a configured target (core/fire/rehearsal.ts): the same kind and
   * options, pointed at a sink started in this process, without the API key.
   */
  rehearsalTwin(target: TargetConfig): Promise<Twin>;
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
  const s3 =
    overrides.s3 ??
    new S3Client({ requestHandler: sdkHandler(), ...(config.s3ForcePathStyle ? { forcePathStyle: true } : {}) });
  const sqs = overrides.sqs ?? new SQSClient({ requestHandler: sdkHandler() });
  const clock = overrides.clock ?? systemClock;
  const logger = new Logger({ serviceName: 'capture-replay' });
  return {
    config,
    s3,
    store: new S3ObjectStore(s3, config.resultsBucket),
    replayQueue: new SqsQueue(sqs, config.replayQueueUrl),
    collectQueue: new SqsQueue(sqs, config.collectQueueUrl),
    clock,
    logger,
    metrics: new CloudWatchMetrics(config.metricsNamespace, logger),
    notifier: config.notifyTopicArn
      ? new SnsNotifier(overrides.sns ?? new SNSClient({ requestHandler: sdkHandler() }), config.notifyTopicArn)
      : null,
    ...createTargetDeps(config, clock, logger, overrides),
  };
}

/** A SageMaker target's settings as configured (the client aside). */
function sageMakerOptions(
  t: SageMakerTargetConfig,
  config: RuntimeConfig,
  clock: Clock,
  connections: number,
): Omit<SageMakerTargetOptions, 'client'> {
  return {
    name: t.name,
    endpointName: t.endpointName,
    timeoutMs: config.requestTimeoutMs,
    clock,
    connections,
    ...(t.region ? { region: t.region } : {}),
    ...(t.variant ? { targetVariant: t.variant } : {}),
    ...(t.inferenceComponentName ? { inferenceComponentName: t.inferenceComponentName } : {}),
    ...(t.containerHostname ? { targetContainerHostname: t.containerHostname } : {}),
    ...(t.customAttributes ? { customAttributes: t.customAttributes } : {}),
  };
}

/** The rehearsal's twin of a target: the same client code and options, pointed at a sink in this process, no API key. */
async function rehearsalTwin(t: TargetConfig, config: RuntimeConfig, clock: Clock, connections: number): Promise<Twin> {
  const name = `${t.name}-rehearsal`;
  if (t.kind === 'sagemaker') {
    const sink = await startSageMakerSink();
    const client = rehearsalSageMakerClient(sink.url, config.requestTimeoutMs);
    const twin = createSageMakerTarget({
      ...sageMakerOptions(t, config, clock, connections),
      name,
      region: 'us-east-1',
      client,
    });
    return { twin, close: async () => (await twin.close(), client.destroy(), await sink.close()) };
  }
  const sink = await startOpenAISink();
  const twin = createOpenAITarget({
    name,
    baseUrl: sink.url,
    path: '/v1/chat/completions',
    timeoutMs: config.requestTimeoutMs,
    clock,
    connections,
  });
  return { twin, close: async () => (await twin.close(), await sink.close()) };
}

/** The targets' clients (one pool per target for the execution environment) and their rehearsal twins. */
function createTargetDeps(
  config: RuntimeConfig,
  clock: Clock,
  logger: Logger,
  overrides: DepsOverrides,
): Pick<Deps, 'targets' | 'rehearsalTwin'> {
  let targets: Promise<{ map: Map<string, Target>; apiKeys: SecretApiKey[] }> | null = null;
  const connections = connectionsPerTarget(config.targets.length, config.maxConnectionsPerTarget);
  const maxAgeSeconds = config.secretsMaxAgeSeconds ?? DEFAULT_SECRETS_MAX_AGE_SECONDS;
  const httpClient = async (
    t: HttpTargetConfig,
    secrets: () => SecretsProvider,
    apiKeys: SecretApiKey[],
  ): Promise<OpenAITargetClient> => {
    let apiKeySource: SecretApiKey | undefined;
    if (t.apiKeySecret) {
      const secretId = t.apiKeySecret;
      apiKeySource = new SecretApiKey({
        reader: secrets(),
        secretId,
        field: t.apiKeySecretField,
        maxAgeSeconds,
        onStaleKey: (error) =>
          logger.warn('API key secret not read: the key read before stays in use', {
            target: t.name,
            secretId,
            error: error instanceof Error ? error.message : String(error),
          }),
      });
      await apiKeySource.update();
      apiKeys.push(apiKeySource);
    }
    return createOpenAITarget({
      name: t.name,
      baseUrl: t.url,
      path: t.path,
      timeoutMs: config.requestTimeoutMs,
      clock,
      connections,
      reserveConnections: true,
      ...(apiKeySource ? { apiKeySource } : {}),
    });
  };
  const sageMakerClient = (t: SageMakerTargetConfig) => {
    // Region: the target's, else the SDK's default (AWS_REGION: the function's own region).
    const clientConfig = sageMakerRuntimeClientConfig({
      timeoutMs: config.requestTimeoutMs,
      connections,
      ...(t.region ? { region: t.region } : {}),
    });
    return createSageMakerTarget({
      ...sageMakerOptions(t, config, clock, connections),
      client: overrides.sageMakerClient
        ? overrides.sageMakerClient(t, clientConfig)
        : new SageMakerRuntimeClient(clientConfig),
    });
  };
  const build = async (): Promise<{ map: Map<string, Target>; apiKeys: SecretApiKey[] }> => {
    let secrets: SecretsProvider | undefined;
    // Powertools' provider holds the keys' cache; its client is ours (timeouts, or the test's).
    const secretsProvider = () =>
      (secrets ??= new SecretsProvider({
        awsSdkV3Client: overrides.secrets ?? new SecretsManagerClient({ requestHandler: sdkHandler() }),
      }));
    const map = new Map<string, Target>();
    const apiKeys: SecretApiKey[] = [];
    for (const t of config.targets) {
      // Every kind gets the same per-target pool size and in-flight limit.
      const inFlight = new Semaphore(connections);
      const client = t.kind === 'sagemaker' ? sageMakerClient(t) : await httpClient(t, secretsProvider, apiKeys);
      map.set(t.name, { client, inFlight, openAhead: (n, o) => client.openAhead(n, o) });
    }
    return { map, apiKeys };
  };
  return {
    async targets() {
      if (!targets) {
        const attempt = build();
        targets = attempt;
        // Never cache a failure (a throttled or denied secret read): the next record retries.
        attempt.catch(() => {
          if (targets === attempt) targets = null;
        });
      }
      const { map, apiKeys } = await targets;
      // Before a shard fires, not while: a read never delays a request on its due time.
      await Promise.all(apiKeys.map((k) => k.update()));
      return map;
    },
    rehearsalTwin: (t) => rehearsalTwin(t, config, clock, connections),
  };
}

let cached: Deps | null = null;

/** Production deps: from the environment, once per cold start. */
export function defaultDeps(): Deps {
  cached ??= createDeps();
  return cached;
}
