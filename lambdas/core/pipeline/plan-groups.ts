/**
 * The plans a run's targets share: targets of different kinds (an HTTP chat target and a
 * SageMaker endpoint) each get their own plan of the same records, so one set of shards is cut
 * from every record any target takes (the union), read once, and each target's message for a
 * shard carries the records its plan takes (its membership).
 */
import type { DropReason, ReplayPlan, ScheduledRequest } from '../types';
import type { Shard } from './shards';

/** What grouping the targets takes of a run's arguments. */
export interface GroupArgs {
  plan: ReplayPlan | DispatchablePlan;
  targets: readonly string[];
  targetPlans?: Readonly<Record<string, ReplayPlan | DispatchablePlan>>;
  targetStartOffsetsMs?: Readonly<Record<string, number>>;
}

/** One request of a plan as the scheduler sees it before its body is loaded. */
export interface PlanItem {
  index: number;
  offsetMs: number;
  bodyBytes: number;
  sourceFile: string;
}

/** A plan the scheduler can send: items in due order, bodies loaded on demand. */
export interface DispatchablePlan {
  items: PlanItem[];
  incompatible: { index: number; offsetMs: number; reason: DropReason }[];
  durationMs: number;
  /** The requests for these items, in the same order. */
  load(items: readonly PlanItem[]): Promise<ScheduledRequest[]>;
}

/** A plan held in memory, as a schedulable one. */
export function fromReplayPlan(plan: ReplayPlan): DispatchablePlan {
  const byIndex = new Map(plan.requests.map((r) => [r.index, r]));
  return {
    items: plan.requests.map((r) => ({
      index: r.index,
      offsetMs: r.offsetMs,
      bodyBytes: r.body.byteLength,
      sourceFile: r.source.file,
    })),
    incompatible: plan.incompatible.map(({ request, reason }) => ({
      index: request.index,
      offsetMs: request.offsetMs,
      reason,
    })),
    durationMs: plan.durationMs,
    load: async (items) => items.map((i) => byIndex.get(i.index) as ScheduledRequest),
  };
}

/** Targets that share a plan. */
export interface TargetGroup {
  plan: DispatchablePlan;
  targets: string[];
}

export const asSchedulable = (plan: ReplayPlan | DispatchablePlan): DispatchablePlan =>
  'load' in plan ? plan : fromReplayPlan(plan);

export function groupTargets(args: GroupArgs): TargetGroup[] {
  const main: TargetGroup = { plan: asSchedulable(args.plan), targets: [] };
  const groups = [main];
  const byPlan = new Map<ReplayPlan | DispatchablePlan, TargetGroup>([[args.plan, main]]);
  for (const name of Object.keys(args.targetPlans ?? {})) {
    if (!args.targets.includes(name))
      throw new Error(`targetPlans names ${name}, which is not one of the run's targets`);
  }
  for (const target of args.targets) {
    const own = args.targetPlans?.[target];
    let group = own === undefined ? main : byPlan.get(own);
    if (!group) {
      group = { plan: asSchedulable(own as ReplayPlan | DispatchablePlan), targets: [] };
      byPlan.set(own as ReplayPlan | DispatchablePlan, group);
      groups.push(group);
    }
    group.targets.push(target);
  }
  const used = groups.filter((g) => g.targets.length > 0);
  const sizes = new Set(used.map((g) => g.plan.items.length + g.plan.incompatible.length));
  if (sizes.size > 1)
    throw new Error(
      `the targets' plans cover different numbers of records (${[...sizes].join(', ')}): they must be planned from the same records`,
    );
  return used;
}

/**
 * Every item any plan sends, in index (= due) order, and which plan loads it: the plan with
 * the most items among those that have it (a SageMaker plan takes every record, so it loads
 * them all, in one read per shard). Each plan's items must be in index order (plans are).
 */
export function unionOf(plans: readonly DispatchablePlan[]): { items: PlanItem[]; owners: Uint8Array | null } {
  if (plans.length === 1) return { items: (plans[0] as DispatchablePlan).items, owners: null };
  const byPriority = plans
    .map((_, i) => i)
    .sort((a, b) => (plans[b] as DispatchablePlan).items.length - (plans[a] as DispatchablePlan).items.length);
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
      const item = (plans[i] as DispatchablePlan).items[cursors[i] as number];
      if (!item || item.index !== next) continue;
      if (chosen === null) {
        chosen = item;
        owners.push(i);
      } else if (item.offsetMs !== chosen.offsetMs) {
        throw new Error(
          `request ${next} is due at ${chosen.offsetMs} ms in one plan and ${item.offsetMs} ms in another: ` +
            'the plans do not come from the same records',
        );
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
export interface Membership {
  mask: Uint8Array | null;
  count: number;
}

export function membershipOf(
  plan: DispatchablePlan,
  shards: readonly Shard<PlanItem>[],
  unionSize: number,
): Membership[] {
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

export function targetStartOffsets(args: GroupArgs): Map<string, number> {
  const offsets = new Map(Object.entries(args.targetStartOffsetsMs ?? {}));
  for (const [target, ms] of offsets) {
    if (!args.targets.includes(target))
      throw new Error(`targetStartOffsetsMs names ${target}, which is not one of the run's targets`);
    if (!(Number.isFinite(ms) && ms >= 0))
      throw new Error(`targetStartOffsetsMs.${target} must be a finite number of ms >= 0 (got ${ms})`);
  }
  return offsets;
}
