/**
 * The three stages of the serverless pipeline as pure functions over ports; the Lambda
 * handlers only parse events and wire dependencies around these.
 *
 * - scheduleRun (ingest): plan -> shards -> delayed shard messages, referenced bodies, the
 *   run record (written last: its presence means "fully scheduled", so a redelivered S3
 *   event for the same object schedules nothing twice).
 * - handleShard (fire): re-delay while still early; claim the shard with a conditional
 *   create (a duplicate delivery fires nothing); fire; write the shard's results once.
 * - collectRun (collect): when every shard has reported, or the deadline has passed (the
 *   missing shards' requests are then counted as `lost`), dedupe by request id and write the
 *   same artifacts as the local CLI.
 */
import { z } from 'zod';
import type { Clock, MessageQueue, ObjectStore } from '../../ports';
import { writeTargetArtifacts } from '../export/artifacts';
import { buildManifest, type ManifestEntry } from '../export/manifest';
import { deterministicUuid } from '../ids';
import { aggregate } from '../metrics/aggregate';
import { computeProfileRecord } from '../metrics/record-metrics';
import type { FireOutcome, ProfileRecord, ReplayPlan, RunManifest, ScheduledRequest } from '../types';
import { decodeResultLines, encodeResultLines, resultRequestId, type ResultLine } from './results';
import { bodyKey, claimKey, hourPrefix, resultsKey, resultsPrefix, runRecordKey, targetPrefix } from './keys';
import { cutShards, DEFAULT_SHARDING, fromWire, shardMessageSchema, toWire, type ShardingOptions, type ShardMessage } from './shards';
import { deliveryDelay, stillEarly } from './sqs-schedule';

const INGEST_SHARD = 'ingest';

export const runRecordSchema = z.object({
  v: z.literal(1),
  runId: z.string(),
  targets: z.array(z.string()).min(1),
  startNs: z.string(),
  deadlineNs: z.string(),
  createdAt: z.string(),
  shards: z.array(z.object({ shardId: z.string(), requests: z.number().int().positive() })),
  notScheduledByReason: z.record(z.string(), z.number()),
  inputConfig: z.unknown(),
  /** Mirror mode: the capture hour (`YYYY-MM-DDTHH`) whose roll-up this run joins. */
  hour: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}$/).optional(),
});
export type RunRecord = z.infer<typeof runRecordSchema>;

export type { ResultLine } from './results';

function decodeJson(bytes: Uint8Array): unknown {
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
}

/** A body that is not JSON is bad input, like one that fails its schema: permanent, not retried. */
function parseMessageJson(raw: string, what: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new PermanentError(`not a ${what} message: body is not JSON`);
  }
}

async function sendAll(queue: MessageQueue, messages: { id: string; body: string; delaySeconds: number }[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 10) {
    let batch = messages.slice(i, i + 10);
    for (let attempt = 0; attempt < 3 && batch.length > 0; attempt++) {
      const { failedIds } = await queue.sendBatch(batch);
      batch = batch.filter((m) => failedIds.includes(m.id));
    }
    // Retryable: the handler fails, SQS redelivers the ingest event, the run record is not
    // yet written, and scheduling runs again (shard claims make repeated messages harmless).
    if (batch.length > 0) throw new Error(`could not enqueue ${batch.length} shard message(s) after 3 attempts`);
  }
}

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

/** Bad input: count it, report it, acknowledge it; retrying cannot help. */
export class PermanentError extends Error {
  override readonly name = 'PermanentError';
}

export type CollectStatus = 'unknown-run' | 'pending' | 'complete' | 'deadline';

/** Finalises one target of a run when it can; writes the AIPerf artifacts under runs/<run>/<target>/. */
interface RunState {
  run: RunRecord;
  expected: string[];
  missing: string[];
}

async function runState(runId: string, target: string, store: ObjectStore): Promise<RunState | null> {
  const raw = await store.get(runRecordKey(runId));
  if (!raw) return null;
  const run = runRecordSchema.parse(decodeJson(raw));
  const prefix = resultsPrefix(runId, target);
  const present = new Set((await store.list(prefix)).map((k) => k.slice(prefix.length).replace(/\.jsonl$/, '')));
  const expected = [INGEST_SHARD, ...run.shards.map((s) => s.shardId)];
  return { run, expected, missing: expected.filter((id) => !present.has(id)) };
}

/**
 * Everything one target of a run has reported, deduplicated by request id (at-least-once),
 * as records and accounting entries; with `countLost`, the missing shards' requests too.
 */
async function gatherRun(runId: string, target: string, state: RunState, store: ObjectStore, countLost: boolean): Promise<{ records: ProfileRecord[]; entries: ManifestEntry[] }> {
  const records: ProfileRecord[] = [];
  const entries: ManifestEntry[] = [];
  const seen = new Set<string>();
  for (const id of state.expected.filter((e) => !state.missing.includes(e))) {
    const key = resultsKey(runId, target, id);
    const bytes = await store.get(key);
    const text = bytes ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8') : '';
    for (const line of decodeResultLines(text, key)) {
      const requestId = resultRequestId(line);
      if (seen.has(requestId)) continue; // at-least-once: a request counts once
      seen.add(requestId);
      if (line.kind === 'drop') {
        entries.push({ requestId, dropReason: line.dropReason, lagMs: null, errorType: null });
        continue;
      }
      records.push(line.record);
      entries.push({ requestId, dropReason: null, lagMs: line.record.metadata.schedule_lag_ms, errorType: line.record.error?.type ?? null });
    }
  }
  if (countLost) {
    for (const shard of state.run.shards.filter((s) => state.missing.includes(s.shardId))) {
      for (let i = 0; i < shard.requests; i++) entries.push({ requestId: `lost:${runId}:${shard.shardId}:${i}`, dropReason: 'lost', lagMs: null, errorType: null });
    }
  }
  records.sort((a, b) => a.metadata.session_num - b.metadata.session_num);
  return { records, entries };
}

const isoOf = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString();

/** Finalises one target of a run when it can; writes the AIPerf artifacts under runs/<run>/<target>/. */
export async function collectRun(
  runId: string,
  target: string,
  deps: { store: ObjectStore; clock: Clock },
  options: { interim?: boolean } = {},
): Promise<{ status: CollectStatus; missing: string[]; manifest?: RunManifest }> {
  const state = await runState(runId, target, deps.store);
  if (!state) return { status: 'unknown-run', missing: [] };
  const { run, missing } = state;
  const pastDeadline = deps.clock.nowNs() > BigInt(run.deadlineNs);
  const interim = options.interim === true && missing.length > 0 && !pastDeadline;
  if (missing.length > 0 && !pastDeadline && !interim) return { status: 'pending', missing };

  const { records, entries } = await gatherRun(runId, target, state, deps.store, !interim);
  const startedAt = isoOf(BigInt(run.startNs));
  const endedAt = isoOf(deps.clock.nowNs());
  const built = buildManifest({ runId, target, outcomes: entries, notScheduledByReason: run.notScheduledByReason, startedAt, endedAt });
  // An interim manifest accounts for what has reported so far and says what is still out.
  const missingShards = run.shards.filter((s) => missing.includes(s.shardId));
  const manifest = interim ? { ...built, interim: true, pendingShards: missingShards.length, pendingRequests: missingShards.reduce((n, s) => n + s.requests, 0) } : built;
  await writeTargetArtifacts(deps.store, targetPrefix(runId, target) + (interim ? 'interim/' : ''), {
    records,
    aggregates: aggregate(records),
    manifest,
    inputConfig: run.inputConfig,
    wasCancelled: false,
    startTime: startedAt,
    endTime: endedAt,
  });
  if (!interim && run.hour) await rollUpHour(run.hour, target, runId, deps);
  return { status: interim ? 'pending' : missing.length > 0 ? 'deadline' : 'complete', missing, manifest };
}

/**
 * Mirror mode groups results per capture hour: every finalised run of an hour (one per
 * capture file) is listed under hours/<hour>/<target>/_runs/, and the hour's artifacts are
 * rebuilt from all of them, in the same formats. Rebuilt whole each time: idempotent.
 * session_num is renumbered by scheduled time across the hour's files.
 */
async function rollUpHour(hour: string, target: string, runId: string, deps: { store: ObjectStore; clock: Clock }): Promise<void> {
  const base = hourPrefix(hour, target);
  await deps.store.put(`${base}_runs/${runId}`, runId, 'text/plain');
  const runIds = (await deps.store.list(`${base}_runs/`)).map((k) => k.slice(`${base}_runs/`.length));
  const records: ProfileRecord[] = [];
  const entries: ManifestEntry[] = [];
  const notScheduled: Record<string, number> = {};
  let firstStart: bigint | null = null;
  for (const id of runIds) {
    const state = await runState(id, target, deps.store);
    if (!state) continue;
    const gathered = await gatherRun(id, target, state, deps.store, true);
    records.push(...gathered.records);
    entries.push(...gathered.entries);
    for (const [reason, n] of Object.entries(state.run.notScheduledByReason)) notScheduled[reason] = (notScheduled[reason] ?? 0) + n;
    const start = BigInt(state.run.startNs);
    if (firstStart === null || start < firstStart) firstStart = start;
  }
  records.sort((a, b) => (a.metadata.scheduled_ns < b.metadata.scheduled_ns ? -1 : a.metadata.scheduled_ns > b.metadata.scheduled_ns ? 1 : 0));
  const renumbered = records.map((r, i) => ({ ...r, metadata: { ...r.metadata, session_num: i } }));
  const startedAt = isoOf(firstStart ?? deps.clock.nowNs());
  const endedAt = isoOf(deps.clock.nowNs());
  const manifest = { ...buildManifest({ runId: `hour-${hour}`, target, outcomes: entries, notScheduledByReason: notScheduled, startedAt, endedAt }), runs: runIds };
  await writeTargetArtifacts(deps.store, base, {
    records: renumbered,
    aggregates: aggregate(renumbered),
    manifest,
    inputConfig: { mode: 'mirror', hour, runs: runIds },
    wasCancelled: false,
    startTime: startedAt,
    endTime: endedAt,
  });
}

/** Asks the collector to look at one target of a run, not before `notBeforeNs` (0: now). */
export const collectMessageSchema = z.object({
  v: z.literal(1),
  kind: z.literal('collect'),
  runId: z.string().min(1),
  target: z.string().min(1),
  notBeforeNs: z.string().regex(/^\d+$/),
});
export type CollectMessage = z.infer<typeof collectMessageSchema>;

export function collectMessage(runId: string, target: string, notBeforeNs: bigint): { id: string; body: string; delaySeconds: number } {
  const message: CollectMessage = { v: 1, kind: 'collect', runId, target, notBeforeNs: notBeforeNs.toString() };
  return { id: `collect-${target}`.replace(/[^A-Za-z0-9_-]/g, '_'), body: JSON.stringify(message), delaySeconds: 0 };
}

/**
 * The collector's step for one message: wait (re-delay, in hops) until `notBeforeNs`, then
 * try to finalise. The last shard's completion sends `notBeforeNs = 0`; the ingest sends one
 * at the run's deadline, so a run whose workers died is still finalised, with its losses
 * counted. While that message hops towards the deadline, each hop writes interim results.
 */
export async function handleCollect(
  raw: string,
  deps: { store: ObjectStore; queue: MessageQueue; clock: Clock },
): Promise<{ action: 'deferred' | 'interim' | CollectStatus; message: CollectMessage }> {
  const parsed = collectMessageSchema.safeParse(parseMessageJson(raw, 'collect'));
  if (!parsed.success) throw new PermanentError(`not a collect message: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const message = parsed.data;
  const notBefore = BigInt(message.notBeforeNs);
  const { delaySeconds } = deliveryDelay(notBefore, deps.clock.nowNs(), 0);
  if (delaySeconds >= 1) {
    await sendAll(deps.queue, [{ ...collectMessage(message.runId, message.target, notBefore), delaySeconds }]);
    // Long runs: each hop (at most every 15 minutes) refreshes interim results under interim/.
    const interim = await collectRun(message.runId, message.target, deps, { interim: true });
    return { action: interim.manifest ? 'interim' : 'deferred', message };
  }
  const { status } = await collectRun(message.runId, message.target, deps);
  return { action: status, message };
}
