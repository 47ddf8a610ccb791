/**
 * The capture bucket check's verdict (lambdas/core/deploy/bucket-check.ts) and the response the
 * handler sends CloudFormation for each request type, with HeadBucket's answers as S3 gives
 * them (a 200, a 301 from another Region, a 403 with the Region header, a 404), from a stub
 * client: the same handler against moto, with IAM, is test/integration/bucket-check.test.ts.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { bucketCheckVerdict } from '../../../lambdas/core/deploy/bucket-check';
import { probeBucket } from '../../../lambdas/adapters/aws/bucket-region';
import { checkResponse } from '../../../lambdas/handlers/bucket-region-check';

const input = { bucket: 'captures', stackRegion: 'us-east-1' };

describe('bucketCheckVerdict', () => {
  it("passes a bucket in the stack's Region, whatever HeadBucket's status", () => {
    for (const status of [200, 403])
      expect(bucketCheckVerdict(input, { status, region: 'us-east-1' })).toEqual({ ok: true, region: 'us-east-1' });
  });

  it('fails a bucket in another Region with one line naming both', () => {
    expect(bucketCheckVerdict(input, { status: 301, region: 'eu-west-1' })).toEqual({
      ok: false,
      reason:
        'capture bucket captures is in eu-west-1 and the stack in us-east-1: deploy the stack to eu-west-1, the Region of the bucket',
    });
  });

  it('fails a missing bucket, and an answer without a Region, saying which', () => {
    expect(bucketCheckVerdict(input, { status: 404, region: undefined })).toEqual({
      ok: false,
      reason: 'capture bucket captures does not exist (HeadBucket answered 404): check captureBucket',
    });
    expect(bucketCheckVerdict(input, { status: 403, region: undefined })).toEqual({
      ok: false,
      reason:
        'the Region of capture bucket captures is unknown: HeadBucket answered 403 without an x-amz-bucket-region header',
    });
  });

  it('fails a declared owner that is not the account deployed to (synth could not compare them)', () => {
    const verdict = bucketCheckVerdict(
      { ...input, declaredAccount: '210987654321', stackAccount: '123456789012' },
      { status: 200, region: 'us-east-1' },
    );
    expect(verdict).toMatchObject({
      ok: false,
      reason: expect.stringMatching(
        /^captureBucketAccount 210987654321 is not the account this stack deploys to \(123456789012\)/,
      ),
    });
    expect(
      bucketCheckVerdict(
        { ...input, declaredAccount: '123456789012', stackAccount: '123456789012' },
        { status: 200, region: 'us-east-1' },
      ).ok,
    ).toBe(true);
  });
});

/** A client whose send answers as S3 would: an output, or an error carrying the raw response. */
function stubS3(answer: { status: number; region?: string }): S3Client {
  return {
    send: async () => {
      if (answer.status === 200) return { $metadata: { httpStatusCode: 200 }, BucketRegion: answer.region };
      const error = Object.assign(new Error('UnknownError'), { $metadata: { httpStatusCode: answer.status } });
      Object.defineProperty(error, '$response', {
        value: { statusCode: answer.status, headers: answer.region ? { 'x-amz-bucket-region': answer.region } : {} },
      });
      throw error;
    },
  } as unknown as S3Client;
}

const event = (
  requestType: 'Create' | 'Update' | 'Delete',
  properties: Record<string, string> = { BucketName: 'captures', StackRegion: 'us-east-1' },
) =>
  ({
    RequestType: requestType,
    ServiceToken: 'arn:aws:lambda:us-east-1:123456789012:function:check',
    ResponseURL: 'https://cloudformation-custom-resource-response.example/x',
    StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/S/1',
    RequestId: 'req-1',
    LogicalResourceId: 'Check',
    ResourceType: 'Custom::CaptureBucketCheck',
    ResourceProperties: { ServiceToken: 'x', ...properties },
    ...(requestType === 'Create'
      ? {}
      : { PhysicalResourceId: 'capture-bucket-check-Check', OldResourceProperties: {} }),
  }) as unknown as CloudFormationCustomResourceEvent;

describe("the handler's response", () => {
  it('reads the Region from a refusal (403) or a redirect (301) as from a success', async () => {
    expect(await probeBucket(stubS3({ status: 403, region: 'eu-west-1' }), 'captures')).toEqual({
      status: 403,
      region: 'eu-west-1',
    });
    expect(await probeBucket(stubS3({ status: 301, region: 'eu-west-1' }), 'captures')).toEqual({
      status: 301,
      region: 'eu-west-1',
    });
    expect(await probeBucket(stubS3({ status: 200, region: 'us-east-1' }), 'captures')).toEqual({
      status: 200,
      region: 'us-east-1',
    });
  });

  it("Create and Update: SUCCESS with the Region, or FAILED with the line; the request's ids copied", async () => {
    const ok = await checkResponse(event('Create'), stubS3({ status: 200, region: 'us-east-1' }));
    expect(ok).toEqual({
      Status: 'SUCCESS',
      PhysicalResourceId: 'capture-bucket-check-Check',
      StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/S/1',
      RequestId: 'req-1',
      LogicalResourceId: 'Check',
      Data: { Region: 'us-east-1' },
    });
    const moved = await checkResponse(event('Update'), stubS3({ status: 301, region: 'eu-west-1' }));
    expect(moved).toMatchObject({
      Status: 'FAILED',
      PhysicalResourceId: 'capture-bucket-check-Check',
      Reason:
        'capture bucket captures is in eu-west-1 and the stack in us-east-1: deploy the stack to eu-west-1, the Region of the bucket',
    });
  });

  it('Delete succeeds without asking S3; a malformed request fails in one line instead of going unanswered', async () => {
    const unreachable = { send: async () => Promise.reject(new Error('not called')) } as unknown as S3Client;
    expect(await checkResponse(event('Delete'), unreachable)).toMatchObject({
      Status: 'SUCCESS',
      PhysicalResourceId: 'capture-bucket-check-Check',
    });
    expect(await checkResponse(event('Create', { StackRegion: 'us-east-1' }), unreachable)).toMatchObject({
      Status: 'FAILED',
      Reason: 'the capture bucket check failed: the custom resource needs BucketName and StackRegion',
    });
    expect(await checkResponse(event('Create'), unreachable)).toMatchObject({
      Status: 'FAILED',
      Reason: 'the capture bucket check failed: not called',
    });
  });
});
