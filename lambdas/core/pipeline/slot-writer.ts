/**
 * One slot of a run made ready for its messages: its requests loaded a chunk at a time (memory
 * holds a chunk, not the slot: a 2-minute slot at 10,000 requests/s is over a million), each
 * chunk dealt to the slot's lanes (request i of the slot to lane i mod lanes, as cutShards deals
 * them), and each lane's requests for each plan group either kept for an inline message or, when
 * they would not fit one, written as parts (shard-parts.ts) for the message to name.
 *
 * Part keys depend only on the plan and the options, so a retried ingest writes the same objects
 * with the same bytes: a worker reading them while they are written again reads either copy.
 */
import type { ObjectStore } from '../../ports';
import { Semaphore } from '../fire/semaphore';
import type { ScheduledRequest } from '../types';
import { bodyKey, shardPartsPrefix } from './keys';
import type { Membership, PlanItem } from './plan-groups';
import { encodePart, partKey, partRequests } from './shard-parts';
import { toWire, wireBytes, type Shard, type ShardingOptions, type WireRequest } from './shards';

export type LaneContent = { inline: WireRequest[] } | { ref: { prefix: string; parts: number; requests: number } };

export interface SlotWriter {
  runId: string;
  store: ObjectStore;
  sharding: ShardingOptions;
  /** Every item any plan sends, in due order. */
  items: readonly PlanItem[];
  shards: readonly Shard<PlanItem>[];
  /** Per plan group, per shard: which of the shard's requests the group sends. */
  membership: readonly (readonly Membership[])[];
  /** The requests of union positions [first, end). */
  load(first: number, end: number): Promise<ScheduledRequest[]>;
}

export interface SlotSpan {
  /** Union positions of the slot's requests: [first, end). */
  first: number;
  end: number;
  lanes: number;
  /** Index of the slot's first shard (its lane 0) in `shards`. */
  firstShard: number;
}

type Pending = { inline: WireRequest[] } | { prefix: string; parts: number; requests: number } | null;

/** A message's JSON around its requests (ids, times, flags), generous. */
export const MESSAGE_OVERHEAD_BYTES = 1024;
const PUTS_AT_ONCE = 16;

/** Bytes a group's share of a shard takes inline. */
function inlineBytes(shard: Shard<PlanItem>, m: Membership, o: ShardingOptions): number {
  let bytes = MESSAGE_OVERHEAD_BYTES;
  shard.requests.forEach((item, k) => {
    if (!m.mask || m.mask[k] === 1) bytes += wireBytes(item.bodyBytes, item.sourceFile, o);
  });
  return bytes;
}

/**
 * The slot's content per lane (shard) and group: null where the group sends none of the lane.
 * `inlineAllowed(bytes)` may refuse an inline message that fits (the caller's memory budget).
 */
export async function writeSlot(
  w: SlotWriter,
  slot: SlotSpan,
  inlineAllowed: (bytes: number) => boolean = () => true,
): Promise<(LaneContent | null)[][]> {
  const groups = w.membership.length;
  const lanes = Array.from({ length: slot.lanes }, (_, lane) => slot.firstShard + lane);
  // Per lane and group: inline (a list), by reference (a part counter), or nothing.
  const plan: Pending[][] = lanes.map((si) =>
    Array.from({ length: groups }, (_, gi): Pending => {
      const m = (w.membership[gi] as Membership[])[si] as Membership;
      if (m.count === 0) return null;
      const bytes = inlineBytes(w.shards[si] as Shard<PlanItem>, m, w.sharding);
      return bytes <= w.sharding.maxMessageBytes && inlineAllowed(bytes)
        ? { inline: [] as WireRequest[] }
        : { prefix: shardPartsPrefix(w.runId, gi, (w.shards[si] as Shard<PlanItem>).shardId), parts: 0, requests: 0 };
    }),
  );
  const puts = new Semaphore(PUTS_AT_ONCE);
  const put = async (key: string, body: string | Uint8Array, type: string) => {
    await puts.acquire();
    try {
      await w.store.put(key, body, type);
    } finally {
      puts.release();
    }
  };
  const perChunk = slot.lanes * partRequests(slot.lanes);
  for (let from = slot.first; from < slot.end; from += perChunk) {
    const to = Math.min(slot.end, from + perChunk);
    const requests = await w.load(from, to);
    const wire = await Promise.all(
      requests.map(async (r) =>
        r.body.byteLength > w.sharding.maxInlineBodyBytes
          ? (await put(bodyKey(w.runId, r.index), r.body, 'application/octet-stream'),
            toWire(r, bodyKey(w.runId, r.index)))
          : toWire(r, null),
      ),
    );
    const chunk = lanes.map(() => Array.from({ length: groups }, () => [] as WireRequest[]));
    wire.forEach((request, j) => {
      const p = from + j - slot.first;
      const lane = p % slot.lanes;
      const k = Math.floor(p / slot.lanes);
      for (let gi = 0; gi < groups; gi++) {
        const m = (w.membership[gi] as Membership[])[lanes[lane] as number] as Membership;
        if (m.count > 0 && (!m.mask || m.mask[k] === 1)) (chunk[lane] as WireRequest[][])[gi]?.push(request);
      }
    });
    const writes: Promise<void>[] = [];
    chunk.forEach((byGroup, lane) =>
      byGroup.forEach((share, gi) => {
        const target = (plan[lane] as Pending[])[gi];
        if (!target || share.length === 0) return;
        if ('inline' in target) target.inline.push(...share);
        else {
          writes.push(put(partKey(target.prefix, target.parts), encodePart(share), 'application/json'));
          target.parts++;
          target.requests += share.length;
        }
      }),
    );
    await Promise.all(writes);
  }
  return plan.map((byGroup) =>
    byGroup.map((c) => (c === null ? null : 'inline' in c ? { inline: c.inline } : { ref: c })),
  );
}
