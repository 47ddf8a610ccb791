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
 * - Targets of different kinds (an HTTP chat target and a SageMaker endpoint) each get their
 *   own plan of the same records (`targetPlans`): one set of shards is cut from every record
 *   any target takes, read once, and each target's message for a shard carries the records
 *   its plan takes (a shard none of them is in sends that target nothing). The run record
 *   then lists each target's shards (`targetShards`), which is what the collector waits for.
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
  /**
   * Targets scheduled on a plan of their own instead of `plan`: a target of another kind,
   * which takes other records (plan.ts rule 6). Every plan must come from the same records:
   * the same indices at the same due times, split differently between items and
   * incompatible.
   */
  targetPlans?: Readonly<Record<string, ReplayPlan | SchedulablePlan>>;
  /** The run's start (epoch ns of offset 0), unless an earlier attempt already fixed one. */
  startNs: bigint;
  /**
   * Targets that start later than the run's start, by this many ms (default 0 each): a
   * sequential comparison gives B the whole plan after A's last request has finished. Each
   * target's messages carry its own start, so its due times, drops and lateness move with it;
   * the deadline covers the latest target.
   */
  targetStartOffsetsMs?: Readonly<Record<string, number>>;
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
  | {
      status: 'scheduled';
      shards: number;
      messages: number;
      /** Shards sent to each target: 0 for a target that takes none of the records (its run is complete at once). */
      shardsByTarget: Record<string, number>;
      deadlineNs: bigint;
      startNs: bigint;
      emission: EmissionStats;
    }
  | { status: 'duplicate'; shards: 0; messages: 0 };

const BODY_PUTS_AT_ONCE = 16;
const BATCHES_AT_ONCE = 4;

/** Targets that share a plan. */
interface TargetGroup {
  plan: SchedulablePlan;
  targets: string[];
}

const asSchedulable = (plan: ReplayPlan | SchedulablePlan): SchedulablePlan => ('load' in plan ? plan : fromReplayPlan(plan));

function groupTargets(args: ScheduleRunArgs): TargetGroup[] {
  const main: TargetGroup = { plan: asSchedulable(args.plan), targets: [] };
  const groups = [main];
  const byPlan = new Map<ReplayPlan | SchedulablePlan, TargetGroup>([[args.plan, main]]);
  for (const name of Object.keys(args.targetPlans ?? {})) {
    if (!args.targets.includes(name)) throw new Error(`targetPlans names ${name}, which is not one of the run's targets`);
  }
  for (const target of args.targets) {
    const own = args.targetPlans?.[target];
    let group = own === undefined ? main : byPlan.get(own);
    if (!group) {
      group = { plan: asSchedulable(own as ReplayPlan | SchedulablePlan), targets: [] };
      byPlan.set(own as ReplayPlan | SchedulablePlan, group);
      groups.push(group);
    }
    group.targets.push(target);
  }
  const used = groups.filter((g) => g.targets.length > 0);
  const sizes = new Set(used.map((g) => g.plan.items.length + g.plan.incompatible.length));
  if (sizes.size > 1) throw new Error(`the targets' plans cover different numbers of records (${[...sizes].join(', ')}): they must be planned from the same records`);
  return used;
}

/**
 * Every item any plan sends, in index (= due) order, and which plan loads it: the plan with
 * the most items among those that have it (a SageMaker plan takes every record, so it loads
 * them all, in one read per shard). Each plan's items must be in index order (plans are).
 */
function unionOf(plans: readonly SchedulablePlan[]): { items: PlanItem[]; owners: Uint8Array | null } {
  if (plans.length === 1) return { items: (plans[0] as SchedulablePlan).items, owners: null };
  const byPriority = plans.map((_, i) => i).sort((a, b) => (plans[b] as SchedulablePlan).items.length - (plans[a] as SchedulablePlan).items.length);
  const cursors = plans.map(() => 0);
  const items: PlanItem[] = [];
  const owners: number[] = [];
  for (;;) {
    let next = Infinity;
    plans.forEach((p, i) => {
      const item = p.items[cursors[i] as number];
      if (item && item.index < next) next = item.index;
    });
    if (next === Infinity) break;
    let chosen: PlanItem | null = null;
    for (const i of byPriority) {
      const item = (plans[i] as SchedulablePlan).items[cursors[i] as number];
      if (!item || item.index !== next) continue;
      if (chosen === null) {
        chosen = item;
        owners.push(i);
      } else if (item.offsetMs !== chosen.offsetMs) {
        throw new Error(`request ${next} is due at ${chosen.offsetMs} ms in one plan and ${item.offsetMs} ms in another: the plans do not come from the same records`);
      }
      cursors[i] = (cursors[i] as number) + 1;
    }
    const last = items[items.length - 1];
    if (last && last.index >= next) throw new Error('plan items must be in index order');
    items.push(chosen as PlanItem);
  }
  return { items, owners: Uint8Array.from(owners) };
}

/** Which of a shard's requests one group's plan sends (null: all of them), and how many. */
interface Membership {
  mask: Uint8Array | null;
  count: number;
}

function membershipOf(plan: SchedulablePlan, shards: readonly Shard<PlanItem>[], unionSize: number): Membership[] {
  if (plan.items.length === unionSize) return shards.map((s) => ({ mask: null, count: s.requests.length }));
  let cursor = 0;
  return shards.map((shard) => {
    const mask = new Uint8Array(shard.requests.length);
    let count = 0;
    shard.requests.forEach((item, k) => {
      while (cursor < plan.items.length && (plan.items[cursor] as PlanItem).index < item.index) cursor++;
      if (plan.items[cursor]?.index === item.index) {
        mask[k] = 1;
        count++;
      }
    });
    return { mask, count };
  });
}

function targetStartOffsets(args: ScheduleRunArgs): Map<string, number> {
  const offsets = new Map(Object.entries(args.targetStartOffsetsMs ?? {}));
  for (const [target, ms] of offsets) {
    if (!args.targets.includes(target)) throw new Error(`targetStartOffsetsMs names ${target}, which is not one of the run's targets`);
    if (!(Number.isFinite(ms) && ms >= 0)) throw new Error(`targetStartOffsetsMs.${target} must be a finite number of ms >= 0 (got ${ms})`);
  }
  return offsets;
}

export async function scheduleRun(args: ScheduleRunArgs): Promise<ScheduleResult> {
  const { store, runId } = args;
  if (await store.get(runRecordKey(runId))) return { status: 'duplicate', shards: 0, messages: 0 };
  const groups = groupTargets(args);
  const targetOffsets = targetStartOffsets(args);
  const plans = groups.map((g) => g.plan);
  const union = unionOf(plans);
  const sharding = args.sharding ?? DEFAULT_SHARDING;
  const shards = cutShards(union.items, sharding, (i) => wireBytes(i.bodyBytes, i.sourceFile, sharding));
  const shardStart: number[] = [];
  for (let si = 0, start = 0; si < shards.length; start += (shards[si] as Shard<PlanItem>).requests.length, si++) shardStart.push(start);
  const membership = plans.map((plan) => membershipOf(plan, shards, union.items.length));
  const lastShardOf = membership.map((m) => m.findLastIndex((x) => x.count > 0));
  const shardsOfGroup = membership.map((m) => shards.flatMap((s, si) => ((m[si] as Membership).count > 0 ? [{ shardId: s.shardId, requests: (m[si] as Membership).count }] : [])));

  // The start, fixed once for every attempt at this run.
  const fresh = JSON.stringify({ v: 1, startNs: args.startNs.toString() });
  let startNs = args.startNs;
  if (!(await store.putIfAbsent(runStartKey(runId), fresh, 'application/json'))) {
    const stored = await store.get(runStartKey(runId));
    if (stored) startNs = BigInt(startRecordSchema.parse(decodeJson(stored)).startNs);
  }
  const dueOf = (offsetMs: number) => startNs + BigInt(Math.round(offsetMs * 1e6));
  const shiftOf = (target: string) => BigInt(Math.round((targetOffsets.get(target) ?? 0) * 1e6));

  for (const { plan, targets } of groups) {
    for (const target of targets) {
      const drops: ResultLine[] = plan.incompatible.map(({ index, offsetMs, reason }) => ({
        kind: 'drop',
        requestId: deterministicUuid(runId, target, index),
        index,
        scheduledNs: dueOf(offsetMs) + shiftOf(target),
        dropReason: reason,
      }));
      await store.putIfAbsent(resultsKey(runId, target, INGEST_SHARD), encodeResultLines(drops), 'application/x-ndjson');
    }
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
  /** A shard's requests, each loaded (once) by the plan that owns it. */
  const loadShard = async (items: PlanItem[], si: number): Promise<ScheduledRequest[]> => {
    const { owners } = union;
    if (!owners) return (plans[0] as SchedulablePlan).load(items);
    const parts = new Map<number, { positions: number[]; items: PlanItem[] }>();
    items.forEach((item, k) => {
      const owner = owners[(shardStart[si] as number) + k] as number;
      const part = parts.get(owner) ?? { positions: [], items: [] };
      part.positions.push(k);
      part.items.push(item);
      parts.set(owner, part);
    });
    const out = new Array<ScheduledRequest>(items.length);
    await Promise.all(
      [...parts].map(async ([owner, part]) => {
        const loaded = await (plans[owner] as SchedulablePlan).load(part.items);
        loaded.forEach((request, j) => (out[part.positions[j] as number] = request));
      }),
    );
    return out;
  };
  const messagesFor = async (shard: Shard<PlanItem>, si: number): Promise<{ messages: (OutgoingMessage & { firstDueNs: bigint })[]; firstDueNs: bigint }> => {
    const requests = await loadShard(shard.requests, si);
    const wire = await Promise.all(requests.map(async (r) => toWire(r, r.body.byteLength > sharding.maxInlineBodyBytes ? await putBody(r) : null)));
    const messages: (OutgoingMessage & { firstDueNs: bigint })[] = [];
    groups.forEach((group, gi) => {
      const { mask, count } = (membership[gi] as Membership[])[si] as Membership;
      if (count === 0) return;
      const members = mask ? wire.filter((_, k) => mask[k] === 1) : wire;
      const first = mask ? (shard.requests[mask.indexOf(1)] as PlanItem) : (shard.requests[0] as PlanItem);
      const firstDueNs = dueOf(first.offsetMs);
      for (const target of group.targets) {
        const shift = shiftOf(target);
        const message: ShardMessage = { v: 1, kind: 'shard', runId, target, shardId: shard.shardId, startNs: (startNs + shift).toString(), firstDueNs: (firstDueNs + shift).toString(), hops: 0, last: si === lastShardOf[gi], requests: members };
        messages.push({ id: `${target}-${shard.shardId}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80), body: JSON.stringify(message), delaySeconds: 0, firstDueNs: firstDueNs + shift });
      }
    });
    // The shard is at risk when its earliest message is (a later target's are further ahead).
    const earliest = messages.reduce<bigint | null>((min, m) => (min === null || m.firstDueNs < min ? m.firstDueNs : min), null);
    return { messages, firstDueNs: earliest ?? dueOf((shard.requests[0] as PlanItem).offsetMs) };
  };

  const window = Math.max(1, args.windowShards ?? 8);
  for (let i = 0; i < shards.length; i += window) {
    const built = await Promise.all(shards.slice(i, i + window).map((shard, j) => messagesFor(shard, i + j)));
    // Delays are computed at the moment of sending: loading took time.
    const now = args.clock.nowNs();
    const outgoing: OutgoingMessage[] = [];
    for (const { messages, firstDueNs } of built) {
      const lateMs = Number(now - (firstDueNs - BigInt(args.leadMs) * 1_000_000n)) / 1e6;
      if (lateMs > 0) {
        emission.lateShards++;
        emission.maxLateMs = Math.max(emission.maxLateMs, lateMs);
      }
      for (const { firstDueNs: due, ...m } of messages) outgoing.push({ ...m, delaySeconds: deliveryDelay(due, now, args.leadMs).delaySeconds });
    }
    await sendAll(args.queue, outgoing, BATCHES_AT_ONCE);
    emission.messages += outgoing.length;
  }

  const now = args.clock.nowNs();
  // The latest target's last due time: a sequential run ends with its last target.
  const durationMs = Math.max(...plans.map((p) => p.durationMs)) + Math.max(0, ...targetOffsets.values());
  const shardsByTarget = Object.fromEntries(groups.flatMap((g, gi) => g.targets.map((t) => [t, (shardsOfGroup[gi] as unknown[]).length])));
  const record: RunRecord = {
    v: 1,
    runId,
    targets: [...args.targets],
    startNs: startNs.toString(),
    deadlineNs: (startNs + BigInt(Math.round((durationMs + args.graceMs) * 1e6))).toString(),
    createdAt: new Date(Number(now / 1_000_000n)).toISOString(),
    shards: shards.map((s) => ({ shardId: s.shardId, requests: s.requests.length })),
    // Targets on plans of their own: each waits for its own shards, not for every one cut.
    ...(groups.length > 1 ? { targetShards: Object.fromEntries(groups.flatMap((g, gi) => g.targets.map((t) => [t, shardsOfGroup[gi] as RunRecord['shards']]))) } : {}),
    notScheduledByReason: args.notScheduledByReason,
    inputConfig: args.inputConfig,
    ...(args.hour ? { hour: args.hour } : {}),
  };
  await store.put(runRecordKey(runId), JSON.stringify(record), 'application/json');
  return { status: 'scheduled', shards: shards.length, messages: emission.messages, shardsByTarget, deadlineNs: BigInt(record.deadlineNs), startNs, emission };
}
