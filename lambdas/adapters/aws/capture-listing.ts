/**
 * The capture bucket as the plan function reads it: folders and objects listed with
 * ListObjectsV2 (paginated: at most 1,000 keys or common prefixes a page,
 * https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html), objects read at
 * the version listed (If-Match on its ETag, s3-capture-object.ts).
 *
 * IAM: s3:ListBucket on the capture bucket (with the capture prefix), s3:GetObject on
 * `<capturePrefix>*`.
 */
import { paginateListObjectsV2, S3ServiceException, type S3Client } from '@aws-sdk/client-s3';
import type { CaptureFile, CaptureObjectInfo, CaptureObjects } from '../../core/scheduled-runs/window-plan';
import { CaptureSupersededError } from '../../core/errors';
import { openCaptureObject } from './s3-capture-object';

/** Gone since it was listed (404), or replaced (412, CaptureSupersededError): skipped, not retried. */
function isGone(error: unknown): boolean {
  if (error instanceof CaptureSupersededError) return true;
  return error instanceof S3ServiceException && (error.$metadata.httpStatusCode === 404 || error.name === 'NoSuchKey');
}

export function s3CaptureObjects(client: S3Client, bucket: string): CaptureObjects {
  return {
    describe: (key) => `s3://${bucket}/${key}`,
    async listFolders(prefix) {
      const out: string[] = [];
      for await (const page of paginateListObjectsV2({ client }, { Bucket: bucket, Prefix: prefix, Delimiter: '/' })) {
        for (const p of page.CommonPrefixes ?? []) if (p.Prefix) out.push(p.Prefix);
      }
      return out.sort();
    },
    async listObjects(prefix) {
      const out: CaptureObjectInfo[] = [];
      for await (const page of paginateListObjectsV2({ client }, { Bucket: bucket, Prefix: prefix })) {
        for (const o of page.Contents ?? []) {
          if (o.Key) out.push({ key: o.Key, etag: (o.ETag ?? '').replace(/"/g, ''), size: o.Size ?? 0 });
        }
      }
      return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },
    async open(key, etag): Promise<CaptureFile | null> {
      try {
        const object = await openCaptureObject(client, bucket, key, etag || null);
        return { chunks: object.chunks, readRange: (start, end) => object.readRange(start, end) };
      } catch (error) {
        if (isGone(error)) return null;
        throw error;
      }
    },
  };
}
