/**
 * Ingest stage: plan -> shards -> delayed shard messages, referenced bodies, the run record
 * (written last: its presence means "fully scheduled", so a redelivered S3 event for the same
 * object schedules nothing twice).
 *
 * At production sizes:
 * - The plan may be an index (two-pass planning): each shard's requests are loaded (read
 *   back from the capture object) just before its messages are built, a window of shards at
 *   a time, so memory holds the index and a few shards, not the file.
 * - Shards go out in due order, every target's message for a shard together, so target B
 *   is not queued behind all of A's shards.
 * - The run's start is fixed once, stored before the first message (`_start.json`): a
 *   retried ingest reuses it, so shards sent by an earlier attempt and by this one share
 *   one timeline (their claims make the repeats harmless).
 * - Batches are packed by bytes and entries (SQS: 1 MiB and 10 per batch); bodies too large
 *   to travel inline are put in parallel.
 */
import { z } from 'zod';
import type { Clock, MessageQueue, ObjectStore } from '../../ports';
import { Semaphore } from '../fire/semaphore';
import { deterministicUuid } from '../ids';
import type { DropReason, ReplayPlan, RunManifest, ScheduledRequest } from '../types';
import { decodeJson, INGEST_SHARD, sendAll, type OutgoingMessage, type RunRecord } from './common';
import { bodyKey, resultsKey, runRecordKey, runStartKey } from './keys';
import { encodeResultLines, type ResultLine } from './results';
import { cutShards, DEFAULT_SHARDING, toWire, wireBytes, type Shard, type ShardingOptions, type ShardMessage } from './shards';
import { deliveryDelay } from './sqs-schedule';

/** One request of a plan as the scheduler sees it before its body is loaded. */
export interface PlanItem {
  index: number;
  offsetMs: number;
  bodyBytes: number;
  sourceFile: string;
}

/** A plan the scheduler can send: items in due order, bodies loaded on demand. */
export interface SchedulablePlan {
  items: PlanItem[];
  incompatible: { index: number; offsetMs: number; reason: DropReason }[];
  durationMs: number;
  /** The requests for these items, in the same order. */
  load(items: readonly PlanItem[]): Promise<ScheduledRequest[]>;
}

/** A plan held in memory, as a schedulable one. */
export function fromReplayPlan(plan: ReplayPlan): SchedulablePlan {
  const byIndex = new Map(plan.requests.map((r) => [r.index, r]));
  return {
    items: plan.requests.map((r) => ({ index: r.index, offsetMs: r.offsetMs, bodyBytes: r.body.byteLength, sourceFile: r.source.file })),
    incompatible: plan.incompatible.map(({ request, reason }) => ({ index: request.index, offsetMs: request.offsetMs, reason })),
    durationMs: plan.durationMs,
    load: async (items) => items.map((i) => byIndex.get(i.index) as ScheduledRequest),
  };
}

export interface ScheduleRunArgs {
  runId: string;
  plan: ReplayPlan | SchedulablePlan;
  targets: readonly string[];
  /** The run's start (epoch ns of offset 0), unless an earlier attempt already fixed one. */
  startNs: bigint;
  leadMs: number;
  /** How long after the last due time a run is finalised even with shards missing. */
  graceMs: number;
  inputConfig: unknown;
  notScheduledByReason: RunManifest['notScheduledByReason'];
  /** Mirror mode: the capture hour this run's results roll up into. */
  hour?: string;
  sharding?: ShardingOptions;
  /** Shards loaded and sent at once. */
  windowShards?: number;
  store: ObjectStore;
  queue: MessageQueue;
  clock: Clock;
}

const startRecordSchema = z.object({ v: z.literal(1), startNs: z.string().regex(/^\d+$/) });

/** How the sending kept up with the schedule: a shard sent after (first due - lead) is at risk of firing late. */
export interface EmissionStats {
  shards: number;
  messages: number;
  /** Shards whose messages left later than their first due time minus the lead. */
  lateShards: number;
  maxLateMs: number;
}

export type ScheduleResult =
  | { status: 'scheduled'; shards: number; messages: number; deadlineNs: bigint; startNs: bigint; emission: EmissionStats }
  | { status: 'duplicate'; shards: 0; messages: 0 };

const BODY_PUTS_AT_ONCE = 16;
const BATCHES_AT_ONCE = 4;

export async function scheduleRun(args: ScheduleRunArgs): Promise<ScheduleResult> {
  const { store, runId } = args;
  if (await store.get(runRecordKey(runId))) return { status: 'duplicate', shards: 0, messages: 0 };
  const plan = 'load' in args.plan ? args.plan : fromReplayPlan(args.plan);
  const sharding = args.sharding ?? DEFAULT_SHARDING;
  const shards = cutShards(plan.items, sharding, (i) => wireBytes(i.bodyBytes, i.sourceFile, sharding));

  // The start, fixed once for every attempt at this run.
  const fresh = JSON.stringify({ v: 1, startNs: args.startNs.toString() });
  let startNs = args.startNs;
  if (!(await store.putIfAbsent(runStartKey(runId), fresh, 'application/json'))) {
    const stored = await store.get(runStartKey(runId));
    if (stored) startNs = BigInt(startRecordSchema.parse(decodeJson(stored)).startNs);
  }
  const dueOf = (offsetMs: number) => startNs + BigInt(Math.round(offsetMs * 1e6));

  for (const target of args.targets) {
    const drops: ResultLine[] = plan.incompatible.map(({ index, offsetMs, reason }) => ({
      kind: 'drop',
      requestId: deterministicUuid(runId, target, index),
      index,
      scheduledNs: dueOf(offsetMs),
      dropReason: reason,
    }));
    await store.putIfAbsent(resultsKey(runId, target, INGEST_SHARD), encodeResultLines(drops), 'application/x-ndjson');
  }

  const emission: EmissionStats = { shards: shards.length, messages: 0, lateShards: 0, maxLateMs: 0 };
  const bodyPuts = new Semaphore(BODY_PUTS_AT_ONCE);
  const putBody = async (request: ScheduledRequest): Promise<string> => {
    const key = bodyKey(runId, request.index);
    await bodyPuts.acquire();
    try {
      await store.put(key, request.body, 'application/octet-stream');
    } finally {
      bodyPuts.release();
    }
    return key;
  };
  const messagesFor = async (shard: Shard<PlanItem>, last: boolean): Promise<{ messages: OutgoingMessage[]; firstDueNs: bigint }> => {
    const requests = await plan.load(shard.requests);
    const wire = await Promise.all(requests.map(async (r) => toWire(r, r.body.byteLength > sharding.maxInlineBodyBytes ? await putBody(r) : null)));
    const firstDueNs = dueOf((shard.requests[0] as PlanItem).offsetMs);
    const messages = args.targets.map((target) => {
      const message: ShardMessage = { v: 1, kind: 'shard', runId, target, shardId: shard.shardId, startNs: startNs.toString(), firstDueNs: firstDueNs.toString(), hops: 0, last, requests: wire };
      return { id: `${target}-${shard.shardId}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80), body: JSON.stringify(message), delaySeconds: 0 };
    });
    return { messages, firstDueNs };
  };

  const window = Math.max(1, args.windowShards ?? 8);
  for (let i = 0; i < shards.length; i += window) {
    const built = await Promise.all(shards.slice(i, i + window).map((shard, j) => messagesFor(shard, i + j === shards.length - 1)));
    // Delays are computed at the moment of sending: loading took time.
    const now = args.clock.nowNs();
    const outgoing: OutgoingMessage[] = [];
    for (const { messages, firstDueNs } of built) {
      const lateMs = Number(now - (firstDueNs - BigInt(args.leadMs) * 1_000_000n)) / 1e6;
      if (lateMs > 0) {
        emission.lateShards++;
        emission.maxLateMs = Math.max(emission.maxLateMs, lateMs);
      }
      const { delaySeconds } = deliveryDelay(firstDueNs, now, args.leadMs);
      for (const m of messages) outgoing.push({ ...m, delaySeconds });
    }
    await sendAll(args.queue, outgoing, BATCHES_AT_ONCE);
    emission.messages += outgoing.length;
  }

  const now = args.clock.nowNs();
  const record: RunRecord = {
    v: 1,
    runId,
    targets: [...args.targets],
    startNs: startNs.toString(),
    deadlineNs: (startNs + BigInt(Math.round((plan.durationMs + args.graceMs) * 1e6))).toString(),
    createdAt: new Date(Number(now / 1_000_000n)).toISOString(),
    shards: shards.map((s) => ({ shardId: s.shardId, requests: s.requests.length })),
    notScheduledByReason: args.notScheduledByReason,
    inputConfig: args.inputConfig,
    ...(args.hour ? { hour: args.hour } : {}),
  };
  await store.put(runRecordKey(runId), JSON.stringify(record), 'application/json');
  return { status: 'scheduled', shards: shards.length, messages: emission.messages, deadlineNs: BigInt(record.deadlineNs), startNs, emission };
}
