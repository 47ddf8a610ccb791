/**
 * The capture bucket check (lambdas/handlers/bucket-region-check.ts) against moto_server, with
 * IAM enforced (INITIAL_NO_AUTH_ACTION_COUNT=0): the handler runs on an S3 client in the
 * stack's Region (us-east-1) signing as an IAM user that holds exactly the check function's
 * synthesized statements, and answers CloudFormation on a real HTTP server standing in for the
 * presigned response URL. Buckets in two Regions: the one in us-west-2 fails the deploy with
 * one line naming both Regions; the one in us-east-1 passes. The calls are also evaluated
 * against the statements by AWS's policy logic (test/support/iam/policy-evaluator.ts).
 *
 * moto, unlike S3, sends no x-amz-bucket-region with a 403 (S3 does, "regardless of the
 * permissions on the bucket": https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html):
 * a user without the grant shows what the grant buys on moto, a 200 instead of a refusal.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeBucketCheckHandler, putResponse } from '../../lambdas/handlers/bucket-region-check';
import { recordCalls, type AwsCall } from '../support/iam/aws-call-recorder';
import { ACCOUNT, REGION, synthesizeStack } from '../support/iam/deployment';
import {
  createUserWithPolicy,
  motoCompatibleS3Signing,
  setMotoEnforcement,
  UNAUTHENTICATED,
  withMotoBatchShim,
  type Credentials,
} from '../support/iam/moto-iam';
import { evaluate, type PolicyStatement } from '../support/iam/policy-evaluator';
import {
  functionPolicies,
  logicalIds,
  resolveIntrinsics,
  type CfnTemplate,
  type Resolver,
} from '../support/iam/template-policies';
import { describeWithMoto, startMoto, type Moto } from '../support/moto';

const EAST = 'captures-east';
const WEST = 'captures-west';
const MISSING = 'captures-missing';
const CHECK_FUNCTION = 'StatelessCaptureBucketCheckFunction';

interface Received {
  method: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** The presigned URL's stand-in: records each PUT CloudFormation would receive. */
async function startResponseServer(): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
      });
      res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/response?X-Amz-Signature=x`,
    received,
    server,
  };
}

/**
 * The stack's check for `bucket`, as synthesized: its custom resource's properties resolved for us-east-1, and the
 * function's statements.
 */
async function synthesizedCheck(
  bucket: string,
): Promise<{ properties: Record<string, string>; statements: PolicyStatement[] }> {
  const template: CfnTemplate = await synthesizeStack(
    { captureBucket: bucket, capturePrefix: 'datacapture/', targets: [{ name: 'A', url: 'http://127.0.0.1:9' }] },
    `Check${bucket.length}`,
  );
  const resolver: Resolver = {
    partition: 'aws',
    region: REGION,
    accountId: ACCOUNT,
    resources: Object.fromEntries(
      Object.keys(template.Resources).map((id) => [
        id,
        { Ref: id, Arn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${id}` },
      ]),
    ),
  };
  const [checkId] = logicalIds(template, 'Custom::CaptureBucketCheck');
  const properties = resolveIntrinsics(template.Resources[checkId!]!.Properties, template, resolver) as Record<
    string,
    string
  >;
  return { properties, statements: functionPolicies(template, CHECK_FUNCTION, resolver).statements };
}

describeWithMoto('the capture bucket check on moto, IAM enforced', () => {
  let moto: Moto;
  let responses: Awaited<ReturnType<typeof startResponseServer>>;
  const users = new Map<string, Credentials>();
  let checks: Record<'east' | 'west', Awaited<ReturnType<typeof synthesizedCheck>>>;

  beforeAll(async () => {
    checks = { east: await synthesizedCheck(EAST), west: await synthesizedCheck(WEST) };
    moto = await startMoto({ env: { INITIAL_NO_AUTH_ACTION_COUNT: '0' } });
    responses = await startResponseServer();
    await setMotoEnforcement(moto.endpoint, false);
    const admin = (region: string) =>
      new S3Client({ region, endpoint: moto.endpoint, forcePathStyle: true, credentials: UNAUTHENTICATED });
    await admin('us-east-1').send(new CreateBucketCommand({ Bucket: EAST }));
    await admin('us-west-2').send(
      new CreateBucketCommand({ Bucket: WEST, CreateBucketConfiguration: { LocationConstraint: 'us-west-2' } }),
    );
    // The statements as moto needs them to mean what they mean in AWS (moto-iam.ts: HeadBucket).
    users.set(
      EAST,
      await createUserWithPolicy(
        moto.endpoint,
        UNAUTHENTICATED,
        'check-east',
        withMotoBatchShim(checks.east.statements),
      ),
    );
    users.set(
      WEST,
      await createUserWithPolicy(
        moto.endpoint,
        UNAUTHENTICATED,
        'check-west',
        withMotoBatchShim(checks.west.statements),
      ),
    );
    users.set(
      'nothing',
      await createUserWithPolicy(moto.endpoint, UNAUTHENTICATED, 'check-nothing', [
        { Effect: 'Allow', Action: 'sqs:GetQueueUrl', Resource: '*' },
      ]),
    );
    // As the stack would grant it for a bucket that does not exist.
    users.set(
      MISSING,
      await createUserWithPolicy(
        moto.endpoint,
        UNAUTHENTICATED,
        'check-missing',
        withMotoBatchShim([{ Effect: 'Allow', Action: 's3:ListBucket', Resource: `arn:aws:s3:::${MISSING}` }]),
      ),
    );
    await setMotoEnforcement(moto.endpoint, true);
  }, 120_000);

  afterAll(async () => {
    responses?.server.close();
    await moto?.stop();
  });

  /**
   * One request through the real handler, the S3 client in the stack's Region signing as `user`; the PUT
   * CloudFormation got, and the calls made.
   */
  async function run(
    user: string,
    requestType: 'Create' | 'Delete',
    properties: Record<string, string>,
  ): Promise<{ response: Received; calls: AwsCall[] }> {
    const creds = users.get(user)!;
    const s3 = new S3Client({
      region: REGION,
      endpoint: moto.endpoint,
      forcePathStyle: true,
      credentials: creds,
      maxAttempts: 1,
    });
    motoCompatibleS3Signing(s3, creds);
    const calls: AwsCall[] = [];
    recordCalls(s3, calls);
    const before = responses.received.length;
    const event = {
      RequestType: requestType,
      ServiceToken: properties.ServiceToken,
      ResponseURL: responses.url,
      StackId: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/CaptureReplay/1`,
      RequestId: `req-${before}`,
      LogicalResourceId: 'StatelessCaptureBucketCheck',
      ResourceType: 'Custom::CaptureBucketCheck',
      ResourceProperties: properties,
      ...(requestType === 'Delete' ? { PhysicalResourceId: 'capture-bucket-check-StatelessCaptureBucketCheck' } : {}),
    } as unknown as CloudFormationCustomResourceEvent;
    await makeBucketCheckHandler(() => ({
      s3,
      logger: new Logger({ serviceName: 'capture-replay' }),
      respond: putResponse,
    }))(event);
    expect(responses.received.length).toBe(before + 1);
    return { response: responses.received[before]!, calls };
  }

  it('fails the deploy for a bucket in us-west-2 with one line naming both Regions, in a response CloudFormation reads', async () => {
    const { response, calls } = await run(WEST, 'Create', checks.west.properties);
    expect(response.method).toBe('PUT');
    // Signed without a Content-Type: the PUT must carry none.
    expect(response.headers['content-type']).toBeUndefined();
    expect(response.body).toEqual({
      Status: 'FAILED',
      Reason:
        'capture bucket captures-west is in us-west-2 and the stack in us-east-1: deploy the stack to us-west-2, the Region of the bucket',
      PhysicalResourceId: 'capture-bucket-check-StatelessCaptureBucketCheck',
      StackId: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/CaptureReplay/1`,
      RequestId: expect.any(String),
      LogicalResourceId: 'StatelessCaptureBucketCheck',
    });
    expect(String(response.body.Reason)).not.toContain('\n');
    // HeadBucket answered by moto under the synthesized grant, which AWS's rules allow too.
    expect(calls.map((c) => [c.operation, c.status, evaluate(checks.west.statements, c)])).toEqual([
      ['HeadBucket', 200, 'allowed'],
    ]);
  });

  it('passes a bucket in us-east-1, with its Region', async () => {
    const { response, calls } = await run(EAST, 'Create', checks.east.properties);
    expect(response.body).toMatchObject({ Status: 'SUCCESS', Data: { Region: 'us-east-1' } });
    expect(calls.map((c) => [c.action, c.resource, evaluate(checks.east.statements, c)])).toEqual([
      ['s3:ListBucket', `arn:aws:s3:::${EAST}`, 'allowed'],
    ]);
  });

  it(
    "the grant is on the configured bucket only: the east check's user is refused the west bucket, and moto, " +
      'unlike S3, says no Region then',
    async () => {
      const { response, calls } = await run(EAST, 'Create', checks.west.properties);
      expect(calls.map((c) => [c.status, evaluate(checks.east.statements, c)])).toEqual([[403, 'implicit-deny']]);
      expect(response.body).toMatchObject({
        Status: 'FAILED',
        Reason:
          'the Region of capture bucket captures-west is unknown: HeadBucket answered 403 without an x-amz-bucket-region header',
      });
      const denied = await run('nothing', 'Create', checks.east.properties);
      expect(denied.response.body).toMatchObject({ Status: 'FAILED' });
    },
  );

  it('a bucket that does not exist fails in one line; Delete succeeds without asking S3', async () => {
    const missing = await run(MISSING, 'Create', { ...checks.west.properties, BucketName: MISSING });
    expect(missing.response.body).toMatchObject({
      Status: 'FAILED',
      Reason: 'capture bucket captures-missing does not exist (HeadBucket answered 404): check captureBucket',
    });
    const deleted = await run(WEST, 'Delete', checks.west.properties);
    expect(deleted.response.body).toMatchObject({
      Status: 'SUCCESS',
      PhysicalResourceId: 'capture-bucket-check-StatelessCaptureBucketCheck',
    });
    expect(deleted.calls).toEqual([]);
  });
});
