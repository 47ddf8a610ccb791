/**
 * Ingest stage: plan -> shards -> delayed shard messages, referenced bodies, the run record
 * (written last: its presence means "fully scheduled", so a redelivered S3 event for the same
 * object schedules nothing twice).
 */
import type { Clock, MessageQueue, ObjectStore } from '../../ports';
import { deterministicUuid } from '../ids';
import type { ReplayPlan, RunManifest, ScheduledRequest } from '../types';
import { INGEST_SHARD, sendAll, type RunRecord } from './common';
import { bodyKey, resultsKey, runRecordKey } from './keys';
import { encodeResultLines, type ResultLine } from './results';
import { cutShards, DEFAULT_SHARDING, toWire, type ShardingOptions, type ShardMessage } from './shards';
import { deliveryDelay } from './sqs-schedule';
export interface ScheduleRunArgs {
  runId: string;
  plan: ReplayPlan;
  targets: readonly string[];
  startNs: bigint;
  leadMs: number;
  /** How long after the last due time a run is finalised even with shards missing. */
  graceMs: number;
  inputConfig: unknown;
  notScheduledByReason: RunManifest['notScheduledByReason'];
  /** Mirror mode: the capture hour this run's results roll up into. */
  hour?: string;
  sharding?: ShardingOptions;
  store: ObjectStore;
  queue: MessageQueue;
  clock: Clock;
}

export async function scheduleRun(
  args: ScheduleRunArgs,
): Promise<{ status: 'scheduled'; shards: number; messages: number; deadlineNs: bigint } | { status: 'duplicate'; shards: 0; messages: 0 }> {
  const { store, runId } = args;
  if (await store.get(runRecordKey(runId))) return { status: 'duplicate', shards: 0, messages: 0 };
  const sharding = args.sharding ?? DEFAULT_SHARDING;
  const shards = cutShards(args.plan.requests, sharding);

  const refs = new Map<number, string>();
  for (const request of args.plan.requests) {
    if (request.body.byteLength > sharding.maxInlineBodyBytes) {
      const key = bodyKey(runId, request.index);
      await store.put(key, request.body, 'application/octet-stream');
      refs.set(request.index, key);
    }
  }
  for (const target of args.targets) {
    const drops: ResultLine[] = args.plan.incompatible.map(({ request, reason }) => ({
      kind: 'drop',
      requestId: deterministicUuid(runId, target, request.index),
      index: request.index,
      scheduledNs: args.startNs + BigInt(Math.round(request.offsetMs * 1e6)),
      dropReason: reason,
    }));
    await store.putIfAbsent(resultsKey(runId, target, INGEST_SHARD), encodeResultLines(drops), 'application/x-ndjson');
  }

  const now = args.clock.nowNs();
  const messages = args.targets.flatMap((target) =>
    shards.map((shard, i) => {
      const firstDueNs = args.startNs + BigInt(Math.round((shard.requests[0] as ScheduledRequest).offsetMs * 1e6));
      const message: ShardMessage = {
        v: 1,
        kind: 'shard',
        runId,
        target,
        shardId: shard.shardId,
        startNs: args.startNs.toString(),
        firstDueNs: firstDueNs.toString(),
        hops: 0,
        last: i === shards.length - 1,
        requests: shard.requests.map((r) => toWire(r, refs.get(r.index) ?? null)),
      };
      return { id: `${target}-${shard.shardId}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80), body: JSON.stringify(message), delaySeconds: deliveryDelay(firstDueNs, now, args.leadMs).delaySeconds };
    }),
  );
  await sendAll(args.queue, messages);

  const record: RunRecord = {
    v: 1,
    runId,
    targets: [...args.targets],
    startNs: args.startNs.toString(),
    deadlineNs: (args.startNs + BigInt(Math.round((args.plan.durationMs + args.graceMs) * 1e6))).toString(),
    createdAt: new Date(Number(now / 1_000_000n)).toISOString(),
    shards: shards.map((s) => ({ shardId: s.shardId, requests: s.requests.length })),
    notScheduledByReason: args.notScheduledByReason,
    inputConfig: args.inputConfig,
    ...(args.hour ? { hour: args.hour } : {}),
  };
  await store.put(runRecordKey(runId), JSON.stringify(record), 'application/json');
  return { status: 'scheduled', shards: shards.length, messages: messages.length, deadlineNs: BigInt(record.deadlineNs) };
}

