/**
 * The interfaces the core owns. Adapters (local fs, undici, AWS SDK) implement them; the
 * core never imports an adapter. Each handler and the CLI wire real implementations in one
 * composition root.
 */
import type { TargetResult } from './core/types';

/** Time source and precise waiting. Tests use a virtual clock; production uses hrtime. */
export interface Clock {
  /** Current wall-clock time, epoch ns, monotonic within a process. */
  nowNs(): bigint;
  /**
   * Resolves at the given epoch ns, as close as the implementation can (the system clock
   * aims for sub-millisecond), or at once when it has passed. Rejects if the signal aborts.
   */
  waitUntil(epochNs: bigint, signal?: AbortSignal): Promise<void>;
  /** Re-anchors to the wall clock (after a Lambda freeze); a no-op where time cannot drift. */
  resync?(): void;
}

/** One request as the target client sends it. */
export interface TargetRequest {
  requestId: string;
  correlationId: string;
  contentType: string;
  body: Uint8Array;
  streaming: boolean;
  /** Accept header to send (SageMaker: the captured output's content type); the target's default when absent. */
  accept?: string;
  /**
   * Handed over before its due time (TargetClient.preparesAheadMs): the client prepares the
   * request now and writes it no earlier than this, epoch ns; its start is then this instant.
   */
  notBeforeNs?: bigint;
}

/**
 * Sends one request and measures it. Never throws for a failed request: failures are
 * `TargetResult.error`. `requestStartNs` is taken immediately before the request is sent.
 */
export interface TargetClient {
  readonly name: string;
  /**
   * For a client with work of its own before a request can be written (the AWS SDK's
   * serializing and SigV4 signing, milliseconds): the fire loop hands each request over this
   * long before its due time, with `notBeforeNs`, so that the work is done by then.
   */
  readonly preparesAheadMs?: number;
  send(request: TargetRequest, signal?: AbortSignal): Promise<TargetResult>;
  close(): Promise<void>;
}

/**
 * A target's API key that can change while the process runs (a rotated secret). `current`
 * is the key to send now. After the target refused `sentKey` (401/403), `refreshed` reads
 * the key again and gives the one to retry with, or null when it has not changed.
 */
export interface ApiKeySource {
  current(): string;
  refreshed(sentKey: string): Promise<string | null>;
}

/** Structured log without bodies: ids and outcomes only. */
export interface Log {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** A sink for the run's artifacts (local folder or S3 prefix). Keys are relative paths. */
export interface ArtifactStore {
  put(key: string, body: string | Uint8Array, contentType?: string): Promise<void>;
}

export const silentLog: Log = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/**
 * Object storage (S3 in AWS, memory in tests). `putIfAbsent` is the idempotency primitive:
 * a conditional create (S3 `If-None-Match: *`) that returns false when the key exists.
 * `getVersioned` + `putIfMatch` are the optimistic-concurrency pair (S3 conditional writes):
 * read an object with its ETag, then replace it only if nobody has written it since.
 */
export interface ObjectStore {
  get(key: string): Promise<Uint8Array | null>;
  /** The object and the ETag of this version of it; null when the key does not exist. */
  getVersioned(key: string): Promise<{ bytes: Uint8Array; etag: string } | null>;
  put(key: string, body: string | Uint8Array, contentType?: string): Promise<void>;
  putIfAbsent(key: string, body: string | Uint8Array, contentType?: string): Promise<boolean>;
  /**
   * Writes only if the object is still the version read: with an ETag, only if the current
   * object has that ETag (S3 `If-Match`); with null, only if the key does not exist (S3
   * `If-None-Match: *`). False when somebody else wrote (or deleted) it first: re-read, retry.
   * A conflict that is no verdict (S3's 409, a concurrent conditional write in flight) is
   * retried by the implementation, and an error when it persists: never false.
   */
  putIfMatch(key: string, body: string | Uint8Array, etag: string | null, contentType?: string): Promise<boolean>;
  /** Keys under a prefix, sorted. */
  list(prefix: string): Promise<string[]>;
}

/** A delay queue (SQS in AWS). Entries in one call: at most 10 (SendMessageBatch). */
export interface MessageQueue {
  sendBatch(entries: { id: string; body: string; delaySeconds: number }[]): Promise<{ failedIds: string[] }>;
}

/**
 * Tells people about a finished scheduled run (SNS in AWS). A subject (at most 100 ASCII
 * characters, SNS's limit for email) and a short plain-text message: never request bodies.
 */
export interface Notifier {
  publish(subject: string, message: string): Promise<void>;
}
