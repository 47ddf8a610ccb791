/**
 * Cutting a plan into the units SQS carries. A SLOT is a window of `slotMs` of due time; its
 * requests are dealt to LANES, one shard each: request i of the slot goes to lane i mod n, so
 * each shard (and the fire invocation that holds it) sends at a bounded rate spread over the
 * whole slot instead of a burst of consecutive requests. n is the fewest lanes that keep every
 * shard within `maxShardRequests` over the slot and within `maxShardRequests / slot` requests
 * in any whole second of it (a burst in the slot gets more lanes, not faster ones).
 * A shard whose requests do not fit one message travels by reference (shard-parts.ts); a body
 * larger than `maxInlineBodyBytes` travels by reference on its own (stored once in the results
 * bucket), so one large prompt never breaks a message's size limit.
 */
import { z } from 'zod';
import type { ScheduledRequest } from '../types';

export interface ShardingOptions {
  slotMs: number;
  /** Requests one shard holds at most over its slot; over the slot's seconds, its rate bound. */
  maxShardRequests: number;
  /** Serialized message budget; SQS allows 1 MiB, keep headroom for attributes. Larger shards travel by reference. */
  maxMessageBytes: number;
  maxInlineBodyBytes: number;
}

export const DEFAULT_SHARDING: ShardingOptions = {
  slotMs: 1000,
  maxShardRequests: 250,
  // SQS takes 1 MiB per message and per batch; SQS bills by 64 KB chunk whatever the
  // message size, so fuller messages cost no more in SQS and need fewer S3 objects.
  maxMessageBytes: 768 * 1024,
  maxInlineBodyBytes: 64 * 1024,
};

export interface Shard<T = ScheduledRequest> {
  shardId: string;
  slotIndex: number;
  /** Its lane in the slot, and how many lanes the slot has: it holds the slot's requests lane, lane + lanes, ... */
  lane: number;
  lanes: number;
  requests: T[];
}

/** Fixed per-request overhead of the JSON around a body (ids, times, source), generous. */
const REQUEST_OVERHEAD_BYTES = 600;

/** Bytes one request takes in a shard message: inline bodies travel base64. */
export function wireBytes(bodyBytes: number, sourceFile: string, o: ShardingOptions): number {
  const inline = bodyBytes <= o.maxInlineBodyBytes;
  return REQUEST_OVERHEAD_BYTES + sourceFile.length + (inline ? Math.ceil(bodyBytes / 3) * 4 : 0);
}

export function wireSize(request: ScheduledRequest, o: ShardingOptions): number {
  return wireBytes(request.body.byteLength, request.source.file, o);
}

/**
 * Lanes for a slot of `count` requests whose busiest whole second (of due time) holds
 * `busiestSecond`: enough that no lane holds more than `maxShardRequests`, nor sends more than
 * `maxShardRequests / slot` in a second.
 */
export function lanesFor(
  count: number,
  busiestSecond: number,
  o: Pick<ShardingOptions, 'slotMs' | 'maxShardRequests'>,
): number {
  const byCount = Math.ceil(count / o.maxShardRequests);
  const perSecond = (o.maxShardRequests * 1000) / o.slotMs;
  const byRate = o.slotMs >= 1000 ? Math.ceil(busiestSecond / perSecond) : 0;
  return Math.max(1, byCount, byRate);
}

/** The slots of items sorted by offset: [first, end) positions and the slot's lanes. */
export function slotsOf<T extends { offsetMs: number }>(
  items: readonly T[],
  o: Pick<ShardingOptions, 'slotMs' | 'maxShardRequests'>,
): { slotIndex: number; first: number; end: number; lanes: number }[] {
  const slots: { slotIndex: number; first: number; end: number; lanes: number }[] = [];
  for (let a = 0; a < items.length; ) {
    const slotIndex = Math.floor((items[a] as T).offsetMs / o.slotMs);
    let b = a;
    let busiest = 0;
    let second = NaN;
    let inSecond = 0;
    while (b < items.length && Math.floor((items[b] as T).offsetMs / o.slotMs) === slotIndex) {
      const s = Math.floor((items[b] as T).offsetMs / 1000);
      inSecond = s === second ? inSecond + 1 : 1;
      second = s;
      busiest = Math.max(busiest, inSecond);
      b++;
    }
    slots.push({ slotIndex, first: a, end: b, lanes: lanesFor(b - a, busiest, o) });
    a = b;
  }
  return slots;
}

/** Items must be sorted by offset (plans are). Shard ids are `<slot>-<lane>`, stable for a plan. */
export function cutShards<T extends { offsetMs: number }>(
  items: readonly T[],
  o: Pick<ShardingOptions, 'slotMs' | 'maxShardRequests'> & Partial<ShardingOptions> = DEFAULT_SHARDING,
): Shard<T>[] {
  const shards: Shard<T>[] = [];
  for (const slot of slotsOf(items, o)) {
    const lanes = Array.from(
      { length: slot.lanes },
      (_, lane): Shard<T> => ({
        shardId: `${slot.slotIndex}-${lane}`,
        slotIndex: slot.slotIndex,
        lane,
        lanes: slot.lanes,
        requests: [],
      }),
    );
    for (let p = slot.first; p < slot.end; p++)
      (lanes[(p - slot.first) % slot.lanes] as Shard<T>).requests.push(items[p] as T);
    shards.push(...lanes);
  }
  return shards;
}

// ---- wire format ----

const nsString = z.string().regex(/^-?\d+$/);

export const wireRequestSchema = z.object({
  index: z.number().int().nonnegative(),
  offsetMs: z.number(),
  captureTimeMs: z.number(),
  copy: z.number().int().nonnegative().optional(),
  correlationId: z.string(),
  eventId: z.string(),
  inferenceId: z.string().nullable(),
  source: z.object({ file: z.string(), line: z.number().int() }),
  contentType: z.string(),
  /** Inline body, base64; or `bodyRef`, an object key. Exactly one is set. */
  body: z.string().optional(),
  bodyRef: z.string().optional(),
  streaming: z.boolean(),
  overrides: z.array(z.string()),
  capturedUsage: z.object({ promptTokens: z.number().nullable(), completionTokens: z.number().nullable() }).nullable(),
  // Defaults keep shards sent by an older ingest readable during a deployment.
  accept: z.string().nullable().default(null),
  capturedOutputSha256: z.string().nullable().default(null),
});
export type WireRequest = z.infer<typeof wireRequestSchema>;

export const shardMessageSchema = z
  .object({
    v: z.literal(1),
    kind: z.literal('shard'),
    runId: z.string().min(1),
    target: z.string().min(1),
    shardId: z.string().min(1),
    /** Epoch ns of the plan's offset 0, shared by every shard and target of the run. */
    startNs: nsString,
    /** Due time of the shard's first request. */
    firstDueNs: nsString,
    /** How many times the message was re-delayed to reach a due time beyond SQS's 15 minutes. */
    hops: z.number().int().nonnegative(),
    /**
     * A shard of the run's last slot: only their completions ask the collector to look (a listing
     * per lane of that slot, not one per shard); the deadline message covers stragglers.
     */
    last: z.boolean().default(false),
    /** The requests, inline; empty when they travel by reference (`requestsRef`). */
    requests: z.array(wireRequestSchema),
    /** Where the requests are when they do not fit the message: `parts` objects `<prefix><n>` (shard-parts.ts), `requests` in all. */
    requestsRef: z
      .object({ prefix: z.string().min(1), parts: z.number().int().positive(), requests: z.number().int().positive() })
      .optional(),
    /**
     * How long before its first due time this message was meant to be delivered (ms); the
     * deployment's lead without it. The run's first shards get more, so that the event source has
     * scaled up before they are due (sqs-delay.ts rampLeads): a worker must not send them on.
     */
    leadMs: z.number().int().nonnegative().optional(),
  })
  .refine((m) => m.requests.length > 0 !== (m.requestsRef !== undefined), {
    message: 'a shard message carries its requests inline or by reference (requestsRef), exactly one of them',
  });
export type ShardMessage = z.infer<typeof shardMessageSchema>;

export function toWire(request: ScheduledRequest, bodyRef: string | null): WireRequest {
  const { body, ...rest } = request;
  return bodyRef
    ? { ...rest, bodyRef }
    : { ...rest, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('base64') };
}

/** Back to a ScheduledRequest; `loadBody` fetches a referenced body. */
export async function fromWire(
  wire: WireRequest,
  loadBody: (key: string) => Promise<Uint8Array | null>,
): Promise<ScheduledRequest> {
  const { body, bodyRef, ...rest } = wire;
  let bytes: Uint8Array | null;
  if (body !== undefined) bytes = Buffer.from(body, 'base64');
  else if (bodyRef !== undefined) bytes = await loadBody(bodyRef);
  else throw new Error(`request ${wire.index} carries neither body nor bodyRef`);
  if (!bytes) throw new Error(`body of request ${wire.index} is missing at ${bodyRef}`);
  return { ...rest, body: bytes };
}
