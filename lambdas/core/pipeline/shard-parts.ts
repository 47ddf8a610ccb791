/**
 * A shard's requests by reference: when they do not fit one SQS message, the scheduler writes
 * them as objects under `work/<run>/_shards/...` (parts of at most PART_MAX_REQUESTS requests,
 * each a JSON array of wire requests) and the message carries the parts' prefix and count. The
 * fire stage reads them during its lead, before it claims the shard: a failed read leaves the
 * shard unclaimed, and its redelivery tries again.
 *
 * Parts follow how the scheduler reads a slot: a chunk of the slot's requests at a time (memory
 * holds a chunk, not the slot), each chunk dealt to the slot's lanes, so each lane gets one part
 * per chunk. A chunk is `partRequests(lanes)` requests per lane.
 */
import { z } from 'zod';
import type { ObjectStore } from '../../ports';
import { PermanentError } from '../errors';
import { decodeJson, mapLimited } from './common';
import { wireRequestSchema, type ShardMessage, type WireRequest } from './shards';

/** At most this many requests a part (about 2.5 MB of chat requests). */
export const PART_MAX_REQUESTS = 1024;
/** A chunk of a slot the scheduler holds at once: at most this many requests, all lanes together. */
export const CHUNK_MAX_REQUESTS = 65_536;
/** Parts read at once by the fire stage. */
const PART_READS_AT_ONCE = 16;

/** Requests per lane in one chunk of a slot with `lanes` lanes (a lane's parts hold this many, its last fewer). */
export function partRequests(lanes: number): number {
  return Math.max(1, Math.min(PART_MAX_REQUESTS, Math.floor(CHUNK_MAX_REQUESTS / Math.max(1, lanes))));
}

export const partKey = (prefix: string, part: number) => `${prefix}${part}`;

export function encodePart(requests: readonly WireRequest[]): string {
  return JSON.stringify(requests);
}

const partSchema = z.array(wireRequestSchema);

/**
 * The shard's wire requests: inline, or read from its parts in order. A missing part throws (an
 * infrastructure problem: retried); a part that is not a list of wire requests, or parts that do
 * not add up to the count the message names, is a PermanentError.
 */
export async function shardRequests(message: ShardMessage, store: ObjectStore): Promise<WireRequest[]> {
  const ref = message.requestsRef;
  if (!ref) return message.requests;
  const parts = await mapLimited(
    Array.from({ length: ref.parts }, (_, i) => i),
    PART_READS_AT_ONCE,
    async (i) => {
      const key = partKey(ref.prefix, i);
      const bytes = await store.get(key);
      if (!bytes) throw new Error(`shard ${message.shardId}: part ${key} is missing`);
      let parsed;
      try {
        parsed = partSchema.safeParse(decodeJson(bytes));
      } catch (error) {
        throw new PermanentError(
          `shard ${message.shardId}: part ${key} is not JSON (${error instanceof Error ? error.message : String(error)})`,
        );
      }
      if (!parsed.success)
        throw new PermanentError(
          `shard ${message.shardId}: part ${key} is not a list of requests: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
        );
      return parsed.data;
    },
  );
  const requests = parts.flat();
  if (requests.length !== ref.requests)
    throw new PermanentError(
      `shard ${message.shardId}: its parts hold ${requests.length} requests, the message says ${ref.requests}`,
    );
  return requests;
}
