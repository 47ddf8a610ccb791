/**
 * A target's API key rotated under a running replay: Secrets Manager on moto, and a real
 * HTTP target in its own process that accepts only the key it was last given
 * (test/support/key-server.ts). The fire function's composition root (createDeps) is used as
 * in Lambda: `targets()` once per shard, then the target's sends.
 *
 * IAM: moto authorizes Secrets Manager calls against resource "*" (test/support/iam/moto-iam.ts),
 * so no ARN-scoped grant can be enforced there; instead every recorded call is evaluated, by
 * AWS's policy logic, against the fire function's statements from the synthesized stack.
 */
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateSecretCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TargetRequest } from '../../lambdas/ports';
import { ENV } from '../../lambdas/runtime/config';
import { createDeps } from '../../lambdas/runtime/deps';
import { recordCalls, type AwsCall } from '../support/iam/aws-call-recorder';
import {
  clientConfig,
  deployStateful,
  errorsOf,
  json,
  show,
  sleep,
  startFunctions,
  synthesizeStack,
  RUN_TEST_TIMEOUT_MS,
  RUN_WAIT_MS,
  waitForObject,
  type Deployment,
  type Running,
} from '../support/iam/deployment';
import { UNAUTHENTICATED } from '../support/iam/moto-iam';
import { evaluate, type PolicyStatement } from '../support/iam/policy-evaluator';
import { functionPolicies, logicalIds } from '../support/iam/template-policies';
import { faultCaptureLine } from '../support/fault-server';
import { describeWithMoto, startMoto, type Moto } from '../support/moto';
import { REPO_ROOT, startUrlProcess, type MockProcess } from '../support/processes';
import type { SeenRequest } from '../support/key-server';

const SECRET = 'replay/rotating-key';

describeWithMoto(
  'API key rotation: cached with a time-to-live, read again once on 401 (moto Secrets Manager, a real HTTP target)',
  () => {
    let moto: Moto;
    let admin: SecretsManagerClient;
    let server: MockProcess;
    let secretArn = '';
    let fireStatements: PolicyStatement[] = [];
    let deployment: Deployment;
    let s3: S3Client;
    let running: Running[] = [];
    const calls: AwsCall[] = [];

    const seen = async () => (await (await fetch(`${server.url}/_seen`)).json()) as SeenRequest[];
    /** Rotates the key as an operator does: the secret and the provider both move to `key`. */
    const rotate = async (key: string) => {
      await admin.send(new PutSecretValueCommand({ SecretId: SECRET, SecretString: key }));
      const res = await fetch(`${server.url}/_key`, { method: 'PUT', body: key });
      expect(res.status).toBe(204);
    };
    const secretReads = () => calls.filter((c) => c.operation === 'GetSecretValue').length;
    /** The fire function's deps after a cold start, with the key cached for `maxAgeSeconds`. */
    const fireDeps = (maxAgeSeconds: number) => {
      const secrets = new SecretsManagerClient(clientConfig(moto.endpoint, UNAUTHENTICATED));
      recordCalls(secrets, calls);
      return createDeps({
        env: {
          [ENV.resultsBucket]: 'results-bucket',
          [ENV.replayQueueUrl]: `${moto.endpoint}/123456789012/replay`,
          [ENV.collectQueueUrl]: `${moto.endpoint}/123456789012/collect`,
          [ENV.targets]: JSON.stringify([{ name: 'A', url: server.url, apiKeySecret: SECRET }]),
          [ENV.secretsMaxAgeSeconds]: String(maxAgeSeconds),
        },
        secrets,
      });
    };
    let n = 0;
    const request = (): TargetRequest => ({
      requestId: `r-${++n}`,
      correlationId: `c-${n}`,
      contentType: 'application/json',
      body: Buffer.from('{"messages":[{"role":"user","content":"hi"}]}'),
      streaming: false,
    });
    /** One shard's worth, as the fire handler does it: targets() (the TTL check), then the send. */
    const fire = async (deps: ReturnType<typeof fireDeps>) => (await deps.targets()).get('A')!.client.send(request());

    beforeAll(async () => {
      moto = await startMoto();
      const config = clientConfig(moto.endpoint, UNAUTHENTICATED);
      admin = new SecretsManagerClient(config);
      secretArn = (await admin.send(new CreateSecretCommand({ Name: SECRET, SecretString: 'k1' }))).ARN!;
      server = await startUrlProcess([join(REPO_ROOT, 'test/support/key-server.ts')], ['--key', 'k1'], 'key server');
      // The fire function's grants, from the stack as synthesized for this secret.
      s3 = new S3Client(config);
      await s3.send(new CreateBucketCommand({ Bucket: 'capture-bucket' }));
      const template = await synthesizeStack({
        captureBucket: 'capture-bucket',
        capturePrefix: 'datacapture/',
        targets: [{ name: 'A', url: 'http://target.invalid', apiKeySecret: SECRET }],
      });
      deployment = await deployStateful(template, s3, new SQSClient(config));
      fireStatements = functionPolicies(template, 'StatelessFire', deployment.resolver).statements;
    }, 120_000);

    afterAll(async () => {
      await Promise.all(running.map((r) => r.source.stop()));
      await server?.stop();
      await moto?.stop();
    });

    it(
      'rotated mid-run: the first request after it is refused, the key is read again once, and that request is ' +
        'sent again and succeeds',
      async () => {
        const deps = fireDeps(300);
        const before = (await seen()).length;
        expect((await fire(deps)).error).toBeNull();
        const readsBefore = secretReads();
        await rotate('k2');
        const afterRotation = await fire(deps);
        expect(afterRotation.error).toBeNull();
        expect(afterRotation.httpStatus).toBe(200);
        expect(await fire(deps)).toMatchObject({ error: null, httpStatus: 200 });
        expect((await seen()).slice(before)).toEqual([
          { key: 'k1', status: 200 },
          { key: 'k1', status: 401 },
          { key: 'k2', status: 200 },
          { key: 'k2', status: 200 },
        ]);
        // Within the time-to-live only the refusal made it read again: one forced read.
        expect(secretReads() - readsBefore).toBe(1);
      },
    );

    it('with the time-to-live elapsed, the next shard reads the new key: no request is refused', async () => {
      await rotate('k3');
      const deps = fireDeps(1);
      const before = (await seen()).length;
      expect((await fire(deps)).error).toBeNull();
      await rotate('k4');
      await sleep(1300);
      expect(await fire(deps)).toMatchObject({ error: null, httpStatus: 200 });
      expect((await seen()).slice(before)).toEqual([
        { key: 'k3', status: 200 },
        { key: 'k4', status: 200 },
      ]);
    });

    it(
      'a key the target refuses although it is the current one: each request is recorded once with its 401, ' +
        'never sent again',
      async () => {
        await rotate('k5');
        const deps = fireDeps(300);
        await fetch(`${server.url}/_key`, { method: 'PUT', body: 'a-key-nobody-has' });
        const before = (await seen()).length;
        const readsBefore = secretReads();
        const results = [
          await fire(deps),
          await fire(deps),
          await fire(deps),
          ...(await Promise.all(Array.from({ length: 5 }, () => fire(deps)))),
        ];
        expect(results.map((r) => [r.error?.type, r.error?.code])).toEqual(
          Array.from({ length: 8 }, () => ['HTTPError', 401]),
        );
        // One send per request: the key read again was the same key.
        expect((await seen()).slice(before)).toEqual(Array.from({ length: 8 }, () => ({ key: 'k5', status: 401 })));
        // The first read (cold start) and at most one forced read a second.
        expect(secretReads() - readsBefore).toBeLessThanOrEqual(3);
      },
    );

    it(
      'the deployed pipeline, rotated mid-run: one request refused, then every request succeeds with the new key',
      async () => {
        await rotate('k6');
        running = await startFunctions(deployment, moto.endpoint, () => UNAUTHENTICATED, {
          motoSigning: false,
          env: { [ENV.targets]: JSON.stringify([{ name: 'A', url: server.url, apiKeySecret: SECRET }]) },
        });
        const fireCalls = running.find((r) => r.name === 'fire')!.calls;
        const before = (await seen()).length;
        // Eight requests two seconds apart, replayed on that timing: the rotation (which moto can
        // take a second or two to store) lands between two of them.
        const t0 = Date.UTC(2026, 3, 29, 0, 0, 0);
        const lines = Array.from({ length: 8 }, (_, i) =>
          faultCaptureLine(i, 'ok', { timeMs: t0 + i * 2000, prompt: `q${i}` }),
        );
        await s3.send(
          new PutObjectCommand({
            Bucket: 'capture-bucket',
            Key: 'datacapture/demo-endpoint/AllTraffic/2026/04/29/00/rotation.jsonl',
            Body: lines.join('\n') + '\n',
          }),
        );
        // Rotated once two requests have gone through with the old key.
        for (const deadline = Date.now() + 60_000; (await seen()).length - before < 2; await sleep(50)) {
          if (Date.now() > deadline)
            throw new Error(`the target saw ${(await seen()).length - before} requests in 60 s; ${errorsOf(running)}`);
        }
        await rotate('k7');
        const results =
          deployment.resolver.resources[logicalIds(deployment.template, 'AWS::S3::Bucket', 'StatefulResults')[0]!]!.Ref;
        const manifest = await json(
          s3,
          results,
          await waitForObject(s3, results, 'runs/', '/A/run_manifest.json', RUN_WAIT_MS, () => errorsOf(running)),
        );
        expect(manifest).toMatchObject({ scheduled: 8, succeeded: 8, failed: 0, balanced: true });
        // In arrival order: the old key until the rotation, one refusal, then only the new key.
        const after = (await seen()).slice(before);
        const refusal = after.findIndex((r) => r.status === 401);
        expect(
          after.filter((r) => r.status === 401),
          JSON.stringify(after),
        ).toEqual([{ key: 'k6', status: 401 }]);
        expect(
          after.slice(0, refusal).every((r) => r.key === 'k6' && r.status === 200),
          JSON.stringify(after),
        ).toBe(true);
        expect(
          after.slice(refusal + 1).every((r) => r.key === 'k7' && r.status === 200),
          JSON.stringify(after),
        ).toBe(true);
        expect(after.slice(refusal + 1).length, 'requests after the rotation').toBeGreaterThanOrEqual(2);
        expect(after).toHaveLength(9);
        calls.push(...fireCalls.filter((c) => c.service === 'secretsmanager'));
      },
      RUN_TEST_TIMEOUT_MS,
    );

    it("every Secrets Manager call is allowed by the fire function's synthesized policy", () => {
      expect(secretReads()).toBeGreaterThan(3);
      const resolved = calls.map(({ resourceIsName, ...c }) =>
        resourceIsName && c.resource === SECRET ? { ...c, resource: secretArn } : c,
      );
      expect(resolved.filter((c) => evaluate(fireStatements, c) !== 'allowed').map(show)).toEqual([]);
    });
  },
);
