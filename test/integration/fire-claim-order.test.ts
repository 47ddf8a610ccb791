/**
 * The fire handler resolves its target, API key included, before it claims a shard: a first
 * read of the key that fails (here the secret does not exist yet, on moto's Secrets Manager)
 * fails the record with nothing claimed, and its redelivery fires the shard. Claimed first, the
 * shard stayed claimed with no results: the redelivery found the claim young and did nothing
 * (a duplicate), and once the lease ran out its requests were recorded as lost, never sent.
 * The target is a real key-checking HTTP server in its own process (test/support/key-server.ts).
 */
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { claimKey, resultsKey } from '../../lambdas/core/pipeline/keys';
import { makeFireHandler } from '../../lambdas/handlers/fire';
import { ENV } from '../../lambdas/runtime/config';
import { createDeps } from '../../lambdas/runtime/deps';
import { createBucket, createQueue } from '../support/aws-fixtures';
import type { SeenRequest } from '../support/key-server';
import { awsClientConfig, describeWithMoto, startMoto, type Moto } from '../support/moto';
import { REPO_ROOT, startUrlProcess, type MockProcess } from '../support/processes';
import { chatRequests, shardBodies, sqsEventOf } from '../support/shard-messages';

const SECRET = 'replay/not-yet-created';
const context = { awsRequestId: 'claim-order' } as Context;

describeWithMoto('fire: the target and its key resolved before the claim (moto, a real HTTP target)', () => {
  let moto: Moto;
  let server: MockProcess;

  beforeAll(async () => {
    moto = await startMoto();
    server = await startUrlProcess([join(REPO_ROOT, 'test/support/key-server.ts')], ['--key', 'k1'], 'key server');
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await moto?.stop();
  });

  it('a failed first read of the key fails the record with nothing claimed; the redelivery fires the shard', async () => {
    const config = awsClientConfig(moto.endpoint);
    const s3 = new S3Client(config);
    const sqs = new SQSClient(config);
    const secrets = new SecretsManagerClient(config);
    await createBucket(s3, 'results-bucket');
    const replay = await createQueue(sqs, 'replay');
    const collect = await createQueue(sqs, 'collect');
    const deps = createDeps({
      env: {
        [ENV.resultsBucket]: 'results-bucket',
        [ENV.replayQueueUrl]: replay.url,
        [ENV.collectQueueUrl]: collect.url,
        [ENV.targets]: JSON.stringify([{ name: 'A', url: server.url, apiKeySecret: SECRET }]),
        [ENV.leadMs]: '5000',
      },
      s3,
      sqs,
      secrets,
    });
    const handler = makeFireHandler(() => deps);
    // Due in 1.5 s: too soon for the warm-up's rehearsal, so the test waits for nothing else.
    const [body] = await shardBodies({
      runId: 'run-claim',
      target: 'A',
      requests: chatRequests(5, 20),
      startNs: BigInt(Date.now() + 1_500) * 1_000_000n,
      leadMs: 5000,
      store: deps.store,
    });
    const event = sqsEventOf([body!]);
    const { shardId } = JSON.parse(body!) as { shardId: string };

    // Every record of the batch failed: Powertools fails the invocation, and SQS delivers the batch again.
    await expect(handler(event, context)).rejects.toThrow(/All records failed/);
    expect(
      await deps.store.get(claimKey('run-claim', 'A', shardId)),
      'a claim taken although the shard could not fire',
    ).toBeNull();

    await secrets.send(new CreateSecretCommand({ Name: SECRET, SecretString: 'k1' }));
    expect(await handler(event, context)).toEqual({ batchItemFailures: [] });
    const seen = (await (await fetch(`${server.url}/_seen`)).json()) as SeenRequest[];
    expect(seen).toEqual(Array.from({ length: 5 }, () => ({ key: 'k1', status: 200 })));
    const lines = new TextDecoder()
      .decode((await deps.store.get(resultsKey('run-claim', 'A', shardId)))!)
      .trim()
      .split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { kind: string }).kind)).toEqual(
      Array.from({ length: 5 }, () => 'record'),
    );
  }, 60_000);
});
