import {
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3ServiceException,
  type S3Client,
} from '@aws-sdk/client-s3';
import { setTimeout as sleep } from 'node:timers/promises';
import { fullJitterDelayMs } from '../../core/pipeline/common';
import type { ObjectStore } from '../../ports';

/**
 * How a conditional PutObject answered 409 is retried. The SDK's own retries leave a 409
 * alone (its transient statuses are 500, 502, 503 and 504), so the store retries it.
 */
export interface ConflictRetryOptions {
  /** Tries in all, the first included (default CONDITIONAL_PUT_ATTEMPTS). */
  attempts?: number;
  /** The first backoff, doubling with full jitter up to 1 s (default 50 ms). */
  baseDelayMs?: number;
  /** Waits `ms` (tests pass one that records instead of waiting). */
  sleep?: (ms: number) => Promise<unknown>;
}

/**
 * A 409 means another conditional write to the same key was in flight at that moment; the
 * retry either succeeds or meets that write's outcome (412), so each further 409 needs yet
 * another writer racing for the same key. Our keys have few writers (a shard's deliveries,
 * the finalisers of one hour, one schedule's runs): five tries cover four others racing at
 * once within about 0.75 s of backoff at most. After that the write throws, a retryable
 * error: the SQS message comes back and the stage runs again, a bounded retry of its own
 * (the queue's maxReceiveCount, then its dead-letter queue).
 */
export const CONDITIONAL_PUT_ATTEMPTS = 5;
const CONFLICT_BASE_DELAY_MS = 50;
const CONFLICT_MAX_DELAY_MS = 1000;

/**
 * ObjectStore on one S3 bucket. `putIfAbsent` is a conditional create (`If-None-Match: *`);
 * `putIfMatch` a conditional replace (`If-Match: <etag>`) or create.
 */
export class S3ObjectStore implements ObjectStore {
  private readonly attempts: number;
  private readonly baseDelayMs: number;
  private readonly sleep: (ms: number) => Promise<unknown>;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    conflictRetry: ConflictRetryOptions = {},
  ) {
    this.attempts = Math.max(1, conflictRetry.attempts ?? CONDITIONAL_PUT_ATTEMPTS);
    this.baseDelayMs = conflictRetry.baseDelayMs ?? CONFLICT_BASE_DELAY_MS;
    this.sleep = conflictRetry.sleep ?? sleep;
  }

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
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        ...sized(body),
        ...(contentType ? { ContentType: contentType } : {}),
      }),
    );
  }

  async putIfAbsent(key: string, body: string | Uint8Array, contentType?: string): Promise<boolean> {
    return this.putIfMatch(key, body, null, contentType);
  }

  /**
   * S3 conditional write: `If-Match: <etag>` replaces only that version, `If-None-Match: *`
   * creates only. Only a lost race is false: 412 (precondition failed: the key exists, or has
   * another ETag), 404 (If-Match on a key deleted since it was read). A 409
   * (ConditionalRequestConflict: a concurrent conditional write to the key was in flight) is
   * no verdict: "If a conflicting operation occurs during the upload S3 returns a 409
   * ConditionalRequestConflict response. On a 409 failure you should retry the upload"
   * (If-None-Match; for If-Match: "fetch the object's ETag and retry the upload"),
   * https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html, and
   * https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html. So it is
   * retried here, with backoff, and throws once the tries run out. An If-Match retry keeps
   * its ETag: if the object changed meanwhile the answer is 412, and the caller re-reads.
   */
  async putIfMatch(
    key: string,
    body: string | Uint8Array,
    etag: string | null,
    contentType?: string,
  ): Promise<boolean> {
    const input = {
      Bucket: this.bucket,
      Key: key,
      ...sized(body),
      ...(etag === null ? { IfNoneMatch: '*' } : { IfMatch: etag }),
      ...(contentType ? { ContentType: contentType } : {}),
    };
    for (let n = 1; ; n++) {
      try {
        // A command per try: the SDK resolves a command's middleware on each send.
        await this.client.send(new PutObjectCommand(input));
        return true;
      } catch (error) {
        const status = statusOf(error);
        if (status === 412 || (etag !== null && (status === 404 || error instanceof NoSuchKey))) return false;
        if (status !== 409) throw error;
        if (n >= this.attempts) {
          throw new Error(
            `s3://${this.bucket}/${key}: conditional PutObject answered 409 (ConditionalRequestConflict) ${n} times: retry later`,
            { cause: error },
          );
        }
        await this.sleep(fullJitterDelayMs(n, this.baseDelayMs, CONFLICT_MAX_DELAY_MS));
      }
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const out = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
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
const sized = (body: string | Uint8Array) => ({
  Body: body,
  ContentLength: typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength,
});

function statusOf(error: unknown): number | undefined {
  return error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined;
}
