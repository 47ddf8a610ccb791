/**
 * Cutting a plan into the units SQS carries. A SLOT is a window of `slotMs` of due time; a
 * slot with more requests than `maxShardRequests`, or more bytes than `maxMessageBytes`,
 * is split into SHARDS. One message per shard: fan-out scales with traffic, not with the
 * number of messages. A body larger than `maxInlineBodyBytes` travels by reference (stored
 * once in the results bucket), so one large prompt never breaks a message's size limit.
 */
import { z } from 'zod';
import type { ScheduledRequest } from '../types';

export interface ShardingOptions {
  slotMs: number;
  maxShardRequests: number;
  /** Serialized message budget; SQS allows 1 MiB, keep headroom for attributes. */
  maxMessageBytes: number;
  maxInlineBodyBytes: number;
}

export const DEFAULT_SHARDING: ShardingOptions = {
  slotMs: 1000,
  maxShardRequests: 250,
  // SQS takes 1 MiB per message and per batch; SQS bills by 64 KB chunk whatever the
  // message size, so fuller shards cost no more in SQS and need fewer fire invocations.
  maxMessageBytes: 768 * 1024,
  maxInlineBodyBytes: 64 * 1024,
};

export interface Shard<T = ScheduledRequest> {
  shardId: string;
  slotIndex: number;
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
 * Items must be sorted by offset (plans are). Shard ids are `<slot>-<n>`, stable for a plan.
 * `sizeOf` is an item's bytes in the message (requests: `wireSize`).
 */
export function cutShards(requests: readonly ScheduledRequest[], o?: ShardingOptions): Shard[];
export function cutShards<T extends { offsetMs: number }>(items: readonly T[], o: ShardingOptions, sizeOf: (item: T) => number): Shard<T>[];
export function cutShards<T extends { offsetMs: number }>(items: readonly T[], o: ShardingOptions = DEFAULT_SHARDING, sizeOf?: (item: T) => number): Shard<T>[] {
  const size = sizeOf ?? ((item: T) => wireSize(item as unknown as ScheduledRequest, o));
  const shards: Shard<T>[] = [];
  let current: Shard<T> | null = null;
  let bytes = 0;
  let shardInSlot = 0;
  for (const item of items) {
    const slotIndex = Math.floor(item.offsetMs / o.slotMs);
    const itemBytes = size(item);
    const newSlot = !current || current.slotIndex !== slotIndex;
    if (newSlot) shardInSlot = 0;
    if (newSlot || (current as Shard<T>).requests.length >= o.maxShardRequests || bytes + itemBytes > o.maxMessageBytes) {
      if (!newSlot) shardInSlot++;
      current = { shardId: `${slotIndex}-${shardInSlot}`, slotIndex, requests: [] };
      shards.push(current);
      bytes = 0;
    }
    (current as Shard<T>).requests.push(item);
    bytes += itemBytes;
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

export const shardMessageSchema = z.object({
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
   * The run's last shard by due time: only its completion asks the collector to look (one
   * listing per run, not one per shard); the deadline message covers stragglers.
   */
  last: z.boolean().default(false),
  requests: z.array(wireRequestSchema).min(1),
});
export type ShardMessage = z.infer<typeof shardMessageSchema>;

export function toWire(request: ScheduledRequest, bodyRef: string | null): WireRequest {
  const { body, ...rest } = request;
  return bodyRef ? { ...rest, bodyRef } : { ...rest, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('base64') };
}

/** Back to a ScheduledRequest; `loadBody` fetches a referenced body. */
export async function fromWire(wire: WireRequest, loadBody: (key: string) => Promise<Uint8Array | null>): Promise<ScheduledRequest> {
  const { body, bodyRef, ...rest } = wire;
  let bytes: Uint8Array | null;
  if (body !== undefined) bytes = Buffer.from(body, 'base64');
  else if (bodyRef !== undefined) bytes = await loadBody(bodyRef);
  else throw new Error(`request ${wire.index} carries neither body nor bodyRef`);
  if (!bytes) throw new Error(`body of request ${wire.index} is missing at ${bodyRef}`);
  return { ...rest, body: bytes };
}
