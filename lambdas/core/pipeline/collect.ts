/**
 * Collect stage: when every shard has reported, or the deadline has passed (the missing
 * shards' requests are then counted as `lost`), dedupe by request id and write the same
 * artifacts as the local CLI; mirror mode also rolls results up per capture hour.
 */
import { z } from 'zod';
import type { Clock, MessageQueue, ObjectStore } from '../../ports';
import { writeTargetArtifacts } from '../export/artifacts';
import { buildManifest, type ManifestEntry } from '../export/manifest';
import { aggregate } from '../metrics/aggregate';
import type { ProfileRecord, RunManifest } from '../types';
import { decodeJson, INGEST_SHARD, parseMessageJson, PermanentError, runRecordSchema, sendAll, type RunRecord } from './common';
import { hourPrefix, resultsKey, resultsPrefix, runRecordKey, targetPrefix } from './keys';
import { decodeResultLines, resultRequestId } from './results';
import { deliveryDelay } from './sqs-schedule';

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
