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
import type { Clock, TargetClient } from '../ports';
import { parseRuntimeConfig, type RuntimeConfig } from './config';

export interface Deps {
  config: RuntimeConfig;
  s3: S3Client;
  store: S3ObjectStore;
  replayQueue: SqsQueue;
  collectQueue: SqsQueue;
  clock: Clock;
  logger: Logger;
  /** Target clients by name, keep-alive pools reused across invocations. */
  targets(): Promise<Map<string, TargetClient>>;
}

export interface DepsOverrides {
  env?: Record<string, string | undefined>;
  s3?: S3Client;
  sqs?: SQSClient;
  secrets?: SecretsManagerClient;
  clock?: Clock;
}

export function createDeps(overrides: DepsOverrides = {}): Deps {
  const config = parseRuntimeConfig(overrides.env ?? process.env);
  const s3 = overrides.s3 ?? new S3Client({});
  const sqs = overrides.sqs ?? new SQSClient({});
  const clock = overrides.clock ?? systemClock;
  let targets: Promise<Map<string, TargetClient>> | null = null;
  return {
    config,
    s3,
    store: new S3ObjectStore(s3, config.resultsBucket),
    replayQueue: new SqsQueue(sqs, config.replayQueueUrl),
    collectQueue: new SqsQueue(sqs, config.collectQueueUrl),
    clock,
    logger: new Logger({ serviceName: 'capture-replay' }),
    targets() {
      targets ??= (async () => {
        const secrets = overrides.secrets ?? new SecretsManagerClient({});
        const map = new Map<string, TargetClient>();
        for (const t of config.targets) {
          const apiKey = t.apiKeySecret ? (await secrets.send(new GetSecretValueCommand({ SecretId: t.apiKeySecret }))).SecretString : undefined;
          map.set(t.name, createOpenAITarget({ name: t.name, baseUrl: t.url, path: t.path, timeoutMs: config.requestTimeoutMs, clock, ...(apiKey ? { apiKey } : {}) }));
        }
        return map;
      })();
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
