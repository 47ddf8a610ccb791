/**
 * IAM, enforced as AWS would. The stack is synthesized in-process (with cdk.json's feature
 * flags), its stateful resources are created on moto and every logical id mapped to them,
 * and each function runs its real handler with its own S3/SQS/Secrets Manager clients, so
 * every AWS call is attributed to the function whose role AWS would authorize it under
 * (the Lambda event source's receive/delete included: Lambda polls with the execution role,
 * which "must include sqs:DeleteMessage, sqs:GetQueueAttributes, sqs:ReceiveMessage",
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-lambda-function-trigger.html;
 * the stand-in event source makes exactly those calls).
 *
 * Its two tiers (the evaluator, and moto enforcing IAM): the describe below.
 */
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer } from '../../lambdas/mocks/mock-server';
import { systemClock } from '../../lambdas/adapters/system-clock';
import { resultsKey } from '../../lambdas/core/pipeline/keys';
import { fileRunId } from '../../lambdas/core/ids';
import { runPrefix } from '../../lambdas/core/pipeline/keys';
import { DEFAULT_SHARDING } from '../../lambdas/core/pipeline/shards';
import { ENV } from '../../lambdas/runtime/config';
import { iamCallsFor, recordCalls, type AwsCall } from '../support/iam/aws-call-recorder';
import {
  clientConfig,
  deployStateful,
  distinct,
  errorsOf,
  FUNCTIONS,
  json,
  REGION,
  show,
  sleep,
  startFunctions,
  synthesizeStack,
  RUN_TEST_TIMEOUT_MS,
  RUN_WAIT_MS,
  waitForObject,
  type Deployment,
  type FnName,
  type Running,
  type Variant,
} from '../support/iam/deployment';
import {
  createUserWithPolicy,
  motoCompatibleS3Signing,
  setMotoEnforcement,
  UNAUTHENTICATED,
  withMotoBatchShim,
  withoutConditions,
  type Credentials,
} from '../support/iam/moto-iam';
import {
  evaluate,
  explain,
  requiredStatements,
  unusedActions,
  unusedResources,
  type PolicyStatement,
} from '../support/iam/policy-evaluator';
import { functionPolicies, logicalIds, type CfnTemplate } from '../support/iam/template-policies';
import { describeWithMoto, startMoto, type Moto } from '../support/moto';
import { REPO_ROOT } from '../support/processes';

const CAPTURE_BUCKET = 'capture-bucket';
const SAMPLE = join(REPO_ROOT, 'samples/datacapture/demo-endpoint/AllTraffic/2026/04/29/00/14-03-887-0a1b2c3d.jsonl');
const BASIC_EXECUTION_ROLE = 'arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole';

function synthesize(targets: { name: string; url: string; apiKeySecret?: string }[]): Promise<CfnTemplate> {
  return synthesizeStack({
    captureBucket: CAPTURE_BUCKET,
    capturePrefix: 'datacapture/',
    targets,
    leadSeconds: 5,
    graceSeconds: 30,
    requestTimeoutSeconds: 60,
  });
}

/**
 * moto's verdict on a recorded call. A 403 that is not an authentication failure is its
 * authorization denial; for SQS, moto answers the denial in XML, which the JSON-protocol
 * client cannot parse (a SyntaxError with the 403 status), so the status is the verdict.
 */
const AUTHENTICATION_ERRORS = new Set([
  'SignatureDoesNotMatch',
  'InvalidAccessKeyId',
  'InvalidClientTokenId',
  'IncompleteSignature',
]);
const motoDenied = (c: AwsCall) => c.status === 403 && !AUTHENTICATION_ERRORS.has(c.errorName ?? '');

/**
 * Tier 1: every call is recorded as the IAM request AWS authorizes it as and evaluated,
 * with AWS's identity-policy logic, against the function's synthesized statements: each call
 * must be allowed, and each grant must be needed by some call.
 * Tier 2: moto itself enforces IAM (INITIAL_NO_AUTH_ACTION_COUNT=0), each function signing as
 * an IAM user holding its synthesized statements (test/support/iam/moto-iam.ts lists the
 * shims and moto's gaps); moto's verdict on every call is checked against the evaluator's.
 */
describeWithMoto('IAM: each function against its synthesized policy', () => {
  describe('tier 1: recorded calls evaluated by AWS policy logic', () => {
    let moto: Moto;
    let admin: { s3: S3Client; sqs: SQSClient; secrets: SecretsManagerClient };
    let mock: MockServer;
    let deployment: Deployment;
    let running: Running[] = [];
    let results = '';
    let replayQueueUrl = '';
    const variants: Partial<Record<FnName, Variant>> = {};
    /** Shard messages as the ingest sent them (SQS may deliver any of them again). */
    const shardBodies: string[] = [];
    const secretArns = new Map<string, string>();
    const API_KEY = 'sk-iam-test';

    /** Calls with secret names replaced by the ARNs the secrets got. */
    const resolved = (calls: AwsCall[]) =>
      calls.map((c) => {
        if (!c.resourceIsName) return c;
        const arn = secretArns.get(c.resource);
        if (!arn) throw new Error(`no secret named ${c.resource} was created`);
        const { resourceIsName: _named, ...rest } = c;
        return { ...rest, resource: arn };
      });
    const fn = (name: FnName) => running.find((r) => r.name === name)!;
    const direct = (name: FnName) => resolved(fn(name).calls.filter((c) => !c.impliedBy));
    const implied = (name: FnName) => resolved(fn(name).calls.filter((c) => c.impliedBy));
    const settle = () => Promise.all(running.map((r) => r.source.idle(2500)));
    /** Sends a shard message as SQS would deliver it again, and waits until fire has handled it. */
    const redeliver = async (body: string) => {
      const source = fn('fire').source;
      const before = source.stats.records;
      await admin.sqs.send(new SendMessageCommand({ QueueUrl: replayQueueUrl, MessageBody: body }));
      for (const deadline = Date.now() + 30_000; source.stats.records === before; await sleep(100)) {
        if (Date.now() > deadline) throw new Error('fire did not receive the redelivered shard within 30 s');
      }
      await settle();
    };

    beforeAll(async () => {
      moto = await startMoto();
      const config = clientConfig(moto.endpoint, UNAUTHENTICATED);
      admin = { s3: new S3Client(config), sqs: new SQSClient(config), secrets: new SecretsManagerClient(config) };
      mock = await startMockServer({ ttftMs: 20, itlMs: 4, outputTokens: 6, apiKey: API_KEY });
      await admin.s3.send(new CreateBucketCommand({ Bucket: CAPTURE_BUCKET }));
      const secret = await admin.secrets.send(new CreateSecretCommand({ Name: 'replay/key-a', SecretString: API_KEY }));
      secretArns.set('replay/key-a', secret.ARN!);
      deployment = await deployStateful(
        await synthesize([{ name: 'A', url: mock.url, apiKeySecret: 'replay/key-a' }]),
        admin.s3,
        admin.sqs,
      );
      results =
        deployment.resolver.resources[logicalIds(deployment.template, 'AWS::S3::Bucket', 'StatefulResults')[0]!]!.Ref;
      replayQueueUrl =
        deployment.resolver.resources[logicalIds(deployment.template, 'AWS::SQS::Queue', 'StatefulReplayQueue')[0]!]!
          .Ref;
      running = await startFunctions(deployment, moto.endpoint, () => UNAUTHENTICATED, {
        motoSigning: false,
        variant: (name) => variants[name],
        onSend: (name, queueUrl, bodies) => {
          if (name === 'ingest' && queueUrl === replayQueueUrl) shardBodies.push(...bodies);
        },
      });
    }, 120_000);

    afterAll(async () => {
      await Promise.all(running.map((r) => r.source.stop()));
      await mock?.close();
      await moto?.stop();
    });

    it(
      'file mode: a capture file becomes AIPerf results, each function on its own recorded clients',
      async () => {
        await admin.s3.send(
          new PutObjectCommand({
            Bucket: CAPTURE_BUCKET,
            Key: 'datacapture/demo-endpoint/AllTraffic/2026/04/29/00/capture file+1.jsonl',
            Body: readFileSync(SAMPLE),
          }),
        );
        const manifestKey = await waitForObject(admin.s3, results, 'runs/', '/A/run_manifest.json', RUN_WAIT_MS, () =>
          errorsOf(running),
        );
        const manifest = await json(admin.s3, results, manifestKey);
        expect(manifest).toMatchObject({ failed: 0, balanced: true });
        expect(manifest.succeeded).toBe(manifest.scheduled);
        // The key came from Secrets Manager: the target refuses requests without it.
        expect(mock.requests.length).toBeGreaterThan(0);
        expect(mock.requests.every((r) => r.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
        await settle();
      },
      RUN_TEST_TIMEOUT_MS,
    );

    it(
      'mirror mode: replayed at inferenceTime + lag, a large prompt by reference, rolled up per hour',
      async () => {
        // Mirror mode is the ingest's configuration (REPLAY_MODE), switched as pipeline.test.ts does.
        variants.ingest = { env: { [ENV.mode]: 'mirror', [ENV.lagMs]: '6000' } };
        const t0 = Math.floor(Date.now() / 1000) * 1000 - 1000;
        const line = (id: string, ms: number, content: string) =>
          JSON.stringify({
            captureData: {
              endpointInput: {
                observedContentType: 'application/json',
                mode: 'INPUT',
                data: JSON.stringify({ messages: [{ role: 'user', content }] }),
                encoding: 'JSON',
              },
            },
            eventMetadata: { eventId: id, inferenceTime: new Date(t0 + ms).toISOString().replace('.000Z', 'Z') },
            eventVersion: '0',
          });
        // Larger than a shard message carries inline: stored under work/ by the ingest, read by fire.
        const large = 'x'.repeat(DEFAULT_SHARDING.maxInlineBodyBytes + 1024);
        await admin.s3.send(
          new PutObjectCommand({
            Bucket: CAPTURE_BUCKET,
            Key: 'datacapture/demo-endpoint/AllTraffic/mirror.jsonl',
            Body: [line('m-1', 0, 'm-1'), line('m-2', 1000, large)].join('\n') + '\n',
          }),
        );
        const hour = new Date(t0).toISOString().slice(0, 13);
        const hourly = await waitForObject(
          admin.s3,
          results,
          `hours/${hour}/`,
          '/A/run_manifest.json',
          RUN_WAIT_MS,
          () => errorsOf(running),
        );
        expect(await json(admin.s3, results, hourly)).toMatchObject({ scheduled: 2, succeeded: 2 });
        delete variants.ingest;
        await settle();
      },
      RUN_TEST_TIMEOUT_MS,
    );

    it(
      'a lane too large for its message travels by reference: parts written by the ingest under work/, read by fire',
      async () => {
        // Bodies just under the inline limit, so each stays in the lane; together over a message's budget.
        const body = 'y'.repeat(DEFAULT_SHARDING.maxInlineBodyBytes - 1024);
        const count = Math.ceil(DEFAULT_SHARDING.maxMessageBytes / body.length) + 2;
        const lines = Array.from({ length: count }, (_, i) =>
          JSON.stringify({
            captureData: {
              endpointInput: {
                observedContentType: 'application/json',
                mode: 'INPUT',
                data: JSON.stringify({ messages: [{ role: 'user', content: `${i} ${body}` }] }),
                encoding: 'JSON',
              },
            },
            eventMetadata: {
              eventId: `ref-${i}`,
              inferenceTime: `2026-04-29T00:00:${String(i % 2).padStart(2, '0')}Z`,
            },
            eventVersion: '0',
          }),
        );
        const key = 'datacapture/demo-endpoint/AllTraffic/2026/04/29/00/by-reference.jsonl';
        const put = await admin.s3.send(
          new PutObjectCommand({ Bucket: CAPTURE_BUCKET, Key: key, Body: lines.join('\n') + '\n' }),
        );
        const runId = fileRunId('file', CAPTURE_BUCKET, key, put.ETag!.replace(/"/g, ''));
        const manifestKey = await waitForObject(
          admin.s3,
          results,
          runPrefix(runId),
          '/A/run_manifest.json',
          RUN_WAIT_MS,
          () => errorsOf(running),
        );
        expect(await json(admin.s3, results, manifestKey)).toMatchObject({
          scheduled: count,
          succeeded: count,
          balanced: true,
        });
        const partsRead = fn('fire').calls.filter(
          (c) => c.operation === 'GetObject' && c.resource.includes('/_shards/'),
        );
        expect(partsRead.length, "fire read the lane's parts").toBeGreaterThan(0);
        await settle();
      },
      RUN_TEST_TIMEOUT_MS,
    );

    it('recovery paths: a shard delivered again, a shard whose worker died before its results, a shard that arrives early', async () => {
      const shards = shardBodies.map((b) => JSON.parse(b) as { runId: string; target: string; shardId: string });
      expect(shards.length).toBeGreaterThan(1);
      // SQS delivers at least once: the same shard again finds its claim and its results.
      await redeliver(shardBodies[0]!);
      const first = shards[0]!;
      const results0 = `arn:aws:s3:::${results}/${resultsKey(first.runId, first.target, first.shardId)}`;
      expect(
        fn('fire').calls.some((c) => c.operation === 'GetObject' && c.resource === results0 && c.status === 200),
        'fire read the results of the duplicate',
      ).toBe(true);
      // A worker that claimed a shard and died: no results. The redelivery records the loss.
      const dead = shards[1]!;
      await admin.s3.send(
        new DeleteObjectCommand({ Bucket: results, Key: resultsKey(dead.runId, dead.target, dead.shardId) }),
      );
      await redeliver(shardBodies[1]!);
      const results1 = `arn:aws:s3:::${results}/${resultsKey(dead.runId, dead.target, dead.shardId)}`;
      expect(
        fn('fire').calls.some((c) => c.impliedBy?.resource === results1),
        'fire met the missing results with a 404',
      ).toBe(true);
      // A shard that arrives before its lead time (fire's clock 30 minutes behind) is sent back, delayed.
      const skewNs = 30n * 60n * 1_000_000_000n;
      variants.fire = {
        clock: {
          nowNs: () => systemClock.nowNs() - skewNs,
          waitUntil: (t, signal) => systemClock.waitUntil(t + skewNs, signal),
        },
      };
      const sentBefore = fn('fire').calls.filter(
        (c) => c.operation === 'SendMessageBatch' && c.resource.endsWith(':' + replayQueueUrl.split('/').pop()),
      ).length;
      await redeliver(shardBodies[0]!);
      delete variants.fire;
      const sentAfter = fn('fire').calls.filter(
        (c) => c.operation === 'SendMessageBatch' && c.resource.endsWith(':' + replayQueueUrl.split('/').pop()),
      ).length;
      expect(sentAfter, 'fire sent the early shard back to the replay queue').toBeGreaterThan(sentBefore);

      await Promise.all(running.map((r) => r.source.stop()));
      for (const r of running) {
        expect(r.calls.length, `${r.name} made no AWS call`).toBeGreaterThan(0);
        expect(
          r.recordings.flatMap((x) => x.unmapped),
          `${r.name}: unmapped commands`,
        ).toEqual([]);
        expect(r.source.stats.handlerErrors + r.source.stats.failedRecords, `${r.name}: ${errorsOf([r])}`).toBe(0);
      }
    }, 90_000);

    it.each(FUNCTIONS.map((f) => f.name))('every AWS call of %s is allowed by its synthesized policy', (name) => {
      const { statements } = fn(name).policies;
      const denied = distinct(direct(name)).filter((c) => evaluate(statements, c) !== 'allowed');
      expect(denied.map((c) => `${show(c)}: ${evaluate(statements, c)}`)).toEqual([]);
    });

    it.each(FUNCTIONS.map((f) => f.name))(
      '%s gets 404, not 403, for missing keys: s3:ListBucket on the bucket, with no prefix to match',
      (name) => {
        // The request context of S3's implicit ListBucket check is undocumented: it is evaluated
        // with none, so a ListBucket grant limited by s3:prefix does not count (see the recorder).
        const { statements } = fn(name).policies;
        const denied = distinct(implied(name)).filter((c) => evaluate(statements, c) !== 'allowed');
        expect(denied.map((c) => `${show(c)} (for ${c.impliedBy!.operation} of ${c.impliedBy!.resource})`)).toEqual([]);
      },
    );

    it.each(FUNCTIONS.map((f) => f.name))(
      "%s's role holds no managed policy beyond AWSLambdaBasicExecutionRole (logs), so its template statements are its whole grant",
      (name) => {
        expect(fn(name).policies.externalManagedPolicyArns.filter((arn) => arn !== BASIC_EXECUTION_ROLE)).toEqual([]);
      },
    );

    it.each([
      { name: 'ingest' as const, operation: 'PutObject', action: 's3:PutObject' },
      {
        name: 'ingest' as const,
        operation: 'GetObject',
        action: 's3:GetObject',
        resourcePrefix: `arn:aws:s3:::${CAPTURE_BUCKET}/`,
      },
      { name: 'fire' as const, operation: 'SendMessageBatch', action: 'sqs:SendMessage' },
      { name: 'fire' as const, operation: 'GetSecretValue', action: 'secretsmanager:GetSecretValue' },
      { name: 'collect' as const, operation: 'ListObjectsV2', action: 's3:ListBucket' },
    ])(
      'removing the statement that grants $name its $operation call denies that call',
      ({ name, operation, action, resourcePrefix }) => {
        const { statements } = fn(name).policies;
        const call = direct(name).find(
          (c) =>
            c.operation === operation &&
            c.action === action &&
            (!resourcePrefix || c.resource.startsWith(resourcePrefix)),
        );
        expect(call, `${name} recorded no ${operation}`).toBeDefined();
        const { allowedBy } = explain(statements, call!);
        expect(allowedBy, `statements allowing ${show(call!)}`).toHaveLength(1);
        const without = statements.filter((_, i) => i !== allowedBy[0]);
        expect(evaluate(statements, call!)).toBe('allowed');
        expect(evaluate(without, call!)).toBe('implicit-deny');
      },
    );

    // Minimality. Expected to fail on the stack as it is (it.fails: it turns red once a function's
    // grants are exact; then make it `it`). What it finds today, for every function:
    // sqs:ChangeMessageVisibility and sqs:GetQueueUrl on its trigger queue, added by CDK's
    // SqsEventSource (grantConsumeMessages), while Lambda's poller needs only ReceiveMessage,
    // DeleteMessage and GetQueueAttributes (the SQS guide cited above). (It also found collect's
    // s3:GetObject on runs/*, removed in 79b51f8.) The run covers the paths that need the other
    // grants: file and mirror mode, a prompt by reference, a duplicate shard, a shard whose worker
    // died (a 404: s3:ListBucket), an early shard (a hop back to the replay queue).
    it.fails.each(FUNCTIONS.map((f) => f.name))(
      '%s: every granted action and resource is used by some call, and every statement is needed',
      (name) => {
        const { statements, origins } = fn(name).policies;
        const calls = distinct(resolved(fn(name).calls));
        const unused = [...unusedActions(statements, calls), ...unusedResources(statements, calls)].map(
          (u) => `statement ${u.statement} (${origins[u.statement]}): ${u.action ?? u.resource}`,
        );
        const notNeeded = requiredStatements(statements, calls)
          .filter((n) => !n.required)
          .map((n) => `statement ${n.statement} (${origins[n.statement]}) ${JSON.stringify(statements[n.statement])}`);
        const used = [...new Set(calls.map((c) => c.action))].sort();
        console.info(
          `[iam] ${name}: actions used ${used.join(', ')}; unused grants: ` +
            `${unused.length ? unused.join('; ') : 'none'}; statements not needed: ` +
            `${notNeeded.length ? notNeeded.join('; ') : 'none'}`,
        );
        expect({ unused, notNeeded }).toEqual({ unused: [], notNeeded: [] });
      },
    );
  });

  describe('tier 2: moto enforcing IAM (INITIAL_NO_AUTH_ACTION_COUNT=0)', () => {
    let moto: Moto;
    let operator: { s3: S3Client; sqs: SQSClient };
    let mock: MockServer;
    let deployment: Deployment;
    let running: Running[] = [];
    const users = new Map<string, Credentials>();
    let probeWithout: { credentials: Credentials; removed: PolicyStatement } | undefined;

    beforeAll(async () => {
      moto = await startMoto({ env: { INITIAL_NO_AUTH_ACTION_COUNT: '0' } });
      mock = await startMockServer({ ttftMs: 20, itlMs: 4, outputTokens: 6 });
    }, 60_000);

    afterAll(async () => {
      await Promise.all(running.map((r) => r.source.stop()));
      await mock?.close();
      await moto?.stop();
    });

    it('moto refuses credentials that belong to no IAM user from the first request', async () => {
      const s3 = new S3Client(clientConfig(moto.endpoint, UNAUTHENTICATED));
      await expect(s3.send(new CreateBucketCommand({ Bucket: 'nobody' }))).rejects.toMatchObject({
        name: 'InvalidAccessKeyId',
        $metadata: { httpStatusCode: 403 },
      });
    });

    it(
      'runs the pipeline with each function signing as an IAM user that holds its synthesized statements',
      async () => {
        // Setup window: enforcement off while the users and the stateful resources are created.
        await setMotoEnforcement(moto.endpoint, false);
        const setup = clientConfig(moto.endpoint, UNAUTHENTICATED);
        await new S3Client(setup).send(new CreateBucketCommand({ Bucket: CAPTURE_BUCKET }));
        // No API key secret here: moto authorizes Secrets Manager against resource "*" (moto-iam.ts).
        deployment = await deployStateful(
          await synthesize([{ name: 'A', url: mock.url }]),
          new S3Client(setup),
          new SQSClient(setup),
        );
        for (const f of FUNCTIONS) {
          const { statements } = functionPolicies(deployment.template, f.prefix, deployment.resolver);
          users.set(
            f.name,
            await createUserWithPolicy(moto.endpoint, UNAUTHENTICATED, `fn-${f.name}`, withMotoBatchShim(statements)),
          );
        }
        const ingestStatements = functionPolicies(
          deployment.template,
          'StatelessIngest',
          deployment.resolver,
        ).statements;
        const results =
          deployment.resolver.resources[logicalIds(deployment.template, 'AWS::S3::Bucket', 'StatefulResults')[0]!]!;
        const putProbe = iamCallsFor(
          'S3Client',
          'PutObjectCommand',
          { Bucket: results.Ref, Key: 'runs/probe' },
          { region: REGION, partition: 'aws' },
        )[0]!;
        const grant = explain(ingestStatements, putProbe).allowedBy;
        expect(grant, 'the ingest statements allowing PutObject on runs/').toHaveLength(1);
        probeWithout = {
          removed: ingestStatements[grant[0]!]!,
          credentials: await createUserWithPolicy(
            moto.endpoint,
            UNAUTHENTICATED,
            'ingest-without-put',
            withMotoBatchShim(ingestStatements.filter((_, i) => i !== grant[0])),
          ),
        };
        const operatorCreds = await createUserWithPolicy(moto.endpoint, UNAUTHENTICATED, 'operator', [
          { Effect: 'Allow', Action: '*', Resource: '*' },
        ]);
        await setMotoEnforcement(moto.endpoint, true);

        const operatorS3 = new S3Client(clientConfig(moto.endpoint, operatorCreds));
        motoCompatibleS3Signing(operatorS3, operatorCreds);
        operator = { s3: operatorS3, sqs: new SQSClient(clientConfig(moto.endpoint, operatorCreds)) };
        running = await startFunctions(deployment, moto.endpoint, (name) => users.get(name)!, { motoSigning: true });

        // A key of plain characters: moto's signature check cannot take others (moto-iam.ts).
        await operator.s3.send(
          new PutObjectCommand({
            Bucket: CAPTURE_BUCKET,
            Key: 'datacapture/demo-endpoint/AllTraffic/2026/04/29/00/moto-tier.jsonl',
            Body: readFileSync(SAMPLE),
          }),
        );
        const denials = () =>
          running
            .flatMap((r) => r.calls.filter((c) => c.status === 403).map((c) => `${r.name}: ${show(c)} ${c.errorName}`))
            .join('; ');
        expect(FUNCTIONS.map((f) => f.name)).toEqual(running.map((r) => r.name));
        const manifestKey = await waitForObject(
          operator.s3,
          results.Ref,
          'runs/',
          '/A/run_manifest.json',
          RUN_WAIT_MS,
          () => `denied by moto: ${denials() || 'none'}; ${errorsOf(running)}`,
        );
        const manifest = await json(operator.s3, results.Ref, manifestKey);
        expect(manifest).toMatchObject({ failed: 0, balanced: true });
        expect(manifest.succeeded).toBe(manifest.scheduled);
        await Promise.all(running.map((r) => r.source.idle(3000)));
        await Promise.all(running.map((r) => r.source.stop()));
        expect(denials()).toBe('');
        for (const r of running) {
          expect(r.calls.length, `${r.name} made no AWS call`).toBeGreaterThan(0);
          expect(r.recordings.flatMap((x) => x.unmapped)).toEqual([]);
        }
      },
      RUN_TEST_TIMEOUT_MS,
    );

    it('moto and the evaluator agree on every call (moto ignores conditions, so they are dropped for the comparison)', () => {
      expect(running.map((r) => [r.name, r.calls.length > 0])).toEqual(FUNCTIONS.map((f) => [f.name, true]));
      for (const r of running) {
        const statements = withoutConditions(r.policies.statements);
        const disagreements = r.calls
          .filter((c) => !c.impliedBy)
          .map((c) => ({
            c,
            moto: motoDenied(c) ? 'denied' : 'allowed',
            evaluator: evaluate(statements, c) === 'allowed' ? 'allowed' : 'denied',
          }))
          .filter((x) => x.moto !== x.evaluator);
        expect(disagreements.map((x) => `${r.name}: ${show(x.c)}: moto ${x.moto}, evaluator ${x.evaluator}`)).toEqual(
          [],
        );
      }
    });

    it('moto denies a function what its synthesized policy does not grant, as the evaluator does', async () => {
      const creds = users.get('ingest')!;
      const s3 = new S3Client(clientConfig(moto.endpoint, creds));
      const sqs = new SQSClient(clientConfig(moto.endpoint, creds));
      motoCompatibleS3Signing(s3, creds);
      const calls: AwsCall[] = [];
      recordCalls(s3, calls);
      recordCalls(sqs, calls);
      const results =
        deployment.resolver.resources[logicalIds(deployment.template, 'AWS::S3::Bucket', 'StatefulResults')[0]!]!.Ref;
      const ingestQueue =
        deployment.resolver.resources[logicalIds(deployment.template, 'AWS::SQS::Queue', 'StatefulIngestQueue')[0]!]!
          .QueueUrl!;
      const denied = { name: expect.stringMatching(/AccessDenied/), $metadata: { httpStatusCode: 403 } };
      // Its own trigger queue: it receives and deletes there (the event source), never sends.
      // (moto's SQS denial is XML the JSON client cannot parse: the 403 is the verdict.)
      await expect(sqs.send(new SendMessageCommand({ QueueUrl: ingestQueue, MessageBody: 'x' }))).rejects.toMatchObject(
        { $metadata: { httpStatusCode: 403 } },
      );
      // The results bucket outside the prefixes it writes.
      await expect(
        s3.send(new PutObjectCommand({ Bucket: results, Key: 'elsewhere/x', Body: 'x' })),
      ).rejects.toMatchObject(denied);
      // The capture bucket outside the capture prefix, and any write to it.
      await expect(
        s3.send(new GetObjectCommand({ Bucket: CAPTURE_BUCKET, Key: 'other/x.jsonl' })),
      ).rejects.toMatchObject(denied);
      await expect(
        s3.send(new PutObjectCommand({ Bucket: CAPTURE_BUCKET, Key: 'datacapture/x.jsonl', Body: 'x' })),
      ).rejects.toMatchObject(denied);
      expect(calls.every(motoDenied)).toBe(true);
      const ingest = running.find((r) => r.name === 'ingest')!.policies.statements;
      expect(calls.map((c) => `${show(c)}: ${evaluate(ingest, c)}`)).toEqual(
        calls.map((c) => `${show(c)}: implicit-deny`),
      );
    });

    it('without the statement that grants it, moto denies the ingest its results write', async () => {
      const results =
        deployment.resolver.resources[logicalIds(deployment.template, 'AWS::S3::Bucket', 'StatefulResults')[0]!]!.Ref;
      const put = (creds: Credentials) => {
        const s3 = new S3Client(clientConfig(moto.endpoint, creds));
        motoCompatibleS3Signing(s3, creds);
        return s3.send(new PutObjectCommand({ Bucket: results, Key: 'runs/probe', Body: 'x' }));
      };
      await expect(put(users.get('ingest')!)).resolves.toBeDefined();
      await expect(
        put(probeWithout!.credentials),
        `without ${JSON.stringify(probeWithout!.removed)}`,
      ).rejects.toMatchObject({ name: expect.stringMatching(/AccessDenied/), $metadata: { httpStatusCode: 403 } });
    });
  });
});
