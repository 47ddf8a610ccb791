/**
 * Fire stage: re-delay while still early (by the message's own lead, when it has one); load the
 * requests (inline, or the shard's parts by reference) and the bodies; claim the shard with a
 * conditional create (a duplicate delivery fires nothing); fire; write the shard's results
 * once, retried. Why it is exact under redelivery (what comes before the claim, `expired`, a
 * refused claim read back, a claim without results): docs/deploy.md#firing-a-shard.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, MessageQueue, ObjectStore } from '../../ports';
import { computeProfileRecord } from '../metrics/record-metrics';
import type { DropReason, FireOutcome, ScheduledRequest } from '../types';
import { deterministicUuid } from '../ids';
import { z } from 'zod';
import { PermanentError } from '../errors';
import { decodeJson, parseMessageJson, sendAll, withRetries } from './common';
import { claimKey, resultsKey } from './keys';
import { encodeResultLine, encodeResultLines, joinResultLines, type ResultLine } from './results';
import { shardRequests } from './shard-parts';
import { fromWire, shardMessageSchema, type ShardMessage } from './shards';
import { deliveryDelay, stillEarly } from './sqs-delay';

export interface HandleShardDeps {
  store: ObjectStore;
  queue: MessageQueue;
  clock: Clock;
  leadMs: number;
  workerId: string;
  /** How long a claimant can still be running: the fire function's timeout. */
  claimLeaseMs: number;
  /**
   * Resolves what firing the shard needs and can fail (the target, its API key), and warms up
   * for its requests, before the claim; it throws to have the message retried (or a
   * PermanentError to drop it).
   */
  prepare?: (message: ShardMessage, requests: ScheduledRequest[]) => Promise<void>;
  /**
   * Fires the shard's requests (the core fire loop with a real target, in production), handing
   * each request's outcome to `onOutcome` as it ends.
   */
  fire: (
    requests: ScheduledRequest[],
    message: ShardMessage,
    onOutcome: (outcome: FireOutcome) => void,
  ) => Promise<unknown>;
}

export type ShardAction = 'deferred' | 'duplicate' | 'fired' | 'lost-after-claim';

/** What a shard's requests came to (all 0 unless fired). */
export interface ShardCounts {
  fired: number;
  failed: number;
  dropped: number;
  expired: number;
  /** Each drop reason, and how many. */
  dropReasons: Partial<Record<DropReason, number>>;
}

/**
 * The shard's requests, their bodies read: in a function of their own, so that the wire form
 * (the parts' JSON, base64 bodies) is not kept alive by the stage's frame while the shard fires.
 */
async function loadRequests(message: ShardMessage, store: ObjectStore): Promise<ScheduledRequest[]> {
  const wire = await shardRequests(message, store);
  return Promise.all(wire.map((w) => fromWire(w, (key) => store.get(key))));
}

const noCounts = (): ShardCounts => ({ fired: 0, failed: 0, dropped: 0, expired: 0, dropReasons: {} });

/** `raw` is the SQS message body. Throws (retryable) only on infrastructure errors; a malformed message is a permanent error. */
export async function handleShard(
  raw: string,
  deps: HandleShardDeps,
): Promise<{ action: ShardAction; message: ShardMessage; counts: ShardCounts }> {
  const parsed = shardMessageSchema.safeParse(parseMessageJson(raw, 'shard'));
  if (!parsed.success) throw new PermanentError(`not a shard message: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const message = parsed.data;
  const firstDueNs = BigInt(message.firstDueNs);
  // A message of a run's ramp is delivered early on purpose (its own lead): it waits here.
  const leadMs = message.leadMs ?? deps.leadMs;
  if (stillEarly(firstDueNs, deps.clock.nowNs(), leadMs)) {
    const next: ShardMessage = { ...message, hops: message.hops + 1 };
    const { delaySeconds } = deliveryDelay(firstDueNs, deps.clock.nowNs(), leadMs);
    await sendAll(deps.queue, [{ id: 'hop', body: JSON.stringify(next), delaySeconds }]);
    return { action: 'deferred', message, counts: noCounts() };
  }
  // Before the claim: a failure here leaves the shard unclaimed, so a redelivery can fire it.
  const requests = await loadRequests(message, deps.store);
  await deps.prepare?.(message, requests);
  const claim = await claimShard(deps, claimKey(message.runId, message.target, message.shardId));
  const key = resultsKey(message.runId, message.target, message.shardId);
  const writeResults = (lines: ResultLine[]) =>
    withRetries(() => deps.store.putIfAbsent(key, encodeResultLines(lines), 'application/x-ndjson'), deps.clock);
  if (claim.held) {
    if (await deps.store.get(key)) return { action: 'duplicate', message, counts: noCounts() };
    // A claim without results older than the lease (the fire function's timeout): its claimant fired and died before
    // writing them, so its requests are lost. A younger one may belong to a worker still firing: the deadline covers it.
    const claimedAtNs = claim.bytes ? claimTimeNs(claim.bytes) : null;
    const leaseNs = BigInt(deps.claimLeaseMs) * 1_000_000n;
    if (claimedAtNs === null || deps.clock.nowNs() - claimedAtNs <= leaseNs)
      return { action: 'duplicate', message, counts: noCounts() };
    const startNs = BigInt(message.startNs);
    await writeResults(
      requests.map((r) => ({
        kind: 'drop',
        requestId: deterministicUuid(message.runId, message.target, r.index),
        index: r.index,
        scheduledNs: startNs + BigInt(Math.round(r.offsetMs * 1e6)),
        dropReason: 'lost',
      })),
    );
    return { action: 'lost-after-claim', message, counts: noCounts() };
  }
  // Each outcome is written into its line as it ends: what a lane holds while it fires is its
  // lines' text, not every response's measurements (its chunks' arrival times).
  const encoded: [number, string][] = [];
  const counts = noCounts();
  await deps.fire(requests, message, (o) => {
    const line: ResultLine = o.result
      ? { kind: 'record', record: computeProfileRecord(o, deps.workerId) }
      : {
          kind: 'drop',
          requestId: o.requestId,
          index: o.request.index,
          scheduledNs: o.scheduledNs,
          dropReason: o.dropReason ?? 'lost',
        };
    // As a string, in the JavaScript heap: a string has no references to trace, and bytes would
    // be external memory, whose own limit starts V8's longest collections (adapters/lane-heap.ts).
    encoded.push([o.request.index, encodeResultLine(line)]);
    if (o.result) {
      counts.fired++;
      if (o.result.error) counts.failed++;
    } else {
      const reason = o.dropReason ?? 'lost';
      counts.dropped++;
      if (reason === 'expired') counts.expired++;
      counts.dropReasons[reason] = (counts.dropReasons[reason] ?? 0) + 1;
    }
  });
  if (encoded.length !== requests.length)
    throw new Error(`the fire loop gave ${encoded.length} outcomes for ${requests.length} requests`);
  // Plan order, as the object always had.
  encoded.sort((a, b) => a[0] - b[0]);
  const text = joinResultLines(encoded.map((e) => e[1]));
  encoded.length = 0;
  await withRetries(() => deps.store.putIfAbsent(key, text, 'application/x-ndjson'), deps.clock);
  return { action: 'fired', message, counts };
}

/**
 * Claims the shard: a conditional create of a body unique to this attempt (the nonce: one
 * invocation can hold two deliveries of a shard). A refused create is read back and compared:
 * the SDK retries a PUT that answered 5xx, and when the first try had in fact been stored the
 * retry meets its own claim (412). `held`: another attempt's claim (or one that cannot be
 * read), with its bytes when there are some.
 */
async function claimShard(
  deps: HandleShardDeps,
  key: string,
): Promise<{ held: false } | { held: true; bytes: Uint8Array | null }> {
  const body = JSON.stringify({ workerId: deps.workerId, atNs: deps.clock.nowNs().toString(), nonce: randomUUID() });
  if (await deps.store.putIfAbsent(key, body, 'application/json')) return { held: false };
  const bytes = await deps.store.get(key);
  if (bytes && new TextDecoder().decode(bytes) === body) return { held: false };
  return { held: true, bytes };
}

const claimSchema = z.object({ atNs: z.string().regex(/^\d+$/) });

/** When a claim was taken; null for a claim that cannot be read (treated as still held). */
function claimTimeNs(bytes: Uint8Array): bigint | null {
  try {
    const parsed = claimSchema.safeParse(decodeJson(bytes));
    return parsed.success ? BigInt(parsed.data.atNs) : null;
  } catch {
    return null;
  }
}
