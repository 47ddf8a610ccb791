/**
 * A bucket's Region, as S3 tells it: HeadBucket's `x-amz-bucket-region` header, which S3 sends
 * to a request made in any Region of the partition "regardless of the permissions on the
 * bucket" (https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html), on a 200 and
 * on the 301, 400 and 403 it may send instead.
 */
import { HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import type { BucketProbe } from '../../core/deploy/bucket-check';

/** HeadBucket's status and Region header, from the answer or from the error S3 sent instead; throws when S3 did not answer at all. */
export async function probeBucket(s3: S3Client, bucket: string): Promise<BucketProbe> {
  try {
    const out = await s3.send(new HeadBucketCommand({ Bucket: bucket }));
    return { status: out.$metadata.httpStatusCode, region: out.BucketRegion };
  } catch (error) {
    const e = error as {
      $metadata?: { httpStatusCode?: number };
      $response?: { statusCode?: number; headers?: Record<string, string | undefined> };
    };
    const status = e.$metadata?.httpStatusCode ?? e.$response?.statusCode;
    if (status === undefined) throw error; // no answer from S3 at all (network): not a verdict
    return { status, region: e.$response?.headers?.['x-amz-bucket-region'] };
  }
}
