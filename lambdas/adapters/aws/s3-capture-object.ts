/**
 * A capture object read at one version: every read carries `If-Match` with the ETag the
 * event named, so a file overwritten between the notification and the reads is never mixed
 * with its successor (S3 answers 412; the newer version has an event of its own).
 */
import { GetObjectCommand, S3ServiceException, type S3Client } from '@aws-sdk/client-s3';

import { CaptureSupersededError } from '../../core/errors';

const quoted = (etag: string) => (etag.startsWith('"') ? etag : `"${etag}"`);

function superseded(error: unknown, bucket: string, key: string, etag: string | null): never {
  if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 412) {
    throw new CaptureSupersededError(`s3://${bucket}/${key} is no longer version ${etag}`, { cause: error });
  }
  throw error;
}

export interface CaptureObject {
  /** Without quotes. */
  etag: string;
  size: number;
  chunks: AsyncIterable<Uint8Array>;
  /** Bytes [start, end) of the same version. */
  readRange(start: number, end: number): Promise<Uint8Array>;
}

export async function openCaptureObject(
  client: S3Client,
  bucket: string,
  key: string,
  etag: string | null,
): Promise<CaptureObject> {
  const out = await client
    .send(new GetObjectCommand({ Bucket: bucket, Key: key, ...(etag ? { IfMatch: quoted(etag) } : {}) }))
    .catch((e: unknown) => superseded(e, bucket, key, etag));
  if (!out.Body) throw new Error(`s3://${bucket}/${key} has no body`);
  const version = etag ?? (out.ETag ?? '').replace(/"/g, '');
  return {
    etag: version,
    size: out.ContentLength ?? 0,
    chunks: out.Body as AsyncIterable<Uint8Array>,
    async readRange(start, end) {
      if (end <= start) return new Uint8Array();
      const part = await client
        .send(
          new GetObjectCommand({
            Bucket: bucket,
            Key: key,
            Range: `bytes=${start}-${end - 1}`,
            IfMatch: quoted(version),
          }),
        )
        .catch((e: unknown) => superseded(e, bucket, key, version));
      if (!part.Body) throw new Error(`s3://${bucket}/${key} range ${start}-${end - 1} has no body`);
      return part.Body.transformToByteArray();
    },
  };
}
