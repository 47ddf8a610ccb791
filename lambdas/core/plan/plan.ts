/**
 * From parsed capture records to a replay plan: what to send, when, and what not and why.
 *
 * The rules, in the order this applies them (order, intra-second spread, window, sampling,
 * limit and amplification, literal bodies and their overrides, what a target can take), are
 * the documented ones: docs/timing.md#when-each-request-is-due, docs/timing.md#literal-replay,
 * docs/captures.md#which-records-replay, and the plan's own fields in
 * docs/timing.md#in-the-plan. A change to a rule changes those pages with it.
 */
import { isJsonContentType } from '../capture/body-type';
import { isLive } from '../capture/duplicates';
import { deterministicUuid } from '../ids';
import { problemsLine, type OptionNamer, type OptionProblem } from '../option-problem';
import { amplify as amplifyRows, MAX_AMPLIFY } from './amplify';
import { serialize } from './serialize';
export { stringifyDeep } from './serialize';
import type {
  ByteSpan,
  CaptureRecord,
  DropReason,
  IntraSecondPolicy,
  ReplayPlan,
  ScheduledRequest,
  TargetKind,
  TimingSummary,
} from '../types';

export interface PlanOptions {
  runId: string;
  targetKind: TargetKind;
  /** 2.0 = twice as fast (offsets divided by 2); finite and > 0. */
  timeScale: number;
  intraSecond: IntraSecondPolicy;
  /** Inclusive, in capture time from the first record (AIPerf `--fixed-schedule-start-offset`). */
  startOffsetMs?: number;
  /** Inclusive, in capture time from the first record (AIPerf `--fixed-schedule-end-offset`). */
  endOffsetMs?: number;
  /** Keep the first N requests after the window and sampling. */
  limit?: number;
  /** In (0, 1]: keep each request with this probability, reproducibly for a given seed. */
  sampleRate?: number;
  seed?: number;
  /** > 0: k times the captured requests per unit of time (k > 1: copies, amplify.ts; k < 1: sampling at rate k). */
  amplify?: number;
  modelOverride?: string;
  forceStreaming?: boolean;
}

const TARGET_KINDS: readonly TargetKind[] = ['openai-chat', 'sagemaker'];
const DEFAULT_SEED = 1;

/**
 * The slowest replay: 1,000 times slower than captured, a second of captures over 16.7
 * minutes, an hour over 41.7 days. Slower has no use, and its offsets leave what a timer, a
 * BigInt of nanoseconds and the pipeline's working files (kept days) can hold: 1e-300 made
 * every offset Infinity.
 */
export const MIN_TIME_SCALE = 0.001;

/** A plan option's name, as PlanOptions spells it: what a problem names (option-problem.ts). */
export type PlanField = keyof PlanOptions;
export type PlanProblem = OptionProblem<PlanField>;

/**
 * Every problem with the options at once; empty when valid. Each names its option by field
 * (the caller says it in its own words: the CLI's flag, the configuration's key); `name` says
 * the options a message names besides its own (an end offset before the start offset).
 */
export function validatePlanOptions(o: PlanOptions, name: OptionNamer<PlanField> = (f) => f): PlanProblem[] {
  const problems: PlanProblem[] = [];
  const add = (field: PlanField, message: string) => problems.push({ field, message });
  if (typeof o.runId !== 'string' || o.runId === '') add('runId', 'is required');
  if (!TARGET_KINDS.includes(o.targetKind))
    add('targetKind', `must be one of ${TARGET_KINDS.join(', ')} (got ${String(o.targetKind)})`);
  if (!(Number.isFinite(o.timeScale) && o.timeScale >= MIN_TIME_SCALE))
    add(
      'timeScale',
      `must be a number >= ${MIN_TIME_SCALE}, ${1 / MIN_TIME_SCALE} times slower than captured (got ${String(o.timeScale)})`,
    );
  if (o.intraSecond !== 'spread' && o.intraSecond !== 'burst')
    add('intraSecond', `must be 'spread' or 'burst' (got ${String(o.intraSecond)})`);
  for (const field of ['startOffsetMs', 'endOffsetMs'] as const) {
    const value = o[field];
    if (value !== undefined && !(Number.isFinite(value) && value >= 0))
      add(field, `must be a finite number >= 0 (got ${String(value)})`);
  }
  if (o.startOffsetMs !== undefined && o.endOffsetMs !== undefined && o.endOffsetMs < o.startOffsetMs)
    add('endOffsetMs', `(${o.endOffsetMs}) is before ${name('startOffsetMs')} (${o.startOffsetMs})`);
  if (o.limit !== undefined && !(Number.isSafeInteger(o.limit) && o.limit > 0))
    add('limit', `must be a whole number > 0 (got ${String(o.limit)})`);
  if (o.sampleRate !== undefined && !(o.sampleRate > 0 && o.sampleRate <= 1))
    add('sampleRate', `must be in (0, 1] (got ${String(o.sampleRate)})`);
  if (o.amplify !== undefined && !(Number.isFinite(o.amplify) && o.amplify > 0 && o.amplify <= MAX_AMPLIFY))
    add('amplify', `must be a number in (0, ${MAX_AMPLIFY}] (got ${String(o.amplify)})`);
  // The PRNG takes 32 bits: anything else would be silently folded into another seed.
  if (o.seed !== undefined && !(Number.isInteger(o.seed) && o.seed >= 0 && o.seed <= 0xffffffff))
    add('seed', `must be a whole number in [0, 4294967295] (got ${String(o.seed)})`);
  if (o.modelOverride !== undefined && (typeof o.modelOverride !== 'string' || o.modelOverride.trim() === ''))
    add('modelOverride', 'must not be empty');
  return problems;
}

/** What the timing rules need of a record: its time, and whether the capture gave a fraction. */
export interface Timeable {
  inferenceTimeMs: number;
  hasSubSecondTime: boolean;
  /** The capture event id, or (a compact index) its eventIdHash: what sampling decides on. */
  eventId?: string;
  eventIdHash?: number;
}

/**
 * Whether sampling at `rate` keeps the request whose eventIdHash is `idHash`: murmur3's
 * 32-bit finalizer over the hash mixed with the seed, as a fraction of 2^32, below the rate.
 * A larger rate keeps a superset of a smaller one's requests (same seed).
 */
export function sampleKeeps(idHash: number, rate: number, seed: number = DEFAULT_SEED): boolean {
  if (rate >= 1) return true;
  let h = (idHash ^ Math.imul(seed, 0x9e3779b9)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h = (h ^ (h >>> 16)) >>> 0;
  return h < rate * 2 ** 32;
}

/** Rules 1-4 on rows 0..n-1 (capture order), in columns: which rows, in schedule order, at which offsets. */
interface RowSchedule {
  /** Selected rows in schedule order; position = the request's index. */
  rows: number[];
  offsetMs: number[];
  captureTimeMs: number[];
  /** Per position, its copy index; null when the plan is not amplified. */
  copy: ArrayLike<number> | null;
  excluded: ReplayPlan['excluded'];
  scheduleZeroMs: number | null;
  durationMs: number;
  timing: TimingSummary;
}

/** The sampling rate rule 4 applies: sampleRate, times amplify when that is below 1. */
function samplingRate(options: PlanOptions): number {
  return (options.sampleRate ?? 1) * (options.amplify !== undefined && options.amplify < 1 ? options.amplify : 1);
}

/**
 * Rules 1-4 over `n` records given by accessors, in typed arrays (a few bytes a record, not an
 * object each: bench/ingest-large.ts): order, intra-second policy, window,
 * selection, offsets. Row i is the i-th record in capture order, the tie-breaker and the
 * order a second's slots are handed out in.
 */
function scheduleRows(
  n: number,
  timeOf: (row: number) => number,
  subSecondOf: (row: number) => boolean,
  idHashOf: (row: number) => number,
  options: PlanOptions,
): RowSchedule {
  const problems = validatePlanOptions(options);
  if (problems.length > 0) throw new Error(`invalid plan options: ${problemsLine(problems)}`);
  const excluded: ReplayPlan['excluded'] = {};
  const timing: TimingSummary = {
    intraSecond: options.intraSecond,
    wholeSecondRecords: 0,
    exactTimeRecords: 0,
    spreadRecords: 0,
    maxSpreadMs: 0,
  };
  if (n === 0)
    return {
      rows: [],
      offsetMs: [],
      captureTimeMs: [],
      copy: null,
      excluded,
      scheduleZeroMs: null,
      durationMs: 0,
      timing,
    };

  // Work in ms relative to the earliest capture: at epoch scale (~1.8e12 ms) a float64 keeps
  // only about 1e-4 ms, which would blur thirds of a second and offset edges.
  let base = Infinity;
  for (let i = 0; i < n; i++) base = Math.min(base, timeOf(i));
  const t = new Float64Array(n);
  for (let i = 0; i < n; i++) t[i] = timeOf(i) - base;

  // Rule 2: the whole-second records of each second, counted, then spread in capture order.
  const spread = options.intraSecond === 'spread';
  const perSecond = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    if (subSecondOf(i)) {
      timing.exactTimeRecords++;
      continue;
    }
    timing.wholeSecondRecords++;
    if (spread) perSecond.set(t[i] as number, (perSecond.get(t[i] as number) ?? 0) + 1);
  }
  if (spread) {
    for (const k of perSecond.values()) {
      if (k < 2) continue;
      timing.spreadRecords += k - 1;
      timing.maxSpreadMs = Math.max(timing.maxSpreadMs, ((k - 1) * 1000) / k);
    }
    const handedOut = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      if (subSecondOf(i)) continue;
      const second = t[i] as number;
      const k = perSecond.get(second) as number;
      if (k < 2) continue;
      const slot = handedOut.get(second) ?? 0;
      handedOut.set(second, slot + 1);
      t[i] = second + (slot * 1000) / k;
    }
  }

  // Rule 1: by time, ties in capture order.
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((a, b) => (t[a] as number) - (t[b] as number) || a - b);

  // Rules 3 and 4: window, sample, limit.
  const zero = t[order[0] as number] as number;
  const start = options.startOffsetMs ?? 0;
  const end = options.endOffsetMs ?? Infinity;
  let rows: number[] = [];
  for (const row of order) {
    const at = (t[row] as number) - zero;
    if (at >= start && at <= end) rows.push(row);
  }
  if (rows.length < n) excluded.outside_offset_window = n - rows.length;
  const sampleRate = samplingRate(options);
  if (sampleRate < 1) {
    const seed = options.seed ?? DEFAULT_SEED;
    const kept = rows.filter((row) => sampleKeeps(idHashOf(row), sampleRate, seed));
    if (kept.length < rows.length) excluded.sample = rows.length - kept.length;
    rows = kept;
  }
  if (options.limit !== undefined && rows.length > options.limit) {
    excluded.limit = rows.length - options.limit;
    rows = rows.slice(0, options.limit);
  }
  const offsetOf = (row: number) => ((t[row] as number) - zero - start) / options.timeScale;
  const offsetMs = rows.map(offsetOf);
  const scheduleZeroMs = base + zero;
  if (options.amplify !== undefined && options.amplify > 1) {
    // A lone request's copies spread over a captured second (the capture's time resolution).
    const copies = amplifyRows(offsetMs, options.amplify, 1000 / options.timeScale);
    const amplified = Array.from(copies.source, (i) => rows[i] as number);
    timing.amplification = {
      factor: options.amplify,
      capturedRequests: rows.length,
      scheduledRequests: amplified.length,
    };
    return {
      rows: amplified,
      offsetMs: Array.from(copies.offsetMs),
      captureTimeMs: amplified.map((row) => base + (t[row] as number)),
      copy: copies.copy,
      excluded,
      scheduleZeroMs,
      durationMs: copies.offsetMs.at(-1) ?? 0,
      timing,
    };
  }
  return {
    rows,
    offsetMs,
    captureTimeMs: rows.map((row) => base + (t[row] as number)),
    copy: null,
    excluded,
    scheduleZeroMs,
    durationMs: offsetMs.at(-1) ?? 0,
    timing,
  };
}

/** Position i's copy field, as a request or an entry carries it (absent when not amplified). */
function copyOf(copy: ArrayLike<number> | null, i: number): { copy?: number } {
  return copy ? { copy: copy[i] as number } : {};
}

interface Schedule<T> {
  /** In schedule order; position = the request's index. */
  selected: { item: T; offsetMs: number; captureTimeMs: number; copy?: number }[];
  excluded: ReplayPlan['excluded'];
  scheduleZeroMs: number | null;
  durationMs: number;
  timing: TimingSummary;
}

/** Rules 1-4 on anything with a time. */
function scheduleItems<T extends Timeable>(items: readonly T[], options: PlanOptions): Schedule<T> {
  const s = scheduleRows(
    items.length,
    (i) => (items[i] as T).inferenceTimeMs,
    (i) => (items[i] as T).hasSubSecondTime,
    (i) => {
      const item = items[i] as T;
      return item.eventIdHash ?? eventIdHash(item.eventId ?? '');
    },
    options,
  );
  return {
    selected: s.rows.map((row, i) => ({
      item: items[row] as T,
      offsetMs: s.offsetMs[i] as number,
      captureTimeMs: s.captureTimeMs[i] as number,
      ...copyOf(s.copy, i),
    })),
    excluded: s.excluded,
    scheduleZeroMs: s.scheduleZeroMs,
    durationMs: s.durationMs,
    timing: s.timing,
  };
}

type Verdict = { reason: DropReason; detail: string };

interface BodyPlan {
  body: Uint8Array;
  streaming: boolean;
  overrides: string[];
  incompatible: Verdict | null;
}

/**
 * What a body becomes does not depend on the target kind (overrides apply to chat bodies
 * only, for every kind); only whether the kind takes it does. So one parse gives the body
 * and the verdict of every kind (rule 6): `chat`, what an `openai-chat` target says.
 */
interface KindFreeBodyPlan {
  body: Uint8Array;
  streaming: boolean;
  overrides: string[];
  chat: Verdict | null;
}

type JsonObject = Record<string, unknown>;

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The body as a JSON value, or `undefined` when it does not parse. */
function parseJson(body: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as unknown;
  } catch {
    // The parser rejects JSON content types with bad JSON; records built elsewhere may not
    // have been checked, and must not crash the plan.
    return undefined;
  }
}

function applyOverrides(obj: JsonObject, options: PlanOptions): { result: JsonObject; overrides: string[] } {
  const overrides: string[] = [];
  let result = obj;
  if (options.modelOverride !== undefined && obj.model !== options.modelOverride) {
    result = { ...result, model: options.modelOverride };
    overrides.push('model');
  }
  if (options.forceStreaming) {
    const streamOptions = isJsonObject(obj.stream_options) ? obj.stream_options : {};
    if (obj.stream !== true || streamOptions.include_usage !== true) {
      result = { ...result, stream: true, stream_options: { ...streamOptions, include_usage: true } };
      overrides.push('stream');
    }
  }
  return { result, overrides };
}

function planBodyForEveryKind(record: CaptureRecord, options: PlanOptions): KindFreeBodyPlan {
  const { contentType, body } = record.input;
  const asCaptured = (chat: Verdict | null, streaming = false): KindFreeBodyPlan => ({
    body,
    streaming,
    overrides: [],
    chat,
  });
  if (!isJsonContentType(contentType))
    return asCaptured({
      reason: 'unsupported_content_type',
      detail: `content type ${contentType} cannot be sent to a chat target`,
    });
  const parsed = parseJson(body);
  if (!isJsonObject(parsed))
    return asCaptured({
      reason: 'not_chat_request',
      detail: parsed === undefined ? 'body is not valid JSON' : 'JSON body is not an object',
    });
  if (!Array.isArray(parsed.messages)) {
    // A chat target cannot take it; a SageMaker target gets it exactly as captured: the
    // overrides (model, stream) are chat fields, meaningless to `instances` or `inputs`.
    return asCaptured(
      { reason: 'not_chat_request', detail: 'JSON body without a messages array' },
      parsed.stream === true,
    );
  }
  const { result, overrides } = applyOverrides(parsed, options);
  return {
    body: overrides.length > 0 ? Buffer.from(serialize(result), 'utf8') : body,
    streaming: result.stream === true,
    overrides,
    chat: null,
  };
}

/** Rule 6: an `openai-chat` target takes chat requests only; a `sagemaker` target takes every record. */
function verdictFor(kind: TargetKind, planned: KindFreeBodyPlan): Verdict | null {
  return kind === 'openai-chat' ? planned.chat : null;
}

function planBody(record: CaptureRecord, options: PlanOptions): BodyPlan {
  const planned = planBodyForEveryKind(record, options);
  return {
    body: planned.body,
    streaming: planned.streaming,
    overrides: planned.overrides,
    incompatible: verdictFor(options.targetKind, planned),
  };
}

/** Where a request sits in the schedule: its index, due offset and captured time, and its copy index when amplified. */
interface Placement {
  index: number;
  offsetMs: number;
  captureTimeMs: number;
  copy?: number;
}

function toRequest(
  record: CaptureRecord,
  planned: BodyPlan,
  { index, offsetMs, captureTimeMs, copy }: Placement,
  options: PlanOptions,
): ScheduledRequest {
  return {
    index,
    offsetMs,
    captureTimeMs,
    ...(copy !== undefined ? { copy } : {}),
    correlationId: deterministicUuid(options.runId, record.eventId, index),
    eventId: record.eventId,
    inferenceId: record.inferenceId,
    source: record.source,
    contentType: record.input.contentType,
    body: planned.body,
    streaming: planned.streaming,
    overrides: planned.overrides,
    capturedUsage: record.output?.usage ?? null,
    accept: record.output?.contentType ?? null,
    capturedOutputSha256: record.output?.sha256 ?? null,
  };
}

/** Rule 6 on the selected records, in schedule order: requests, and what this target kind drops. */
function assemble(
  selected: readonly (Placement & { record: CaptureRecord })[],
  options: PlanOptions,
): Pick<ReplayPlan, 'requests' | 'incompatible'> {
  const requests: ScheduledRequest[] = [];
  const incompatible: ReplayPlan['incompatible'] = [];
  // The copies of a record (amplify) are consecutive and share its planned body: one body per
  // record, not per copy (a body rewritten by --streaming or --model is a buffer of its own).
  let lastRecord: CaptureRecord | null = null;
  let lastPlanned: BodyPlan | null = null;
  for (const { record, ...placement } of selected) {
    const planned: BodyPlan = record === lastRecord && lastPlanned ? lastPlanned : planBody(record, options);
    lastRecord = record;
    lastPlanned = planned;
    const request = toRequest(record, planned, placement, options);
    if (planned.incompatible) incompatible.push({ request, ...planned.incompatible });
    else requests.push(request);
  }
  return { requests, incompatible };
}

/** The records a duplicate filter has not superseded since it kept them (duplicates.ts), in their order. */
function liveOnly<R extends { dedupe?: CaptureRecord['dedupe'] }>(records: readonly R[]): readonly R[] {
  return records.every(isLive) ? records : records.filter(isLive);
}

export function buildPlan(records: readonly CaptureRecord[], options: PlanOptions): ReplayPlan {
  const schedule = scheduleItems(liveOnly(records), options);
  const { requests, incompatible } = assemble(
    schedule.selected.map(({ item, ...placement }, index) => ({ record: item, index, ...placement })),
    options,
  );
  return {
    requests,
    incompatible,
    excluded: schedule.excluded,
    scheduleZeroMs: schedule.scheduleZeroMs,
    durationMs: schedule.durationMs,
    timing: schedule.timing,
  };
}

// ---- Two-pass planning, for inputs too large to hold (the ingest function, the local CLI) ----
//
// Pass 1 keeps, per record, what the rules need and where its line is (`span`), not its body:
// the timing rules run on that index exactly as buildPlan runs them. Pass 2 reads back the
// lines of the requests about to be sent (the pipeline: a shard at a time; the CLI: the
// selected ones, before the run) and materializes them with the same body rules. Memory is
// O(records x a few hundred bytes) plus the selected bodies, not O(file).

/**
 * The least a record needs to be scheduled and read back: its time, where its line is, and
 * what the line read back must show: its eventId, or (a compact index) a 32-bit hash of it.
 */
export interface LineRef extends Timeable {
  source: CaptureRecord['source'];
  span: ByteSpan;
  eventId?: string;
  /** `eventIdHash(eventId)`, when the index keeps that instead of the eventId. */
  eventIdHash?: number;
  /** The duplicate filter's mark of the record (planned only while it is live: duplicates.ts). */
  dedupe?: CaptureRecord['dedupe'];
}

/** FNV-1a over the UTF-16 code units: a compact index's check that a line read back is the one planned. */
export function eventIdHash(eventId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < eventId.length; i++) h = Math.imul(h ^ eventId.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Why the record read back is not the line planned (the file changed), or null. */
export function readBackMismatch(ref: LineRef, record: CaptureRecord): string | null {
  const { eventId } = record;
  if (
    ref.eventId !== undefined
      ? eventId === ref.eventId
      : ref.eventIdHash === undefined || eventIdHash(eventId) === ref.eventIdHash
  )
    return null;
  const planned =
    ref.eventId !== undefined ? `eventId ${ref.eventId.slice(0, 80)}` : `an eventId hashing to ${ref.eventIdHash}`;
  return `${ref.source.file}:${ref.source.line} read back as eventId ${eventId.slice(0, 80)}, planned as ${planned}: the file changed`;
}

/** A capture record without its body: enough to plan it, shard it by bytes, and read it back. */
export interface IndexedRecord extends LineRef {
  eventId: string;
  /** Size of the body as it will be sent (after overrides), for sharding by bytes. */
  bodyBytes: number;
  /** The verdict of `options.targetKind`. */
  incompatible: Verdict | null;
  /** Indexed for several kinds (targets of different kinds in one run): each kind's verdict. */
  incompatibleByKind?: Partial<Record<TargetKind, Verdict | null>>;
}

function spanOf(record: CaptureRecord): ByteSpan {
  if (!record.span)
    throw new Error(
      `record ${record.source.file}:${record.source.line} has no byte span (parse it from a byte stream)`,
    );
  return record.span;
}

/**
 * Pass 1 when verdicts wait for pass 2 (the CLI reads back every selected record before
 * the run, so rule 6 runs there as in buildPlan): time, eventId and line only, no body parse.
 */
export function lineRef(record: CaptureRecord): LineRef {
  return {
    eventId: record.eventId,
    inferenceTimeMs: record.inferenceTimeMs,
    hasSubSecondTime: record.hasSubSecondTime,
    source: record.source,
    span: spanOf(record),
    ...(record.dedupe ? { dedupe: record.dedupe } : {}),
  };
}

/**
 * Pass 1: the record's plan-relevant facts; the body is dropped by the caller. With `kinds`
 * (the target kinds of a run whose targets differ), the record keeps every kind's verdict,
 * from the same single parse; read them with `incompatibleAs`.
 */
export function indexRecord(record: CaptureRecord, options: PlanOptions, kinds?: readonly TargetKind[]): IndexedRecord {
  const span = spanOf(record);
  const planned = planBodyForEveryKind(record, options);
  return {
    eventId: record.eventId,
    inferenceTimeMs: record.inferenceTimeMs,
    hasSubSecondTime: record.hasSubSecondTime,
    source: record.source,
    span,
    bodyBytes: planned.body.byteLength,
    ...(record.dedupe ? { dedupe: record.dedupe } : {}),
    incompatible: verdictFor(options.targetKind, planned),
    ...(kinds && kinds.length > 0
      ? { incompatibleByKind: Object.fromEntries(kinds.map((k) => [k, verdictFor(k, planned)])) }
      : {}),
  };
}

/** A record's verdict for one target kind: from `incompatibleByKind` when it was indexed for several, else its own. */
export function incompatibleAs(record: IndexedRecord, kind: TargetKind): Verdict | null {
  if (!record.incompatibleByKind) return record.incompatible;
  const verdict = record.incompatibleByKind[kind];
  if (verdict === undefined)
    throw new Error(`record ${record.source.file}:${record.source.line} was not indexed for target kind ${kind}`);
  return verdict;
}

export interface IndexedEntry<R extends LineRef = IndexedRecord> {
  index: number;
  offsetMs: number;
  captureTimeMs: number;
  /** The copy index of an amplified plan's entry (rule 4); absent when not amplified. */
  copy?: number;
  record: R;
}

export interface IndexedPlan<R extends LineRef = IndexedRecord> {
  /** Every selected record in schedule order, incompatible ones included (they carry the reason). */
  entries: IndexedEntry<R>[];
  excluded: ReplayPlan['excluded'];
  scheduleZeroMs: number | null;
  durationMs: number;
  timing: TimingSummary;
}

export function planIndexed<R extends LineRef>(records: readonly R[], options: PlanOptions): IndexedPlan<R> {
  const schedule = scheduleItems(liveOnly(records), options);
  return {
    entries: schedule.selected.map(({ item, ...placement }, index) => ({ index, ...placement, record: item })),
    excluded: schedule.excluded,
    scheduleZeroMs: schedule.scheduleZeroMs,
    durationMs: schedule.durationMs,
    timing: schedule.timing,
  };
}

/**
 * planIndexed over `n` rows given by accessors (a compact index's columns, in capture order),
 * each selected row then made the LineRef of its entry: only the selected ones ever are.
 */
export function planRows<R extends LineRef>(
  n: number,
  timeOf: (row: number) => number,
  subSecondOf: (row: number) => boolean,
  idHashOf: (row: number) => number,
  options: PlanOptions,
  toRef: (row: number) => R,
): IndexedPlan<R> {
  const s = scheduleRows(n, timeOf, subSecondOf, idHashOf, options);
  return {
    entries: s.rows.map((row, index) => ({
      index,
      offsetMs: s.offsetMs[index] as number,
      captureTimeMs: s.captureTimeMs[index] as number,
      ...copyOf(s.copy, index),
      record: toRef(row),
    })),
    excluded: s.excluded,
    scheduleZeroMs: s.scheduleZeroMs,
    durationMs: s.durationMs,
    timing: s.timing,
  };
}

function checkReadBack(entry: IndexedEntry<LineRef>, record: CaptureRecord): void {
  const mismatch = readBackMismatch(entry.record, record);
  if (mismatch) throw new Error(mismatch);
}

/** Pass 2: the request for an entry, from its record read back (the same line). */
export function materializeRequest(
  entry: IndexedEntry<LineRef>,
  record: CaptureRecord,
  options: PlanOptions,
): ScheduledRequest {
  checkReadBack(entry, record);
  return toRequest(record, planBody(record, options), entry, options);
}

/**
 * Pass 2 of a whole plan for one target kind: `records[i]` is entry i's record read back.
 * Gives exactly what buildPlan gives for the same records (a test holds the two together).
 */
export function materializePlan(
  plan: IndexedPlan<LineRef>,
  records: readonly CaptureRecord[],
  options: PlanOptions,
): ReplayPlan {
  if (records.length !== plan.entries.length)
    throw new Error(`${records.length} records read back for ${plan.entries.length} planned`);
  const selected = plan.entries.map((entry, i) => {
    const record = records[i] as CaptureRecord;
    checkReadBack(entry, record);
    return {
      record,
      index: entry.index,
      offsetMs: entry.offsetMs,
      captureTimeMs: entry.captureTimeMs,
      ...(entry.copy !== undefined ? { copy: entry.copy } : {}),
    };
  });
  const { requests, incompatible } = assemble(selected, options);
  return {
    requests,
    incompatible,
    excluded: plan.excluded,
    scheduleZeroMs: plan.scheduleZeroMs,
    durationMs: plan.durationMs,
    timing: plan.timing,
  };
}
