/**
 * Collect stage: when every shard has reported, or the deadline has passed (the missing
 * shards' requests are then counted as `lost`), dedupe by request id and write the same
 * artifacts as the local CLI; mirror mode also rolls results up per capture hour.
 */
import { z } from 'zod';
import type { Clock, MessageQueue, ObjectStore } from '../../ports';
import { PermanentError } from '../errors';
import { writeTargetArtifacts } from '../export/artifacts';
import { replayInputConfig, type ExportInputConfig } from '../export/input-config';
import { buildManifest, runSpan, type ManifestEntry } from '../export/manifest';
import { aggregate } from '../metrics/aggregate';
import type { ProfileRecord, RunManifest } from '../types';
import {
  CONFLICT,
  CONFLICT_ATTEMPTS,
  decodeJson,
  INGEST_SHARD,
  mapLimited,
  parseMessageJson,
  retryOnConflict,
  runRecordSchema,
  sendAll,
  shardsOf,
  type ConflictRetry,
  type RunRecord,
} from './common';
import { hourPrefix, resultsKey, resultsPrefix, runRecordKey, targetPrefix } from './keys';
import { decodeResultLines, resultLineSchema, resultRequestId, type ResultLine } from './results';
import { deliveryDelay } from './sqs-delay';

export type CollectStatus = 'unknown-run' | 'pending' | 'complete' | 'deadline';

/** A run's record, the shards expected to report (ingest first, then as scheduled), and those that have not. */
interface RunState {
  run: RunRecord;
  /** This target's shards (shardsOf). */
  shards: RunRecord['shards'];
  expected: string[];
  missing: string[];
}

async function runState(runId: string, target: string, store: ObjectStore): Promise<RunState | null> {
  const raw = await store.get(runRecordKey(runId));
  if (!raw) return null;
  const run = runRecordSchema.parse(decodeJson(raw));
  const prefix = resultsPrefix(runId, target);
  const present = new Set((await store.list(prefix)).map((k) => k.slice(prefix.length).replace(/\.jsonl$/, '')));
  const expected = [INGEST_SHARD, ...shardsOf(run, target).map((s) => s.shardId)];
  return { run, shards: shardsOf(run, target), expected, missing: expected.filter((id) => !present.has(id)) };
}

/**
 * Shard results objects the collector reads at once. A run of thousands of shards is then
 * read in a few hundred round trips instead of thousands, well inside the function timeout,
 * without opening thousands of sockets at once.
 */
export const RESULT_READ_CONCURRENCY = 16;

const utf8 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');

/**
 * Everything one target of a run has reported, deduplicated by request id (at-least-once),
 * as records and accounting entries; with `countLost`, the missing shards' requests too.
 * The shards' objects are read in parallel, then folded in shard order (ingest first, then
 * the run's shards as scheduled), so the first occurrence of a request id wins exactly as
 * if they had been read one by one.
 */
async function gatherRun(
  runId: string,
  target: string,
  state: RunState,
  store: ObjectStore,
  countLost: boolean,
): Promise<{ records: ProfileRecord[]; entries: ManifestEntry[] }> {
  const missing = new Set(state.missing);
  const shards = await mapLimited(
    state.expected.filter((id) => !missing.has(id)),
    RESULT_READ_CONCURRENCY,
    async (id): Promise<ResultLine[]> => {
      const key = resultsKey(runId, target, id);
      const bytes = await store.get(key);
      return decodeResultLines(bytes ? utf8(bytes) : '', key);
    },
  );
  const records: ProfileRecord[] = [];
  const entries: ManifestEntry[] = [];
  const seen = new Set<string>();
  for (const lines of shards) {
    for (const line of lines) {
      const requestId = resultRequestId(line);
      if (seen.has(requestId)) continue; // at-least-once: a request counts once
      seen.add(requestId);
      if (line.kind === 'drop') {
        entries.push({ requestId, dropReason: line.dropReason, lagMs: null, errorType: null });
        continue;
      }
      records.push(line.record);
      entries.push({
        requestId,
        dropReason: null,
        lagMs: line.record.capture_replay.schedule_lag_ms,
        wireLagMs: line.record.capture_replay.wire_lag_ms,
        errorType: line.record.error?.type ?? null,
      });
    }
  }
  if (countLost) {
    for (const shard of state.shards.filter((s) => missing.has(s.shardId))) {
      for (let i = 0; i < shard.requests; i++)
        entries.push({
          requestId: `lost:${runId}:${shard.shardId}:${i}`,
          dropReason: 'lost',
          lagMs: null,
          errorType: null,
        });
    }
  }
  records.sort((a, b) => a.metadata.session_num - b.metadata.session_num);
  return { records, entries };
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * One target's export configuration (AIPerf's `input_config` + our `capture_replay`) from the
 * settings the ingest recorded for the run: `{tool, mode, lag_ms?, capture, etag, targets:
 * [{name, url, path}], ...}`. The AIPerf block needs the model; it is filled when the run
 * recorded `model_override` (and `streaming` / `request_timeout_ms` when recorded), and left
 * out otherwise. URLs lose their userinfo on the way (input-config.ts).
 */
export function pipelineInputConfig(recorded: unknown, target: string): ExportInputConfig {
  const rec =
    recorded !== null && typeof recorded === 'object' && !Array.isArray(recorded)
      ? (recorded as Record<string, unknown>)
      : {};
  const targets = Array.isArray(rec.targets) ? (rec.targets as unknown[]) : [];
  const mine = targets.find(
    (t): t is Record<string, unknown> =>
      t !== null && typeof t === 'object' && (t as Record<string, unknown>).name === target,
  );
  const extra = Object.fromEntries(
    Object.entries(rec).filter(
      ([k]) => !['tool', 'capture', 'model_override', 'streaming', 'request_timeout_ms'].includes(k),
    ),
  );
  return replayInputConfig({
    target,
    url: str(mine?.url),
    path: str(mine?.path),
    model: str(rec.model_override),
    streaming: rec.streaming === true ? true : null,
    timeoutMs: num(rec.request_timeout_ms),
    capture: str(rec.capture),
    extra,
  });
}

/** Finalises one target of a run when it can; writes the AIPerf artifacts under runs/<run>/<target>/. */
export async function collectRun(
  runId: string,
  target: string,
  deps: { store: ObjectStore; clock: Clock },
  options: { interim?: boolean; rollUp?: RollUpRetry } = {},
): Promise<{ status: CollectStatus; missing: string[]; manifest?: RunManifest }> {
  const state = await runState(runId, target, deps.store);
  if (!state) return { status: 'unknown-run', missing: [] };
  const { run, missing, shards } = state;
  const pastDeadline = deps.clock.nowNs() > BigInt(run.deadlineNs);
  const interim = options.interim === true && missing.length > 0 && !pastDeadline;
  if (missing.length > 0 && !pastDeadline && !interim) return { status: 'pending', missing };

  const { records, entries } = await gatherRun(runId, target, state, deps.store, !interim);
  const { startedAt, endedAt } = runSpan(BigInt(run.startNs), deps.clock.nowNs());
  const built = buildManifest({
    runId,
    target,
    outcomes: entries,
    notScheduledByReason: run.notScheduledByReason,
    startedAt,
    endedAt,
  });
  // An interim manifest accounts for what has reported so far and says what is still out.
  const missingSet = new Set(missing);
  const missingShards = shards.filter((s) => missingSet.has(s.shardId));
  const manifest = interim
    ? {
        ...built,
        interim: true,
        pendingShards: missingShards.length,
        pendingRequests: missingShards.reduce((n, s) => n + s.requests, 0),
      }
    : built;
  await writeTargetArtifacts(deps.store, targetPrefix(runId, target) + (interim ? 'interim/' : ''), {
    records,
    aggregates: aggregate(records),
    manifest,
    inputConfig: pipelineInputConfig(run.inputConfig, target),
    wasCancelled: false,
    startTime: startedAt,
    endTime: endedAt,
  });
  if (!interim && run.hour) {
    const hourRun: HourRun = {
      runId,
      startNs: run.startNs,
      missingShards: missing.length,
      notScheduledByReason: run.notScheduledByReason,
      entries,
      records,
    };
    await rollUpHour(run.hour, target, hourRun, deps, options.rollUp);
  }
  return { status: interim ? 'pending' : missing.length > 0 ? 'deadline' : 'complete', missing, manifest };
}

/**
 * Mirror mode groups results per capture hour: every finalised run of an hour (one per
 * capture file) joins hours/<hour>/<target>/, whose artifacts have the same formats as a
 * run's. session_num is renumbered by scheduled time across the hour's files.
 *
 * The hour's merged state (each run's records, accounting entries and not-scheduled counts)
 * lives in one object, `_state.json`, so a run joins by reading one object and writing it
 * back, never by re-reading the other runs' shard results. Runs of one hour finalise
 * concurrently, so the write is conditional (S3 `If-Match` on the ETag read, `If-None-Match`
 * to create): a finaliser that lost the race re-reads and merges again, with backoff, a
 * bounded number of times, then throws so that SQS redelivers. A run already in the state
 * is not merged again (redelivery, a second collect), unless this collection has fewer
 * missing shards (a shard reported after the deadline), which replaces its part.
 */
export const HOUR_STATE_FILE = '_state.json';
export const hourStateKey = (hour: string, target: string) => hourPrefix(hour, target) + HOUR_STATE_FILE;

/** Conditional-write retries of the hour roll-up (common.ts ConflictRetry). */
export type RollUpRetry = ConflictRetry;

const recordSchema = resultLineSchema.options[0].shape.record;
const manifestEntrySchema = z.object({
  requestId: z.string().min(1),
  dropReason: resultLineSchema.options[1].shape.dropReason.nullable(),
  lagMs: z.number().nullable(),
  wireLagMs: z.number().nullable().optional(),
  errorType: z.string().nullable(),
});
const hourRunSchema = z.object({
  runId: z.string().min(1),
  startNs: z.string().regex(/^\d+$/),
  /** Shards counted lost when this run was merged: a later collection with fewer replaces it. */
  missingShards: z.number().int().nonnegative(),
  notScheduledByReason: z.record(z.string(), z.number()),
  entries: z.array(manifestEntrySchema),
  /** The run's records as its own collection sorted them (session_num), not yet renumbered. */
  records: z.array(recordSchema),
});
const hourStateSchema = z.object({
  v: z.literal(1),
  hour: z.string(),
  target: z.string(),
  /** +1 on every write: tells a finaliser whether the artifacts it wrote are still the latest. */
  generation: z.number().int().nonnegative(),
  /** Sorted by run id. */
  runs: z.array(hourRunSchema),
});
type HourState = z.output<typeof hourStateSchema>;
type HourRun = HourState['runs'][number];

/** bigint ns as decimal strings, as in results objects (the schema reads them back exactly). */
const encodeHourState = (state: HourState) =>
  JSON.stringify(state, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));

async function readHourState(store: ObjectStore, key: string): Promise<{ state: HourState; etag: string } | null> {
  const got = await store.getVersioned(key);
  if (!got) return null;
  let json: unknown;
  try {
    json = decodeJson(got.bytes);
  } catch {
    throw new Error(`${key}: not JSON`);
  }
  const parsed = hourStateSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${key}: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid hour state'}`);
  }
  return { state: parsed.data, etag: got.etag };
}

/** The state with `run` in it, or null when it already holds this run (as complete or more). */
function mergeHourRun(state: HourState, run: HourRun): HourState | null {
  const existing = state.runs.find((r) => r.runId === run.runId);
  if (existing && existing.missingShards <= run.missingShards) return null;
  const runs = [...state.runs.filter((r) => r.runId !== run.runId), run].sort((a, b) =>
    a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0,
  );
  return { ...state, generation: state.generation + 1, runs };
}

async function rollUpHour(
  hour: string,
  target: string,
  run: HourRun,
  deps: { store: ObjectStore; clock: Clock },
  retry: RollUpRetry = {},
): Promise<void> {
  const key = hourStateKey(hour, target);
  const attempts = Math.max(1, retry.attempts ?? CONFLICT_ATTEMPTS);

  // 1. Merge this run into the hour's state: read, merge, write if still the version read.
  let state = await retryOnConflict(
    deps.clock,
    retry,
    async () => {
      const current = await readHourState(deps.store, key);
      const base = current?.state ?? { v: 1 as const, hour, target, generation: 0, runs: [] };
      const merged = mergeHourRun(base, run);
      if (merged === null) return base; // already in: nothing to write, but see 2.
      return (await deps.store.putIfMatch(key, encodeHourState(merged), current?.etag ?? null, 'application/json'))
        ? merged
        : CONFLICT;
    },
    (n) => new Error(`${key}: run ${run.runId} not merged: the hour's state changed under each of ${n} attempts`),
  );

  // 2. Rewrite the hour's artifacts from the state. A finaliser that merged earlier may write
  // its (older) artifacts after ours, so check afterwards that the state is still the one
  // written out; if not, write out the newer one. The last writer of each file has then
  // always seen the latest state. Also done when the run was already merged: a finaliser
  // that died between merge and artifacts leaves them to the redelivery.
  for (let round = 1; ; round++) {
    await writeHourArtifacts(state, deps);
    const latest = await readHourState(deps.store, key);
    if (!latest || latest.state.generation <= state.generation) return;
    if (round >= attempts)
      throw new Error(`${key}: the hour's state kept changing while its artifacts were written (${attempts} rounds)`);
    state = latest.state;
  }
}

async function writeHourArtifacts(state: HourState, deps: { store: ObjectStore; clock: Clock }): Promise<void> {
  const { hour, target, runs } = state;
  const records = runs.flatMap((r) => r.records);
  records.sort((a, b) =>
    a.capture_replay.scheduled_ns < b.capture_replay.scheduled_ns
      ? -1
      : a.capture_replay.scheduled_ns > b.capture_replay.scheduled_ns
        ? 1
        : 0,
  );
  const renumbered = records.map((r, i) => ({ ...r, metadata: { ...r.metadata, session_num: i } }));
  const notScheduled: Record<string, number> = {};
  for (const r of runs)
    for (const [reason, n] of Object.entries(r.notScheduledByReason))
      notScheduled[reason] = (notScheduled[reason] ?? 0) + n;
  const firstStart = runs.reduce<bigint | null>(
    (min, r) => (min === null || BigInt(r.startNs) < min ? BigInt(r.startNs) : min),
    null,
  );
  const runIds = runs.map((r) => r.runId);
  const nowNs = deps.clock.nowNs();
  const { startedAt, endedAt } = runSpan(firstStart ?? nowNs, nowNs);
  const manifest = {
    ...buildManifest({
      runId: `hour-${hour}`,
      target,
      outcomes: runs.flatMap((r) => r.entries),
      notScheduledByReason: notScheduled,
      startedAt,
      endedAt,
    }),
    runs: runIds,
  };
  await writeTargetArtifacts(deps.store, hourPrefix(hour, target), {
    records: renumbered,
    aggregates: aggregate(renumbered),
    manifest,
    inputConfig: replayInputConfig({ target, extra: { mode: 'mirror', hour, runs: runIds } }),
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

export function collectMessage(
  runId: string,
  target: string,
  notBeforeNs: bigint,
): { id: string; body: string; delaySeconds: number } {
  const message: CollectMessage = { v: 1, kind: 'collect', runId, target, notBeforeNs: notBeforeNs.toString() };
  return { id: `collect-${target}`.replace(/[^A-Za-z0-9_-]/g, '_'), body: JSON.stringify(message), delaySeconds: 0 };
}

/** A collect message from a record's body; a body that is not one is a PermanentError (rejected, not retried). */
export function parseCollectMessage(raw: string): CollectMessage {
  const parsed = collectMessageSchema.safeParse(parseMessageJson(raw, 'collect'));
  if (!parsed.success)
    throw new PermanentError(`not a collect message: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

export type CollectAction = 'deferred' | 'interim' | CollectStatus;

export interface CollectLookDeps {
  store: ObjectStore;
  queue: MessageQueue;
  clock: Clock;
}

/**
 * What a target's messages ask of one look at `nowNs`: each distinct not-yet-due time (a
 * second or more away) once, with the delay to send it on, and the latest due time (null: none
 * is due). The simulator's collector (sim/collect.ts) plans its looks with it too.
 */
export function lookPlan<M>(
  messages: readonly M[],
  notBeforeNs: (m: M) => bigint,
  nowNs: bigint,
): { hops: { message: M; notBeforeNs: bigint; delaySeconds: number }[]; dueAtNs: bigint | null } {
  const hops = new Map<bigint, { message: M; notBeforeNs: bigint; delaySeconds: number }>();
  let dueAtNs: bigint | null = null;
  for (const message of messages) {
    const notBefore = notBeforeNs(message);
    const { delaySeconds } = deliveryDelay(notBefore, nowNs, 0);
    if (delaySeconds >= 1) {
      if (!hops.has(notBefore)) hops.set(notBefore, { message, notBeforeNs: notBefore, delaySeconds });
    } else if (dueAtNs === null || notBefore > dueAtNs) dueAtNs = notBefore;
  }
  return { hops: [...hops.values()], dueAtNs };
}

/**
 * The collector's one look at a target of a run for any number of its messages (a batch's
 * records of that run and target, or one). Each message allows:
 * - not yet due (its `notBeforeNs` a second or more away: a deadline message hopping): it is
 *   sent on with the remaining delay, and the target's interim results are refreshed;
 * - due (a shard's completion, `notBeforeNs` 0, or a deadline message that has arrived): a
 *   final look, which finalises the target when every shard has reported, or, once the
 *   run's deadline has passed, with the missing shards' requests counted lost.
 * The look does what the messages together allow: each distinct not-yet-due time is sent on
 * once (copies of one deadline message are one chain), then one collectRun, interim when a
 * message asked for it (interim still finalises a target that can be), final otherwise. A
 * due message whose not-before time is still ahead (SQS delays are whole seconds, so a
 * deadline message may arrive up to a second early) waits for it, so that the deadline has
 * passed when the look runs. `analyse` is true when a due message finalised the target: the
 * run's analysis is then the caller's to run (an interim hop that finalises leaves it to the
 * completion or deadline message, as the single-message step always has).
 */
export async function lookAtTarget(
  messages: readonly CollectMessage[],
  deps: CollectLookDeps,
): Promise<{ action: CollectAction; analyse: boolean }> {
  const first = messages[0];
  if (!first) throw new RangeError('lookAtTarget: no messages');
  const { runId, target } = first;
  if (messages.some((m) => m.runId !== runId || m.target !== target))
    throw new RangeError('lookAtTarget: messages of more than one run and target');
  const now = deps.clock.nowNs();
  const { hops, dueAtNs: dueAt } = lookPlan(messages, (m) => BigInt(m.notBeforeNs), now);
  if (hops.length > 0) {
    // Long runs: each hop (at most every 15 minutes) refreshes interim results under interim/.
    await sendAll(
      deps.queue,
      hops.map((h, i) => ({
        ...collectMessage(runId, target, h.notBeforeNs),
        ...(i > 0 ? { id: `hop${i}-${target}`.replace(/[^A-Za-z0-9_-]/g, '_') } : {}),
        delaySeconds: h.delaySeconds,
      })),
    );
  }
  if (dueAt === null) {
    const interim = await collectRun(runId, target, deps, { interim: true });
    return { action: interim.manifest ? 'interim' : 'deferred', analyse: false };
  }
  if (dueAt >= now) await deps.clock.waitUntil(dueAt + 1n);
  const looked = await collectRun(runId, target, deps, { interim: hops.length > 0 });
  const final = looked.status === 'complete' || looked.status === 'deadline';
  return { action: final ? looked.status : looked.manifest ? 'interim' : looked.status, analyse: final };
}

/**
 * The collector's step for one message: lookAtTarget with it alone. The last shard's
 * completion sends `notBeforeNs = 0`; the ingest sends one at the run's deadline, so a run
 * whose workers died is still finalised, with its losses counted. While that message hops
 * towards the deadline, each hop writes interim results.
 */
export async function handleCollect(
  raw: string,
  deps: CollectLookDeps & {
    /**
     * Called when this message finalised its target (complete or deadline), after collectRun
     * has returned, so the target's records are no longer held: the run's root analysis
     * (run-analysis.ts), which checks whether every target is final.
     */
    afterFinal?: (runId: string, target: string) => Promise<void>;
  },
): Promise<{ action: CollectAction; message: CollectMessage }> {
  const message = parseCollectMessage(raw);
  const { action, analyse } = await lookAtTarget([message], deps);
  if (analyse && deps.afterFinal) await deps.afterFinal(message.runId, message.target);
  return { action, message };
}
