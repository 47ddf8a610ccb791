/**
 * Capture bucket check. Trigger: CloudFormation, for the custom resource Custom::CaptureBucketCheck
 * (lib/capture-bucket-check.ts), before the capture notification or rule is created.
 * Input: ResourceProperties { BucketName, StackRegion, StackAccount, DeclaredAccount? }.
 * Output: the response CloudFormation waits for, PUT to the request's presigned ResponseURL
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/crpg-ref-responses.html):
 * SUCCESS with the bucket's Region, or FAILED with one line naming both Regions (core/deploy/bucket-check.ts).
 * Failure: an unexpected error is reported FAILED with its message, never left unanswered;
 * Delete always succeeds (removing the check changes nothing).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { S3Client } from '@aws-sdk/client-s3';
import type { CloudFormationCustomResourceEvent, CloudFormationCustomResourceResponse } from 'aws-lambda';
import { probeBucket } from '../adapters/aws/bucket-region';
import { bucketCheckVerdict, type BucketCheckInput } from '../core/deploy/bucket-check';

export interface BucketCheckDeps {
  s3: S3Client;
  logger: Logger;
  /** PUTs the response to CloudFormation's presigned URL. */
  respond: (url: string, body: string) => Promise<void>;
}

/**
 * The presigned URL is signed without a Content-Type: the body goes as bytes, which fetch sends
 * without one. Three attempts, as a lost answer leaves the stack waiting for ServiceTimeout.
 */
export async function putResponse(url: string, body: string): Promise<void> {
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const res = await fetch(url, { method: 'PUT', body: Buffer.from(body, 'utf8') });
      await res.arrayBuffer();
      if (res.ok) return;
      last = new Error(`CloudFormation response URL answered HTTP ${res.status}`);
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
  }
  throw last instanceof Error ? last : new Error(String(last));
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 1000);

function inputOf(event: CloudFormationCustomResourceEvent): BucketCheckInput {
  const p = event.ResourceProperties as Record<string, unknown>;
  const text = (key: string) => (typeof p[key] === 'string' && p[key] !== '' ? (p[key] as string) : undefined);
  const bucket = text('BucketName');
  const stackRegion = text('StackRegion');
  if (!bucket || !stackRegion) throw new Error('the custom resource needs BucketName and StackRegion');
  const declaredAccount = text('DeclaredAccount');
  const stackAccount = text('StackAccount');
  return {
    bucket,
    stackRegion,
    ...(declaredAccount ? { declaredAccount } : {}),
    ...(stackAccount ? { stackAccount } : {}),
  };
}

/** The response to one request: what the check found, in CloudFormation's terms. */
export async function checkResponse(
  event: CloudFormationCustomResourceEvent,
  s3: S3Client,
): Promise<CloudFormationCustomResourceResponse> {
  const common = { StackId: event.StackId, RequestId: event.RequestId, LogicalResourceId: event.LogicalResourceId };
  const fallbackId = `capture-bucket-check-${event.LogicalResourceId}`;
  if (event.RequestType === 'Delete')
    return { ...common, Status: 'SUCCESS', PhysicalResourceId: event.PhysicalResourceId };
  const physicalId = event.RequestType === 'Update' ? event.PhysicalResourceId : fallbackId;
  try {
    const input = inputOf(event);
    const verdict = bucketCheckVerdict(input, await probeBucket(s3, input.bucket));
    if (verdict.ok)
      return { ...common, Status: 'SUCCESS', PhysicalResourceId: physicalId, Data: { Region: verdict.region } };
    return { ...common, Status: 'FAILED', PhysicalResourceId: physicalId, Reason: verdict.reason };
  } catch (error) {
    return {
      ...common,
      Status: 'FAILED',
      PhysicalResourceId: physicalId,
      Reason: oneLine(`the capture bucket check failed: ${(error as Error).message}`),
    };
  }
}

export function makeBucketCheckHandler(getDeps: () => BucketCheckDeps) {
  return async (event: CloudFormationCustomResourceEvent): Promise<void> => {
    const deps = getDeps();
    const response = await checkResponse(event, deps.s3);
    // No bucket contents and no secrets here: the verdict is safe to log.
    deps.logger.info('capture bucket check', {
      requestType: event.RequestType,
      status: response.Status,
      ...(response.Status === 'FAILED' ? { reason: response.Reason } : {}),
    });
    await deps.respond(event.ResponseURL, JSON.stringify(response));
  };
}

// The function's own Region (AWS_REGION): HeadBucket answers with the bucket's Region from any.
let deps: BucketCheckDeps | undefined;
export const handler = makeBucketCheckHandler(
  () =>
    (deps ??= { s3: new S3Client({}), logger: new Logger({ serviceName: 'capture-replay' }), respond: putResponse }),
);
