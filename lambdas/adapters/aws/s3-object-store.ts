import { GetObjectCommand, ListObjectsV2Command, NoSuchKey, PutObjectCommand, S3ServiceException, type S3Client } from '@aws-sdk/client-s3';
import type { ObjectStore } from '../../ports';

/** ObjectStore on one S3 bucket. `putIfAbsent` is a conditional create (`If-None-Match: *`). */
export class S3ObjectStore implements ObjectStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  async get(key: string): Promise<Uint8Array | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return out.Body ? await out.Body.transformToByteArray() : new Uint8Array();
    } catch (error) {
      if (error instanceof NoSuchKey || (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404)) return null;
      throw error;
    }
  }

  async put(key: string, body: string | Uint8Array, contentType?: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ...(contentType ? { ContentType: contentType } : {}) }));
  }

  async putIfAbsent(key: string, body: string | Uint8Array, contentType?: string): Promise<boolean> {
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, IfNoneMatch: '*', ...(contentType ? { ContentType: contentType } : {}) }));
      return true;
    } catch (error) {
      // 412: the key exists. 409: a concurrent conditional write to the same key is in flight;
      // either way somebody else holds it.
      const status = error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined;
      if (status === 412 || status === 409) return false;
      throw error;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const out = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }));
      for (const o of out.Contents ?? []) if (o.Key) keys.push(o.Key);
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }
}

/** A capture object as a byte stream, with the ETag that identifies this version of it. */
export async function openS3Object(client: S3Client, bucket: string, key: string): Promise<{ etag: string; chunks: AsyncIterable<Uint8Array> }> {
  const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  if (!out.Body) throw new Error(`s3://${bucket}/${key} has no body`);
  return { etag: (out.ETag ?? '').replace(/"/g, ''), chunks: out.Body as AsyncIterable<Uint8Array> };
}
