/**
 * What the pipeline stages share: the run record (written last by the ingest: its presence
 * means "fully scheduled"), message decoding (a bad body is a PermanentError: core/errors.ts),
 * and batch sending.
 */
import { z } from 'zod';
import type { Clock, MessageQueue } from '../../ports';
import { PermanentError } from '../errors';

export const INGEST_SHARD = 'ingest';

const shardCountSchema = z.object({ shardId: z.string(), requests: z.number().int().positive() });

export const runRecordSchema = z.object({
  v: z.literal(1),
  runId: z.string(),
  targets: z.array(z.string()).min(1),
  startNs: z.string(),
  deadlineNs: z.string(),
  createdAt: z.string(),
  shards: z.array(shardCountSchema),
  /**
   * Targets whose shards are not `shards` (targets of different kinds take different records:
   * dispatch.ts): each one's own shards. A target not named here has `shards`.
   */
  targetShards: z.record(z.string(), z.array(shardCountSchema)).optional(),
  notScheduledByReason: z.record(z.string(), z.number()),
  inputConfig: z.unknown(),
  /** Mirror mode: the capture hour (`YYYY-MM-DDTHH`) whose roll-up this run joins. */
  hour: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}$/)
    .optional(),
});
export type RunRecord = z.infer<typeof runRecordSchema>;

/** The shards one target of a run reports on. */
export function shardsOf(run: RunRecord, target: string): RunRecord['shards'] {
  return run.targetShards?.[target] ?? run.shards;
}

export type { ResultLine } from './results';

export function decodeJson(bytes: Uint8Array): unknown {
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
}

/** A body that is not JSON is bad input, like one that fails its schema: permanent, not retried. */
export function parseMessageJson(raw: string, what: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new PermanentError(`not a ${what} message: body is not JSON`);
  }
}

/**
 * SQS's limits on SendMessageBatch: at most 10 entries, and at most 1 MiB (1,048,576 bytes)
 * for the whole batch, the sum of every entry's body and attributes, besides each message's
 * own 1 MiB. A batch over either is refused whole (`BatchRequestTooLong`), so batches are
 * packed by bytes as well as by count. The headroom covers what SQS counts beyond the body
 * (ids, delay): generous, not exact.
 */
export const SQS_BATCH_MAX_ENTRIES = 10;
export const SQS_BATCH_MAX_BYTES = 1_048_576;
export const SQS_MESSAGE_MAX_BYTES = 1_048_576;
const PER_ENTRY_HEADROOM_BYTES = 1024;

export interface OutgoingMessage {
  id: string;
  body: string;
  delaySeconds: number;
}

/** Consecutive groups that each fit one SendMessageBatch; order is kept. */
export function packBatches<T extends OutgoingMessage>(messages: readonly T[]): T[][] {
  const batches: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const m of messages) {
    const size = Buffer.byteLength(m.body, 'utf8') + PER_ENTRY_HEADROOM_BYTES;
    if (size > SQS_MESSAGE_MAX_BYTES)
      throw new Error(`message ${m.id} is ${size} bytes: over SQS's 1 MiB message limit`);
    if (batch.length > 0 && (batch.length >= SQS_BATCH_MAX_ENTRIES || bytes + size > SQS_BATCH_MAX_BYTES)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(m);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/**
 * Sends every message, in batches that fit SQS's limits, retrying entries SQS reports as
 * failed. `concurrency` batches are in flight at once (order across batches is then not
 * kept; within the call every message is sent before it returns).
 */
export async function sendAll(
  queue: MessageQueue,
  messages: readonly OutgoingMessage[],
  concurrency = 1,
): Promise<void> {
  await mapLimited(packBatches(messages), concurrency, async (first) => {
    let batch = first;
    for (let attempt = 0; attempt < 3 && batch.length > 0; attempt++) {
      const { failedIds } = await queue.sendBatch(batch);
      batch = batch.filter((m) => failedIds.includes(m.id));
    }
    // Retryable: the handler fails, SQS redelivers the event, and the stage runs again
    // (its idempotency keys make repeated messages harmless).
    if (batch.length > 0) throw new Error(`could not enqueue ${batch.length} message(s) after 3 attempts`);
  });
}

/** `fn` over `items` with at most `limit` calls in flight; results in input order. Stops starting new calls after a failure. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i] as T);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return out;
}

/**
 * Runs `fn` until it succeeds, at most `attempts` times, waiting `baseMs`, 2x, 4x ... between
 * tries on the given clock. The last error is rethrown.
 */
export async function withRetries<T>(
  fn: () => Promise<T>,
  clock: { nowNs(): bigint; waitUntil(ns: bigint): Promise<void> },
  attempts = 5,
  baseMs = 200,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= attempts) throw error;
      await clock.waitUntil(clock.nowNs() + BigInt(baseMs * 2 ** (attempt - 1)) * 1_000_000n);
    }
  }
}

/**
 * Retries of an optimistic update (read an object with its ETag, change it, write it only if
 * it is still that version): attempts in all, and the first backoff, doubling with full
 * jitter, capped at 1 s, waited on the clock. The hour roll-up and the schedule history use it.
 */
export interface ConflictRetry {
  attempts?: number;
  baseDelayMs?: number;
}
/** What an update attempt returns when somebody else wrote first: read again and retry. */
export const CONFLICT: unique symbol = Symbol('conflict');
export const CONFLICT_ATTEMPTS = 8;
const CONFLICT_BASE_DELAY_MS = 25;
const CONFLICT_MAX_DELAY_MS = 1000;

/**
 * Runs `attempt` until it returns something other than CONFLICT, backing off between tries;
 * after the last try, throws `giveUp(attempts)` (so that SQS redelivers the message).
 */
export async function retryOnConflict<T>(
  clock: Pick<Clock, 'nowNs' | 'waitUntil'>,
  retry: ConflictRetry,
  attempt: () => Promise<T | typeof CONFLICT>,
  giveUp: (attempts: number) => Error,
): Promise<T> {
  const attempts = Math.max(1, retry.attempts ?? CONFLICT_ATTEMPTS);
  const baseDelayMs = retry.baseDelayMs ?? CONFLICT_BASE_DELAY_MS;
  for (let n = 1; ; n++) {
    const result = await attempt();
    if (result !== CONFLICT) return result;
    if (n >= attempts) throw giveUp(attempts);
    const delayMs = fullJitterDelayMs(n, baseDelayMs, CONFLICT_MAX_DELAY_MS);
    await clock.waitUntil(clock.nowNs() + BigInt(Math.round(delayMs * 1e6)));
  }
}

/**
 * The wait before retry `n + 1` after `n` failed tries: "full jitter", a uniform draw up to
 * the exponential backoff (`baseMs` doubling, at most `capMs`), so that writers that
 * collided do not collide again in step.
 * https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/
 */
export function fullJitterDelayMs(
  n: number,
  baseMs: number,
  capMs: number,
  random: () => number = Math.random,
): number {
  return random() * Math.min(capMs, baseMs * 2 ** (n - 1));
}
