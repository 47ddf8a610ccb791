/**
 * Fire stage: re-delay while still early; claim the shard with a conditional create (a
 * duplicate delivery fires nothing); fire; write the shard's results once.
 */
import type { Clock, MessageQueue, ObjectStore } from '../../ports';
import { computeProfileRecord } from '../metrics/record-metrics';
import type { FireOutcome, ScheduledRequest } from '../types';
import { parseMessageJson, PermanentError, sendAll } from './common';
import { claimKey, resultsKey } from './keys';
import { encodeResultLines, type ResultLine } from './results';
import { fromWire, shardMessageSchema, type ShardMessage } from './shards';
import { deliveryDelay, stillEarly } from './sqs-schedule';

export interface HandleShardDeps {
  store: ObjectStore;
  queue: MessageQueue;
  clock: Clock;
  leadMs: number;
  workerId: string;
  /** Fires the shard's requests (the core fire loop with a real target, in production). */
  fire: (requests: ScheduledRequest[], message: ShardMessage) => Promise<FireOutcome[]>;
}

export type ShardAction = 'deferred' | 'duplicate' | 'fired';

/** `raw` is the SQS message body. Throws (retryable) only on infrastructure errors; a malformed message is a permanent error. */
export async function handleShard(raw: string, deps: HandleShardDeps): Promise<{ action: ShardAction; message: ShardMessage; outcomes: FireOutcome[] }> {
  const parsed = shardMessageSchema.safeParse(parseMessageJson(raw, 'shard'));
  if (!parsed.success) throw new PermanentError(`not a shard message: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const message = parsed.data;
  const firstDueNs = BigInt(message.firstDueNs);
  if (stillEarly(firstDueNs, deps.clock.nowNs(), deps.leadMs)) {
    const next: ShardMessage = { ...message, hops: message.hops + 1 };
    const { delaySeconds } = deliveryDelay(firstDueNs, deps.clock.nowNs(), deps.leadMs);
    await sendAll(deps.queue, [{ id: 'hop', body: JSON.stringify(next), delaySeconds }]);
    return { action: 'deferred', message, outcomes: [] };
  }
  const claimed = await deps.store.putIfAbsent(
    claimKey(message.runId, message.target, message.shardId),
    JSON.stringify({ workerId: deps.workerId, at: new Date(Number(deps.clock.nowNs() / 1_000_000n)).toISOString() }),
    'application/json',
  );
  if (!claimed) return { action: 'duplicate', message, outcomes: [] };
  const requests = await Promise.all(message.requests.map((w) => fromWire(w, (key) => deps.store.get(key))));
  const outcomes = await deps.fire(requests, message);
  const lines: ResultLine[] = outcomes.map((o) =>
    o.result
      ? { kind: 'record', record: computeProfileRecord(o, deps.workerId) }
      : { kind: 'drop', requestId: o.requestId, index: o.request.index, scheduledNs: o.scheduledNs, dropReason: o.dropReason ?? 'lost' },
  );
  await deps.store.putIfAbsent(resultsKey(message.runId, message.target, message.shardId), encodeResultLines(lines), 'application/x-ndjson');
  return { action: 'fired', message, outcomes };
}

