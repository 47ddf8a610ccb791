/**
 * From parsed capture records to a replay plan: what to send, when, and what not and why.
 *
 * Planning rules (the README quotes this block):
 * 1. Order. Records are sorted by inferenceTime, stably: ties keep capture order (the order
 *    given, i.e. file order, then line order).
 * 2. Intra-second policy, for records whose inferenceTime has no fractional part (SageMaker
 *    usually writes whole seconds): `spread` (default) gives the k records of one second
 *    +i*1000/k ms, i = 0..k-1 in capture order; `burst` leaves them all at the start of the
 *    second. Records with fractional times keep them and are not counted in k. The result
 *    is each request's `captureTimeMs`.
 * 3. Window. Schedule zero = the first record's captureTimeMs. A record is in the window when
 *    startOffsetMs <= t - zero <= endOffsetMs, inclusive at both ends like AIPerf's
 *    `--fixed-schedule-start-offset/-end-offset`; the rest is counted as
 *    `excluded.outside_offset_window`. The schedule starts at the start offset:
 *    offsetMs = (t - zero - startOffsetMs) / timeScale, so timeScale 2 replays twice as fast.
 *    `scheduleZeroMs` is zero before the start offset; `durationMs` is the last offsetMs.
 * 4. Selection. Sampling (each request kept with probability sampleRate, from a PRNG seeded
 *    with `seed`, default 1, so the same inputs always keep the same requests), then the
 *    limit (the first N), counted as `excluded.sample` and `excluded.limit`. Indices 0..n-1
 *    are then given in schedule order to everything left, incompatible requests included.
 * 5. Literal bodies. The captured bytes are sent as they are. Only when an override changes
 *    something is the JSON re-serialized, and `overrides` names it:
 *    - `model`: modelOverride replaces (or adds) `model`, unless it already has that value;
 *    - `stream`: forceStreaming sets `"stream": true` and `stream_options.include_usage: true`
 *      (other stream_options keys kept), unless the body already streams with usage: the
 *      usage chunk is where token counts, and so ITL, come from.
 *    `streaming` is the final body's `stream === true`. Overrides need a JSON object body;
 *    other bodies (CSV, binary, JSON arrays, unparsable text) are always sent as captured.
 * 6. Target compatibility. An `openai-chat` target takes a JSON content type
 *    (application/json or *+json, any case, parameters ignored) whose body is an object with
 *    a `messages` array. Other records stay in the plan, with an index and a due time, but go
 *    to `incompatible` with a reason (`unsupported_content_type` for non-JSON types,
 *    `not_chat_request` for other JSON) and a short, body-free detail: the manifest counts
 *    them as dropped rather than guessing a conversion. A `sagemaker` target takes every
 *    record as captured (overrides still apply to JSON object bodies when asked for).
 */
import { isJsonContentType } from '../capture/parse';
import { deterministicUuid } from '../ids';
import { seededRandom } from '../random';
import type { ByteSpan, CaptureRecord, DropReason, IntraSecondPolicy, ReplayPlan, ScheduledRequest, TargetKind } from '../types';

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
  modelOverride?: string;
  forceStreaming?: boolean;
}

const TARGET_KINDS: readonly TargetKind[] = ['openai-chat', 'sagemaker'];
const DEFAULT_SEED = 1;

/** Every problem with the options at once; empty when valid. */
export function validatePlanOptions(o: PlanOptions): string[] {
  const problems: string[] = [];
  if (typeof o.runId !== 'string' || o.runId === '') problems.push('runId is required');
  if (!TARGET_KINDS.includes(o.targetKind)) problems.push(`targetKind must be one of ${TARGET_KINDS.join(', ')} (got ${String(o.targetKind)})`);
  if (!(Number.isFinite(o.timeScale) && o.timeScale > 0)) problems.push(`timeScale must be a finite number > 0 (got ${String(o.timeScale)})`);
  if (o.intraSecond !== 'spread' && o.intraSecond !== 'burst') problems.push(`intraSecond must be 'spread' or 'burst' (got ${String(o.intraSecond)})`);
  for (const [name, value] of [['startOffsetMs', o.startOffsetMs], ['endOffsetMs', o.endOffsetMs]] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) problems.push(`${name} must be a finite number >= 0 (got ${String(value)})`);
  }
  if (o.startOffsetMs !== undefined && o.endOffsetMs !== undefined && o.endOffsetMs < o.startOffsetMs) {
    problems.push(`endOffsetMs (${o.endOffsetMs}) is before startOffsetMs (${o.startOffsetMs})`);
  }
  if (o.limit !== undefined && !(Number.isSafeInteger(o.limit) && o.limit > 0)) problems.push(`limit must be a whole number > 0 (got ${String(o.limit)})`);
  if (o.sampleRate !== undefined && !(o.sampleRate > 0 && o.sampleRate <= 1)) problems.push(`sampleRate must be in (0, 1] (got ${String(o.sampleRate)})`);
  // The PRNG takes 32 bits: anything else would be silently folded into another seed.
  if (o.seed !== undefined && !(Number.isInteger(o.seed) && o.seed >= 0 && o.seed <= 0xffffffff)) {
    problems.push(`seed must be a whole number in [0, 4294967295] (got ${String(o.seed)})`);
  }
  if (o.modelOverride !== undefined && (typeof o.modelOverride !== 'string' || o.modelOverride.trim() === '')) problems.push('modelOverride must not be empty');
  return problems;
}

/** What the timing rules need of a record: its time, and whether the capture gave a fraction. */
export interface Timeable {
  inferenceTimeMs: number;
  hasSubSecondTime: boolean;
}

interface Timed<T> {
  item: T;
  /** Position in the input: capture order, the tie-breaker. */
  order: number;
  /** Capture time relative to the earliest record, in ms. */
  timeMs: number;
}

/** `timed` must be in capture order: that is the order the second's slots are handed out in. */
function spreadWholeSeconds<T extends Timeable>(timed: readonly Timed<T>[]): void {
  const bySecond = new Map<number, Timed<T>[]>();
  for (const t of timed) {
    if (t.item.hasSubSecondTime) continue;
    const group = bySecond.get(t.timeMs);
    if (group) group.push(t);
    else bySecond.set(t.timeMs, [t]);
  }
  for (const group of bySecond.values()) {
    group.forEach((t, i) => {
      t.timeMs += (i * 1000) / group.length;
    });
  }
}

interface Schedule<T> {
  /** In schedule order; position = the request's index. */
  selected: { item: T; offsetMs: number; captureTimeMs: number }[];
  excluded: ReplayPlan['excluded'];
  scheduleZeroMs: number | null;
  durationMs: number;
}

/** Rules 1-4 on anything with a time: order, intra-second policy, window, selection, offsets. */
function scheduleItems<T extends Timeable>(items: readonly T[], options: PlanOptions): Schedule<T> {
  const problems = validatePlanOptions(options);
  if (problems.length > 0) throw new Error(`invalid plan options: ${problems.join('; ')}`);
  const excluded: ReplayPlan['excluded'] = {};
  if (items.length === 0) return { selected: [], excluded, scheduleZeroMs: null, durationMs: 0 };

  // Work in ms relative to the earliest capture: at epoch scale (~1.8e12 ms) a float64 keeps
  // only about 1e-4 ms, which would blur thirds of a second and offset edges.
  let base = Infinity;
  for (const r of items) if (r.inferenceTimeMs < base) base = r.inferenceTimeMs;
  const timed: Timed<T>[] = items.map((item, order) => ({ item, order, timeMs: item.inferenceTimeMs - base }));
  if (options.intraSecond === 'spread') spreadWholeSeconds(timed);
  timed.sort((a, b) => a.timeMs - b.timeMs || a.order - b.order);

  const zero = (timed[0] as Timed<T>).timeMs;
  const start = options.startOffsetMs ?? 0;
  const end = options.endOffsetMs ?? Infinity;
  let selected = timed.filter((t) => t.timeMs - zero >= start && t.timeMs - zero <= end);
  if (selected.length < timed.length) excluded.outside_offset_window = timed.length - selected.length;

  const { sampleRate } = options;
  if (sampleRate !== undefined && sampleRate < 1) {
    const random = seededRandom(options.seed ?? DEFAULT_SEED);
    const kept = selected.filter(() => random() < sampleRate);
    if (kept.length < selected.length) excluded.sample = selected.length - kept.length;
    selected = kept;
  }
  if (options.limit !== undefined && selected.length > options.limit) {
    excluded.limit = selected.length - options.limit;
    selected = selected.slice(0, options.limit);
  }
  const offsetOf = (t: Timed<T>) => (t.timeMs - zero - start) / options.timeScale;
  const last = selected[selected.length - 1];
  return {
    selected: selected.map((t) => ({ item: t.item, offsetMs: offsetOf(t), captureTimeMs: base + t.timeMs })),
    excluded,
    scheduleZeroMs: base + zero,
    durationMs: last ? offsetOf(last) : 0,
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
  const asCaptured = (chat: Verdict | null, streaming = false): KindFreeBodyPlan => ({ body, streaming, overrides: [], chat });
  if (!isJsonContentType(contentType)) return asCaptured({ reason: 'unsupported_content_type', detail: `content type ${contentType} cannot be sent to a chat target` });
  const parsed = parseJson(body);
  if (!isJsonObject(parsed)) return asCaptured({ reason: 'not_chat_request', detail: parsed === undefined ? 'body is not valid JSON' : 'JSON body is not an object' });
  if (!Array.isArray(parsed.messages)) {
    // A chat target cannot take it; a SageMaker target gets it exactly as captured: the
    // overrides (model, stream) are chat fields, meaningless to `instances` or `inputs`.
    return asCaptured({ reason: 'not_chat_request', detail: 'JSON body without a messages array' }, parsed.stream === true);
  }
  const { result, overrides } = applyOverrides(parsed, options);
  return {
    body: overrides.length > 0 ? Buffer.from(JSON.stringify(result), 'utf8') : body,
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
  return { body: planned.body, streaming: planned.streaming, overrides: planned.overrides, incompatible: verdictFor(options.targetKind, planned) };
}

function toRequest(record: CaptureRecord, planned: BodyPlan, index: number, offsetMs: number, captureTimeMs: number, options: PlanOptions): ScheduledRequest {
  return {
    index,
    offsetMs,
    captureTimeMs,
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

export function buildPlan(records: readonly CaptureRecord[], options: PlanOptions): ReplayPlan {
  const schedule = scheduleItems(records, options);
  const requests: ScheduledRequest[] = [];
  const incompatible: ReplayPlan['incompatible'] = [];
  schedule.selected.forEach(({ item, offsetMs, captureTimeMs }, index) => {
    const planned = planBody(item, options);
    const request = toRequest(item, planned, index, offsetMs, captureTimeMs, options);
    if (planned.incompatible) incompatible.push({ request, ...planned.incompatible });
    else requests.push(request);
  });
  return { requests, incompatible, excluded: schedule.excluded, scheduleZeroMs: schedule.scheduleZeroMs, durationMs: schedule.durationMs };
}

// ---- Two-pass planning, for inputs too large to hold (the ingest function) ----
//
// Pass 1 keeps, per record, what the rules need and where its line is (`span`), not its body:
// the timing rules run on that index exactly as buildPlan runs them. Pass 2 reads back the
// lines of the requests about to be sent, a shard at a time, and materializes them with the
// same body rules. Memory is O(records x a few hundred bytes), not O(file).

/** A capture record without its body: enough to plan it and to read it back. */
export interface IndexedRecord extends Timeable {
  eventId: string;
  source: CaptureRecord['source'];
  span: ByteSpan;
  /** Size of the body as it will be sent (after overrides), for sharding by bytes. */
  bodyBytes: number;
  /** The verdict of `options.targetKind`. */
  incompatible: Verdict | null;
  /** Indexed for several kinds (targets of different kinds in one run): each kind's verdict. */
  incompatibleByKind?: Partial<Record<TargetKind, Verdict | null>>;
}

/**
 * Pass 1: the record's plan-relevant facts; the body is dropped by the caller. With `kinds`
 * (the target kinds of a run whose targets differ), the record keeps every kind's verdict,
 * from the same single parse; read them with `incompatibleAs`.
 */
export function indexRecord(record: CaptureRecord, options: PlanOptions, kinds?: readonly TargetKind[]): IndexedRecord {
  if (!record.span) throw new Error(`record ${record.source.file}:${record.source.line} has no byte span (parse it from a byte stream)`);
  const planned = planBodyForEveryKind(record, options);
  return {
    eventId: record.eventId,
    inferenceTimeMs: record.inferenceTimeMs,
    hasSubSecondTime: record.hasSubSecondTime,
    source: record.source,
    span: record.span,
    bodyBytes: planned.body.byteLength,
    incompatible: verdictFor(options.targetKind, planned),
    ...(kinds && kinds.length > 0 ? { incompatibleByKind: Object.fromEntries(kinds.map((k) => [k, verdictFor(k, planned)])) } : {}),
  };
}

/** A record's verdict for one target kind: from `incompatibleByKind` when it was indexed for several, else its own. */
export function incompatibleAs(record: IndexedRecord, kind: TargetKind): Verdict | null {
  if (!record.incompatibleByKind) return record.incompatible;
  const verdict = record.incompatibleByKind[kind];
  if (verdict === undefined) throw new Error(`record ${record.source.file}:${record.source.line} was not indexed for target kind ${kind}`);
  return verdict;
}

export interface IndexedEntry {
  index: number;
  offsetMs: number;
  captureTimeMs: number;
  record: IndexedRecord;
}

export interface IndexedPlan {
  /** Every selected record in schedule order, incompatible ones included (they carry the reason). */
  entries: IndexedEntry[];
  excluded: ReplayPlan['excluded'];
  scheduleZeroMs: number | null;
  durationMs: number;
}

export function planIndexed(records: readonly IndexedRecord[], options: PlanOptions): IndexedPlan {
  const schedule = scheduleItems(records, options);
  return {
    entries: schedule.selected.map(({ item, offsetMs, captureTimeMs }, index) => ({ index, offsetMs, captureTimeMs, record: item })),
    excluded: schedule.excluded,
    scheduleZeroMs: schedule.scheduleZeroMs,
    durationMs: schedule.durationMs,
  };
}

/** Pass 2: the request for an entry, from its record read back (the same line). */
export function materializeRequest(entry: IndexedEntry, record: CaptureRecord, options: PlanOptions): ScheduledRequest {
  if (record.eventId !== entry.record.eventId) throw new Error(`line ${record.source.line} read back as eventId ${record.eventId.slice(0, 80)}, planned as ${entry.record.eventId.slice(0, 80)}: the file changed`);
  return toRequest(record, planBody(record, options), entry.index, entry.offsetMs, entry.captureTimeMs, options);
}
