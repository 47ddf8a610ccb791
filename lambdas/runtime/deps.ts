/**
 * The single composition root of the Lambda functions: configuration, AWS clients, stores,
 * queues and targets, built once per cold start. Tests pass their own clients (pointed at
 * the AWS emulator) and clock; nothing else differs from production.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { Logger } from '@aws-lambda-powertools/logger';
import { S3ObjectStore } from '../adapters/aws/s3-object-store';
import { SqsQueue } from '../adapters/aws/sqs-queue';
import { createOpenAITarget } from '../adapters/http/openai-target';
import { systemClock } from '../adapters/system-clock';
import { Semaphore } from '../core/fire/semaphore';
import type { Clock, TargetClient } from '../ports';
import { parseRuntimeConfig, type RuntimeConfig } from './config';
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
  const build = async (): Promise<Map<string, Target>> => {
    const secrets = overrides.secrets ?? new SecretsManagerClient({ requestHandler: sdkHandler() });
    const map = new Map<string, Target>();
    for (const t of config.targets) {
      let apiKey: string | undefined;
      if (t.apiKeySecret) {
        const out = await secrets.send(new GetSecretValueCommand({ SecretId: t.apiKeySecret }));
        apiKey = bearerKeyFromSecret(out.SecretString, t.apiKeySecret, t.apiKeySecretField);
      }
      map.set(t.name, {
        client: createOpenAITarget({ name: t.name, baseUrl: t.url, path: t.path, timeoutMs: config.requestTimeoutMs, clock, connections, ...(apiKey ? { apiKey } : {}) }),
        inFlight: new Semaphore(connections),
      });
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
