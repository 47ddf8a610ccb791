import { GetObjectCommand, ListObjectsV2Command, NoSuchKey, PutObjectCommand, S3ServiceException, type S3Client } from '@aws-sdk/client-s3';
import type { ObjectStore } from '../../ports';

/**
 * ObjectStore on one S3 bucket. `putIfAbsent` is a conditional create (`If-None-Match: *`);
 * `putIfMatch` a conditional replace (`If-Match: <etag>`) or create.
 */
export class S3ObjectStore implements ObjectStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  async get(key: string): Promise<Uint8Array | null> {
    const out = await this.getObject(key);
    return out ? out.bytes : null;
  }

  async getVersioned(key: string): Promise<{ bytes: Uint8Array; etag: string } | null> {
    const out = await this.getObject(key);
    if (!out) return null;
    if (out.etag === undefined) throw new Error(`s3://${this.bucket}/${key}: GetObject returned no ETag`);
    return { bytes: out.bytes, etag: out.etag };
  }

  private async getObject(key: string): Promise<{ bytes: Uint8Array; etag: string | undefined } | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return { bytes: out.Body ? await out.Body.transformToByteArray() : new Uint8Array(), etag: out.ETag };
    } catch (error) {
      if (error instanceof NoSuchKey || statusOf(error) === 404) return null;
      throw error;
    }
  }

  async put(key: string, body: string | Uint8Array, contentType?: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, ...sized(body), ...(contentType ? { ContentType: contentType } : {}) }));
  }

  async putIfAbsent(key: string, body: string | Uint8Array, contentType?: string): Promise<boolean> {
    return this.putIfMatch(key, body, null, contentType);
  }

  /**
   * S3 conditional write: `If-Match: <etag>` replaces only that version, `If-None-Match: *`
   * creates only. A lost race is false: 412 (precondition failed: the key exists, or has
   * another ETag), 409 (ConditionalRequestConflict: a concurrent conditional write to the key
   * was in flight), 404 (If-Match on a key deleted since it was read).
   */
  async putIfMatch(key: string, body: string | Uint8Array, etag: string | null, contentType?: string): Promise<boolean> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...sized(body),
          ...(etag === null ? { IfNoneMatch: '*' } : { IfMatch: etag }),
          ...(contentType ? { ContentType: contentType } : {}),
        }),
      );
      return true;
    } catch (error) {
      const status = statusOf(error);
      if (status === 412 || status === 409 || (etag !== null && (status === 404 || error instanceof NoSuchKey))) return false;
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

/**
 * The body with its length. The SDK leaves Content-Length out for an empty body and then
 * warns that it may be a stream of unknown length; empty objects are normal here (a shard
 * with nothing to report), so say the length.
 */
const sized = (body: string | Uint8Array) => ({ Body: body, ContentLength: typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength });

function statusOf(error: unknown): number | undefined {
  return error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined;
}
