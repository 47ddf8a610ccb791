/**
 * Dispatch, the ingest stage's last step (and the plan function's): plan -> shards -> delayed
 * shard messages, referenced bodies and shard parts, the run record (written last: its presence
 * means "fully scheduled", so a redelivered S3 event for the same object schedules nothing
 * twice). How it stays within memory, orders shards, spreads them along the event source's ramp,
 * fixes the start once and weighs the run against the fire function's concurrency:
 * docs/deploy.md#how-a-run-is-dispatched. Its parts: slot-writer.ts (a slot's requests read back
 * a chunk at a time), shards.ts (lanes), plan-groups.ts (targets of different kinds), sqs-delay.ts
 * rampLeads (the ramp), capacity.ts.
 */
import { z } from 'zod';
import type { Clock, MessageQueue, ObjectStore } from '../../ports';
import { writeIngestReport } from '../export/artifacts';
import { deterministicUuid } from '../ids';
import type { IngestReport, ReplayPlan, RunManifest, ScheduledRequest } from '../types';
import { assessCapacity, busiestSecond, type CapacityReport, type FireCapacity, type LaneNeed } from './capacity';
import { decodeJson, INGEST_SHARD, sendAll, type OutgoingMessage, type RunRecord } from './common';
import { resultsKey, runPrefix, runRecordKey, runStartKey } from './keys';
import {
  groupTargets,
  membershipOf,
  targetStartOffsets,
  unionOf,
  type Membership,
  type PlanItem,
  type DispatchablePlan,
} from './plan-groups';
import { encodeResultLines, type ResultLine } from './results';
import { cutShards, DEFAULT_SHARDING, slotsOf, type Shard, type ShardingOptions, type ShardMessage } from './shards';
import { writeSlot, type LaneContent, type SlotSpan, type SlotWriter } from './slot-writer';
import { deliveryDelay, rampLeads } from './sqs-delay';

export { fromReplayPlan, type PlanItem, type DispatchablePlan } from './plan-groups';

export interface DispatchRunArgs {
  runId: string;
  plan: ReplayPlan | DispatchablePlan;
  targets: readonly string[];
  /**
   * Targets scheduled on a plan of their own instead of `plan`: a target of another kind,
   * which takes other records (plan.ts rule 6). Every plan must come from the same records:
   * the same indices at the same due times, split differently between items and
   * incompatible.
   */
  targetPlans?: Readonly<Record<string, ReplayPlan | DispatchablePlan>>;
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
  /**
   * Deliver each slot's shards along the replay event source's ramp (its BatchSize), each
   * message at most `maxLeadMs` ahead of its first due time (what the fire function's timeout
   * leaves). Without it every message gets `leadMs`.
   */
  ramp?: { batchSize: number; maxLeadMs: number };
  /** The start may move later, for the ramp to be sent on time (file and window runs; a mirror run keeps the capture's timeline). */
  startMoves?: boolean;
  /** The fire function's concurrency: the run's lanes are weighed against it (capacity.ts), the result in the ingest report. */
  fireCapacity?: FireCapacity;
  /** The run's ingest report: written under runs/<run>/ once the run is laid out (with `capacity`), before any message. */
  ingestReport?: IngestReport;
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

export type DispatchResult =
  | {
      status: 'scheduled';
      shards: number;
      messages: number;
      /** Shards sent to each target: 0 for a target that takes none of the records (its run is complete at once). */
      shardsByTarget: Record<string, number>;
      deadlineNs: bigint;
      startNs: bigint;
      emission: EmissionStats;
      /** The run's lanes against the fire function's concurrency, when it was given. */
      capacity?: CapacityReport;
    }
  | { status: 'duplicate'; shards: 0; messages: 0 };

const BATCHES_AT_ONCE = 4;
/** Inline messages of the slot written before the start is fixed are held in memory: at most this many bytes of them. */
const HELD_INLINE_BYTES = 64 * 1024 * 1024;
/** Time from fixing the start to the ramp's first messages being sent. */
const SEND_ALLOWANCE_MS = 2000;

/** One message of the run: a shard's requests for one target, and when it is first due (ms from the start). */
interface MessageSpec {
  shard: number;
  group: number;
  target: string;
  /** Its first request's offset in the plan, and when it is due for its target (ms from the run's start). */
  offsetMs: number;
  dueMs: number;
  leadMs: number;
}

/** The run's messages in shard order, each with its lead (the ramp's, when asked). */
function messageSpecs(
  args: DispatchRunArgs,
  shards: readonly Shard<PlanItem>[],
  membership: readonly Membership[][],
  groups: readonly { targets: string[] }[],
  shiftMs: (target: string) => number,
): MessageSpec[] {
  const specs: MessageSpec[] = [];
  shards.forEach((shard, si) =>
    groups.forEach((group, gi) => {
      const { mask, count } = (membership[gi] as Membership[])[si] as Membership;
      if (count === 0) return;
      const first = (mask ? shard.requests[mask.indexOf(1)] : shard.requests[0]) as PlanItem;
      for (const target of group.targets)
        specs.push({
          shard: si,
          group: gi,
          target,
          offsetMs: first.offsetMs,
          dueMs: first.offsetMs + shiftMs(target),
          leadMs: args.leadMs,
        });
    }),
  );
  if (args.ramp) {
    const byDue = specs
      .map((_, i) => i)
      .sort((a, b) => (specs[a] as MessageSpec).dueMs - (specs[b] as MessageSpec).dueMs || a - b);
    // A target that starts later (sequential dispatch) has slots of its own.
    const slotKeys = new Map<string, number>();
    const slotOf = byDue.map((i) => {
      const m = specs[i] as MessageSpec;
      const key = `${(shards[m.shard] as Shard<PlanItem>).slotIndex}:${shiftMs(m.target)}`;
      if (!slotKeys.has(key)) slotKeys.set(key, slotKeys.size);
      return slotKeys.get(key) as number;
    });
    const leads = rampLeads(
      Float64Array.from(byDue, (i) => (specs[i] as MessageSpec).dueMs),
      slotOf,
      { leadMs: args.leadMs, ...args.ramp },
    );
    byDue.forEach((i, rank) => ((specs[i] as MessageSpec).leadMs = leads[rank] as number));
  }
  return specs;
}

/**
 * How far ahead of the start the scheduler must be, ms, once the first slot is written (in
 * `firstSlotMs`): each slot's earliest message must leave by its due time minus its lead, and
 * the later slots are written one after the other, each taking about as long per request as
 * the first did. The sending's allowance counts only when that is more than the plain lead.
 */
function aheadOfStartMs(
  slots: readonly SlotSpan[],
  specsOf: ReadonlyMap<number, readonly MessageSpec[]>,
  firstSlotMs: number,
  leadMs: number,
): number {
  const first = slots[0];
  if (!first) return 0;
  const perRequestMs = firstSlotMs / Math.max(1, first.end - first.first);
  let ahead = -Infinity;
  let writtenAfterMs = 0;
  slots.forEach((slot, m) => {
    if (m > 0) writtenAfterMs += (slot.end - slot.first) * perRequestMs;
    for (let lane = 0; lane < slot.lanes; lane++)
      for (const spec of specsOf.get(slot.firstShard + lane) ?? [])
        ahead = Math.max(ahead, writtenAfterMs + spec.leadMs - spec.dueMs);
  });
  return ahead > leadMs ? ahead + SEND_ALLOWANCE_MS : ahead;
}

/** The run cut and laid out: its plans, shards, slots and messages, before anything is written. */
interface RunLayout {
  groups: ReturnType<typeof groupTargets>;
  plans: DispatchablePlan[];
  targetOffsets: ReadonlyMap<string, number>;
  shards: Shard<PlanItem>[];
  /** Per group, the last slot with a shard of its (each of that slot's lanes asks the collector to look). */
  lastSlotOf: number[];
  shardsOfGroup: { shardId: string; requests: number }[][];
  shiftMs: (target: string) => number;
  specsOf: Map<number, MessageSpec[]>;
  slots: SlotSpan[];
  writer: SlotWriter;
}

function layoutOf(args: DispatchRunArgs): RunLayout {
  const groups = groupTargets(args);
  const targetOffsets = targetStartOffsets(args);
  const plans = groups.map((g) => g.plan);
  const union = unionOf(plans);
  const sharding = args.sharding ?? DEFAULT_SHARDING;
  const shards = cutShards(union.items, sharding);
  const membership = plans.map((plan) => membershipOf(plan, shards, union.items.length));
  // A slot's lanes end about together: each of the last slot's asks the collector to look (the deadline covers the rest).
  const lastSlotOf = membership.map((m) => shards[m.findLastIndex((x) => x.count > 0)]?.slotIndex ?? -1);
  const shardsOfGroup = membership.map((m) =>
    shards.flatMap((s, si) =>
      (m[si] as Membership).count > 0 ? [{ shardId: s.shardId, requests: (m[si] as Membership).count }] : [],
    ),
  );
  const shiftMs = (target: string) => targetOffsets.get(target) ?? 0;
  const specsOf = new Map<number, MessageSpec[]>();
  for (const m of messageSpecs(args, shards, membership, groups, shiftMs))
    specsOf.set(m.shard, [...(specsOf.get(m.shard) ?? []), m]);
  const slots: SlotSpan[] = [];
  for (const s of slotsOf(union.items, sharding))
    slots.push({ first: s.first, end: s.end, lanes: s.lanes, firstShard: slots.reduce((n, x) => n + x.lanes, 0) });
  const writer: SlotWriter = {
    runId: args.runId,
    store: args.store,
    sharding,
    items: union.items,
    shards,
    membership,
    load: (first, end) => loadUnion(plans, union, first, end),
  };
  return { groups, plans, targetOffsets, shards, lastSlotOf, shardsOfGroup, shiftMs, specsOf, slots, writer };
}

/**
 * The start, fixed once for every attempt at this run. A run whose start may move writes its
 * first slot before fixing it (into `prepared`), and starts late enough for each slot's
 * messages (their ramp included) to be sent on time, the later slots written at the first
 * one's pace.
 */
async function fixStart(
  args: DispatchRunArgs,
  layout: RunLayout,
  prepared: Map<SlotSpan, (LaneContent | null)[][]>,
): Promise<bigint> {
  let wanted = args.startNs;
  const firstSlot = layout.slots[0];
  if (args.startMoves && firstSlot) {
    const began = args.clock.nowNs();
    let held = 0;
    prepared.set(
      firstSlot,
      await writeSlot(layout.writer, firstSlot, (bytes) =>
        held + bytes <= HELD_INLINE_BYTES ? ((held += bytes), true) : false,
      ),
    );
    const now = args.clock.nowNs();
    const earliest =
      now +
      BigInt(Math.ceil(aheadOfStartMs(layout.slots, layout.specsOf, Number(now - began) / 1e6, args.leadMs))) *
        1_000_000n;
    if (earliest > wanted) wanted = earliest;
  }
  if (
    await args.store.putIfAbsent(
      runStartKey(args.runId),
      JSON.stringify({ v: 1, startNs: wanted.toString() }),
      'application/json',
    )
  )
    return wanted;
  const stored = await args.store.get(runStartKey(args.runId));
  return stored ? BigInt(startRecordSchema.parse(decodeJson(stored)).startNs) : wanted;
}

/**
 * The run's fire invocations (each shard for each target that takes some of it: its first and
 * last due times from the run's start) weighed against the fire function's concurrency.
 */
function runCapacity(args: DispatchRunArgs, layout: RunLayout, capacity: FireCapacity): CapacityReport {
  const lanes: LaneNeed[] = [];
  for (const specs of layout.specsOf.values()) {
    for (const spec of specs) {
      const shard = layout.shards[spec.shard] as Shard<PlanItem>;
      const { mask } = (layout.writer.membership[spec.group] as Membership[])[spec.shard] as Membership;
      const shift = spec.dueMs - spec.offsetMs;
      const taken = (k: number) => !mask || mask[k] === 1;
      const last = mask ? mask.lastIndexOf(1) : shard.requests.length - 1;
      lanes.push({
        firstDueMs: spec.dueMs,
        lastDueMs: (shard.requests[last] as PlanItem).offsetMs + shift,
        dueBefore: (ms) =>
          shard.requests.reduce((n, item, k) => n + (taken(k) && item.offsetMs + shift < ms ? 1 : 0), 0),
      });
    }
  }
  return assessCapacity(lanes, { leadMs: args.leadMs, busiestSecond: busiestSecond(layout.writer.items), capacity });
}

/** When a plan offset is due for a target, ns. */
type DueOf = (offsetMs: number, target: string) => bigint;

/** Each target's requests its plan could not replay, as drop lines of the ingest's own results object. */
async function writeDrops(args: DispatchRunArgs, layout: RunLayout, dueOf: DueOf): Promise<void> {
  for (const { plan, targets } of layout.groups) {
    for (const target of targets) {
      const drops: ResultLine[] = plan.incompatible.map(({ index, offsetMs, reason }) => ({
        kind: 'drop',
        requestId: deterministicUuid(args.runId, target, index),
        index,
        scheduledNs: dueOf(offsetMs, target),
        dropReason: reason,
      }));
      await args.store.putIfAbsent(
        resultsKey(args.runId, target, INGEST_SHARD),
        encodeResultLines(drops),
        'application/x-ndjson',
      );
    }
  }
}

/** One slot's messages, each lane's for every target that takes it; late lanes counted in `emission`. */
function slotMessages(
  args: DispatchRunArgs,
  layout: RunLayout,
  slot: SlotSpan,
  content: (LaneContent | null)[][],
  dueOf: DueOf,
  emission: EmissionStats,
): OutgoingMessage[] {
  // Delays are computed at the moment of sending: loading took time.
  const now = args.clock.nowNs();
  const outgoing: OutgoingMessage[] = [];
  for (let lane = 0; lane < slot.lanes; lane++) {
    const si = slot.firstShard + lane;
    const shard = layout.shards[si] as Shard<PlanItem>;
    let lateMs = -Infinity;
    for (const spec of layout.specsOf.get(si) ?? []) {
      const c = (content[lane] as (LaneContent | null)[])[spec.group] as LaneContent;
      const firstDueNs = dueOf(spec.offsetMs, spec.target);
      const message: ShardMessage = {
        v: 1,
        kind: 'shard',
        runId: args.runId,
        target: spec.target,
        shardId: shard.shardId,
        startNs: dueOf(0, spec.target).toString(),
        firstDueNs: firstDueNs.toString(),
        hops: 0,
        last: shard.slotIndex === layout.lastSlotOf[spec.group],
        ...('inline' in c ? { requests: c.inline } : { requests: [], requestsRef: c.ref }),
        ...(spec.leadMs !== args.leadMs ? { leadMs: spec.leadMs } : {}),
      };
      lateMs = Math.max(lateMs, Number(now - (firstDueNs - BigInt(spec.leadMs) * 1_000_000n)) / 1e6);
      outgoing.push({
        id: `${spec.target}-${shard.shardId}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80),
        body: JSON.stringify(message),
        delaySeconds: deliveryDelay(firstDueNs, now, spec.leadMs).delaySeconds,
      });
    }
    if (lateMs > 0) {
      emission.lateShards++;
      emission.maxLateMs = Math.max(emission.maxLateMs, lateMs);
    }
  }
  return outgoing;
}

/** The run record: what the collector waits for, and by when. */
function runRecordOf(args: DispatchRunArgs, layout: RunLayout, startNs: bigint, nowNs: bigint): RunRecord {
  const { groups, shardsOfGroup } = layout;
  // The latest target's last due time: a sequential run ends with its last target.
  const durationMs = Math.max(...layout.plans.map((p) => p.durationMs)) + Math.max(0, ...layout.targetOffsets.values());
  return {
    v: 1,
    runId: args.runId,
    targets: [...args.targets],
    startNs: startNs.toString(),
    deadlineNs: (startNs + BigInt(Math.round((durationMs + args.graceMs) * 1e6))).toString(),
    createdAt: new Date(Number(nowNs / 1_000_000n)).toISOString(),
    shards: layout.shards.map((s) => ({ shardId: s.shardId, requests: s.requests.length })),
    // Targets on plans of their own: each waits for its own shards, not for every one cut.
    ...(groups.length > 1
      ? {
          targetShards: Object.fromEntries(
            groups.flatMap((g, gi) => g.targets.map((t) => [t, shardsOfGroup[gi] as RunRecord['shards']])),
          ),
        }
      : {}),
    notScheduledByReason: args.notScheduledByReason,
    inputConfig: args.inputConfig,
    ...(args.hour ? { hour: args.hour } : {}),
  };
}

export async function dispatchRun(args: DispatchRunArgs): Promise<DispatchResult> {
  const { store, runId } = args;
  if (await store.get(runRecordKey(runId))) return { status: 'duplicate', shards: 0, messages: 0 };
  const layout = layoutOf(args);
  const capacity = args.fireCapacity ? runCapacity(args, layout, args.fireCapacity) : undefined;
  if (args.ingestReport)
    await writeIngestReport(store, runPrefix(runId), { ...args.ingestReport, ...(capacity ? { capacity } : {}) });
  const prepared = new Map<SlotSpan, (LaneContent | null)[][]>();
  const startNs = await fixStart(args, layout, prepared);
  const dueOf: DueOf = (offsetMs, target) =>
    startNs + BigInt(Math.round(offsetMs * 1e6)) + BigInt(Math.round(layout.shiftMs(target) * 1e6));
  await writeDrops(args, layout, dueOf);

  const emission: EmissionStats = { shards: layout.shards.length, messages: 0, lateShards: 0, maxLateMs: 0 };
  for (const slot of layout.slots) {
    const content = prepared.get(slot) ?? (await writeSlot(layout.writer, slot));
    prepared.delete(slot);
    const outgoing = slotMessages(args, layout, slot, content, dueOf, emission);
    await sendAll(args.queue, outgoing, BATCHES_AT_ONCE);
    emission.messages += outgoing.length;
  }

  const record = runRecordOf(args, layout, startNs, args.clock.nowNs());
  await store.put(runRecordKey(runId), JSON.stringify(record), 'application/json');
  const shardsByTarget = Object.fromEntries(
    layout.groups.flatMap((g, gi) => g.targets.map((t) => [t, (layout.shardsOfGroup[gi] as unknown[]).length])),
  );
  return {
    status: 'scheduled',
    shards: layout.shards.length,
    messages: emission.messages,
    shardsByTarget,
    deadlineNs: BigInt(record.deadlineNs),
    startNs,
    emission,
    ...(capacity ? { capacity } : {}),
  };
}

/** The requests of union positions [first, end), each loaded (once) by the plan that owns it. */
async function loadUnion(
  plans: readonly DispatchablePlan[],
  union: { items: readonly PlanItem[]; owners: Uint8Array | null },
  first: number,
  end: number,
): Promise<ScheduledRequest[]> {
  const items = union.items.slice(first, end);
  const { owners } = union;
  if (!owners) return (plans[0] as DispatchablePlan).load(items);
  const parts = new Map<number, { positions: number[]; items: PlanItem[] }>();
  items.forEach((item, k) => {
    const owner = owners[first + k] as number;
    const part = parts.get(owner) ?? { positions: [], items: [] };
    part.positions.push(k);
    part.items.push(item);
    parts.set(owner, part);
  });
  const out = new Array<ScheduledRequest>(items.length);
  await Promise.all(
    [...parts].map(async ([owner, part]) => {
      const loaded = await (plans[owner] as DispatchablePlan).load(part.items);
      loaded.forEach((request, j) => (out[part.positions[j] as number] = request));
    }),
  );
  return out;
}
