/**
 * The traffic of a simulated run, made by the pipeline's own code: capture times in whole
 * seconds (as SageMaker writes them) at the workload's rate, planned by the real planner
 * (`planRows`: the intra-second spread, order and offsets of plan.ts's rules 1-4), cut into
 * lanes by the real sharder's rule (`lanesFor`: request i of a slot to lane i mod n, as
 * `cutShards` deals them; test/unit/sim/workload.test.ts holds the two together), each lane
 * inline or by reference as the ingest decides (`MESSAGE_OVERHEAD_BYTES` + `wireBytes` against
 * the message budget; by reference, `partRequests` a part), and each shard message's size taken
 * from the real wire format (`toWire` + JSON of a ShardMessage).
 *
 * Planned a second at a time (once per distinct count of records in a second), each second's
 * offsets moved by its start: the whole plan's offsets for whole-second captures, whose spread
 * is per second, up to float rounding (test/unit/sim/workload.test.ts holds this and whole
 * planning together), at the cost of a few plans for millions of requests.
 */
import { planRows, type LineRef, type PlanOptions } from '../lambdas/core/plan/plan';
import { bodyKey, shardPartsPrefix } from '../lambdas/core/pipeline/keys';
import { partRequests } from '../lambdas/core/pipeline/shard-parts';
import {
  DEFAULT_SHARDING,
  lanesFor,
  toWire,
  wireBytes,
  type ShardingOptions,
  type ShardMessage,
} from '../lambdas/core/pipeline/shards';
import { MESSAGE_OVERHEAD_BYTES } from '../lambdas/core/pipeline/slot-writer';
import type { ScheduledRequest } from '../lambdas/core/types';
import type { Rng } from './random';
import type { SimSettings } from './settings';

export interface SimShard {
  /** Position in due order. */
  index: number;
  shardId: string;
  /** Its slot (index in `Workload.slots`) and lane. */
  slot: number;
  lane: number;
  /** Request offsets from the run's start, ms, ascending. */
  offsets: Float64Array;
  /** Parts it is written as (by reference), or 0 (inline). */
  parts: number;
}

export interface SimSlot {
  /**
   * Its shards: `firstShard` to `firstShard + lanes - 1`, the sharder's lanes that hold requests
   * (a slot of fewer requests than lanes leaves some empty, and the ingest sends nothing for them).
   */
  firstShard: number;
  lanes: number;
  requests: number;
  /** Its chunks as the ingest reads them: requests in each. */
  chunks: number[];
}

export interface Workload {
  shards: SimShard[];
  slots: SimSlot[];
  /** Requests per target. */
  requests: number;
  /** The last offset, ms. */
  durationMs: number;
  /** Bytes of the capture file the ingest reads. */
  fileBytes: number;
  /** Bytes one request takes on the wire (in a message or a part). */
  wireBytesPerRequest: number;
  /** Bytes of a shard message carrying `n` requests inline. */
  messageBytes: (n: number) => number;
  /** Bytes of a shard's message (inline, or its reference), with a lead of its own or not. */
  shardMessageBytes: (shard: SimShard, ownLead: boolean) => number;
}

const CAPTURE_EPOCH_MS = Date.UTC(2026, 3, 29, 0, 3, 18);
/**
 * forceStreaming (the stack's default) adds `,"stream":true,"stream_options":{"include_usage":true}`
 * to each chat body (plan.ts rule 5).
 */
const STREAM_OVERRIDE_BYTES = 53;
const SOURCE_FILE = 's3://capture-bucket/datacapture/endpoint/AllTraffic/2026/04/29/00/03-18-000-0a1b2c3d.jsonl';
const PLAN_OPTIONS: PlanOptions = { runId: 'sim', targetKind: 'openai-chat', timeScale: 1, intraSecond: 'spread' };

/** Records captured in each second. */
function secondCounts(s: SimSettings['workload'], rng: Rng): Uint32Array {
  const counts = new Uint32Array(Math.ceil(s.seconds));
  const total = Math.floor(s.ratePerTarget * s.seconds);
  for (let i = 0; i < counts.length; i++) {
    counts[i] =
      s.arrivals === 'poisson'
        ? rng.poisson(s.ratePerTarget * Math.min(1, s.seconds - i))
        : Math.min(total, Math.floor((i + 1) * s.ratePerTarget)) - Math.min(total, Math.floor(i * s.ratePerTarget));
  }
  return counts;
}

/** Offsets (ms from the first record) of the records of seconds [from, to), by the real planner. */
export function planSeconds(counts: Uint32Array, from: number, to: number, zeroSecond: number): number[] {
  const seconds: number[] = [];
  for (let s = from; s < to; s++) for (let k = 0; k < (counts[s] as number); k++) seconds.push(s);
  if (seconds.length === 0) return [];
  const ref = {
    inferenceTimeMs: 0,
    hasSubSecondTime: false,
    source: { file: SOURCE_FILE, line: 0 },
    span: { start: 0, end: 0 },
  } as LineRef;
  const plan = planRows(
    seconds.length,
    (row) => CAPTURE_EPOCH_MS + (seconds[row] as number) * 1000,
    () => false,
    (row) => row,
    PLAN_OPTIONS,
    () => ref,
  );
  const shiftMs = ((seconds[0] as number) - zeroSecond) * 1000;
  return plan.entries.map((e) => e.offsetMs + shiftMs);
}

/**
 * Every request's offset (ms from the first record), in due order: second s's k records where
 * the real planner puts k records of one second, moved by s. Planned once per distinct count
 * (the spread is per second), so millions of requests cost a few plans.
 */
export function planOffsets(counts: Uint32Array, zeroSecond: number): Float64Array {
  const perCount = new Map<number, number[]>();
  let total = 0;
  for (let s = zeroSecond; s < counts.length; s++) total += counts[s] as number;
  const out = new Float64Array(total);
  let i = 0;
  for (let s = zeroSecond; s < counts.length; s++) {
    const k = counts[s] as number;
    if (k === 0) continue;
    let second = perCount.get(k);
    if (!second) perCount.set(k, (second = planSeconds(Uint32Array.of(k), 0, 1, 0)));
    const base = (s - zeroSecond) * 1000;
    for (const o of second) out[i++] = base + o;
  }
  return out;
}

/**
 * The real shard message for `n` requests of this workload's shape, serialized. A body over
 * `maxInlineBodyBytes` travels as an S3 object the request names (slot-writer.ts), not inline.
 */
function messageBytesFn(bodyBytes: number, sharding: ShardingOptions): (n: number) => number {
  const request: ScheduledRequest = {
    index: 1_234_567,
    offsetMs: 123_456.789,
    captureTimeMs: CAPTURE_EPOCH_MS + 123_456,
    correlationId: '5f0c2d1e-8a3b-5c4d-9e8f-0123456789ab',
    eventId: 'a1b2c3d4-e5f6-4789-8abc-0000000f4240',
    inferenceId: null,
    source: { file: SOURCE_FILE, line: 123_456 },
    contentType: 'application/json',
    body: new Uint8Array(Math.min(bodyBytes + STREAM_OVERRIDE_BYTES, sharding.maxInlineBodyBytes + 1)),
    streaming: true,
    overrides: ['stream'],
    capturedUsage: { promptTokens: 325, completionTokens: 64 },
    accept: 'application/json',
    capturedOutputSha256: 'f'.repeat(64),
  };
  const wire = toWire(
    request,
    request.body.byteLength > sharding.maxInlineBodyBytes
      ? bodyKey('file-0f1e2d3c-4b5a-5968-8776-a5b4c3d2e1f0', request.index)
      : null,
  );
  const memo = new Map<number, number>();
  return (n) => {
    let bytes = memo.get(n);
    if (bytes === undefined) {
      const message: ShardMessage = {
        v: 1,
        kind: 'shard',
        runId: 'file-0f1e2d3c-4b5a-5968-8776-a5b4c3d2e1f0',
        target: 'target-a',
        shardId: '123-4',
        startNs: '1777421000000000000',
        firstDueNs: '1777421123456789000',
        hops: 0,
        last: false,
        requests: Array.from({ length: n }, () => wire),
      };
      bytes = Buffer.byteLength(JSON.stringify(message));
      memo.set(n, bytes);
    }
    return bytes;
  };
}

/** The real shard message naming `parts` parts of `n` requests, serialized. */
function refMessageBytes(shardId: string, n: number, parts: number, ownLead: boolean): number {
  const message: ShardMessage = {
    v: 1,
    kind: 'shard',
    runId: 'file-0f1e2d3c-4b5a-5968-8776-a5b4c3d2e1f0',
    target: 'target-a',
    shardId,
    startNs: '1777421000000000000',
    firstDueNs: '1777421123456789000',
    hops: 0,
    last: false,
    requests: [],
    requestsRef: {
      prefix: shardPartsPrefix('file-0f1e2d3c-4b5a-5968-8776-a5b4c3d2e1f0', 0, shardId),
      parts,
      requests: n,
    },
    ...(ownLead ? { leadMs: 123_456 } : {}),
  };
  return Buffer.byteLength(JSON.stringify(message));
}

/**
 * The shards of the plan: each slot's requests dealt to `lanesFor` lanes (request i of the slot
 * to lane i mod n, cutShards' rule), each lane inline when it fits the message budget
 * (slot-writer.ts's rule), else in parts of `partRequests(n)`.
 */
function shardsOf(
  offsets: Float64Array,
  sharding: ShardingOptions,
  itemBytes: number,
): { shards: SimShard[]; slots: SimSlot[] } {
  const shards: SimShard[] = [];
  const slots: SimSlot[] = [];
  for (let a = 0; a < offsets.length; ) {
    const slotIndex = Math.floor((offsets[a] as number) / sharding.slotMs);
    let b = a;
    let busiest = 0;
    for (
      let second = NaN, inSecond = 0;
      b < offsets.length && Math.floor((offsets[b] as number) / sharding.slotMs) === slotIndex;
      b++
    ) {
      const s = Math.floor((offsets[b] as number) / 1000);
      inSecond = s === second ? inSecond + 1 : 1;
      second = s;
      busiest = Math.max(busiest, inSecond);
    }
    const lanes = lanesFor(b - a, busiest, sharding);
    const perPart = partRequests(lanes);
    const perChunk = lanes * perPart;
    // Lanes past the slot's requests hold none: the ingest writes and sends nothing for them (slot-writer.ts, dispatch.ts).
    const filled = Math.min(lanes, b - a);
    slots.push({
      firstShard: shards.length,
      lanes: filled,
      requests: b - a,
      chunks: Array.from({ length: Math.ceil((b - a) / perChunk) }, (_, c) => Math.min(perChunk, b - a - c * perChunk)),
    });
    for (let lane = 0; lane < filled; lane++) {
      const n = Math.ceil((b - a - lane) / lanes);
      const laneOffsets = Float64Array.from({ length: n }, (_, k) => offsets[a + lane + k * lanes] as number);
      const inline = MESSAGE_OVERHEAD_BYTES + n * itemBytes <= sharding.maxMessageBytes;
      shards.push({
        index: shards.length,
        shardId: `${slotIndex}-${lane}`,
        slot: slots.length - 1,
        lane,
        offsets: laneOffsets,
        parts: inline ? 0 : Math.ceil(n / perPart),
      });
    }
    a = b;
  }
  return { shards, slots };
}

export function buildWorkload(settings: SimSettings, rng: Rng): Workload {
  const w = settings.workload;
  const counts = secondCounts(w, rng);
  const zeroSecond = counts.findIndex((c) => c > 0);
  const sharding: ShardingOptions = {
    ...DEFAULT_SHARDING,
    slotMs: Math.round(settings.stack.slotS * 1000),
    maxShardRequests: settings.stack.maxShardRequests,
    maxMessageBytes: settings.stack.maxMessageBytes,
  };
  const offsets = zeroSecond >= 0 ? planOffsets(counts, zeroSecond) : new Float64Array(0);
  const itemBytes = wireBytes(w.bodyBytes + STREAM_OVERRIDE_BYTES, SOURCE_FILE, sharding);
  const { shards, slots } = shardsOf(offsets, sharding, itemBytes);
  const requests = offsets.length;
  const messageBytes = messageBytesFn(w.bodyBytes, sharding);
  const ownLeadBytes = Buffer.byteLength(',"leadMs":123456');
  return {
    shards,
    slots,
    requests,
    durationMs: requests > 0 ? (offsets[requests - 1] as number) : 0,
    fileBytes: requests * w.recordBytes,
    wireBytesPerRequest: itemBytes,
    messageBytes,
    shardMessageBytes: (shard, ownLead) =>
      shard.parts > 0
        ? refMessageBytes(shard.shardId, shard.offsets.length, shard.parts, ownLead)
        : messageBytes(shard.offsets.length) + (ownLead ? ownLeadBytes : 0),
  };
}
