/**
 * From parsed capture records to a replay plan: what to send, when, and what not and why.
 *
 * Timing policy (the README quotes this):
 * 1. Records are sorted by inferenceTime, stably: ties keep capture order (the order given:
 *    file order, then line order).
 * 2. Intra-second policy for whole-second times: `spread` gives the k records of one second
 *    +i*1000/k ms (i = 0..k-1 in capture order); `burst` leaves them all at the second's start.
 *    Times with a fractional part are kept as they are.
 * 3. Schedule zero = the first record's time (after 2). A record is in the window when
 *    startOffset <= t - zero <= endOffset (inclusive, AIPerf's fixed-schedule offsets); the
 *    schedule starts at the start offset: offsetMs = (t - zero - startOffset) / timeScale.
 * 4. Then sampling (deterministic with the seed), then the limit; indices 0..n-1 follow.
 * 5. Literal bodies: the captured bytes, unless an override changes something; only then is
 *    the JSON re-serialized and the override named in `overrides`.
 * 6. Target compatibility: a chat target takes JSON with a `messages` array; anything else
 *    is planned (it has an index and a due time) but listed as incompatible, with its reason.
 */
import { isJsonContentType } from '../capture/parse';
import { deterministicUuid } from '../ids';
import type { CaptureRecord, DropReason, IntraSecondPolicy, ReplayPlan, ScheduledRequest, TargetKind } from '../types';
import { seededRandom } from '../random';

export interface PlanOptions {
  runId: string;
  targetKind: TargetKind;
  timeScale: number;
  intraSecond: IntraSecondPolicy;
  startOffsetMs?: number;
  endOffsetMs?: number;
  limit?: number;
  sampleRate?: number;
  seed?: number;
  modelOverride?: string;
  forceStreaming?: boolean;
}

/** Every problem with the options at once; empty when valid. */
export function validatePlanOptions(o: PlanOptions): string[] {
  const problems: string[] = [];
  if (!(Number.isFinite(o.timeScale) && o.timeScale > 0)) problems.push(`timeScale must be a finite number > 0 (got ${o.timeScale})`);
  if (o.intraSecond !== 'spread' && o.intraSecond !== 'burst') problems.push(`intraSecond must be 'spread' or 'burst' (got ${String(o.intraSecond)})`);
  for (const [name, value] of [['startOffsetMs', o.startOffsetMs], ['endOffsetMs', o.endOffsetMs]] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) problems.push(`${name} must be a finite number >= 0 (got ${value})`);
  }
  if (o.startOffsetMs !== undefined && o.endOffsetMs !== undefined && o.endOffsetMs < o.startOffsetMs) {
    problems.push(`endOffsetMs (${o.endOffsetMs}) is before startOffsetMs (${o.startOffsetMs})`);
  }
  if (o.limit !== undefined && !(Number.isInteger(o.limit) && o.limit > 0)) problems.push(`limit must be a whole number > 0 (got ${o.limit})`);
  if (o.sampleRate !== undefined && !(o.sampleRate > 0 && o.sampleRate <= 1)) problems.push(`sampleRate must be in (0, 1] (got ${o.sampleRate})`);
  if (o.modelOverride !== undefined && o.modelOverride.trim() === '') problems.push('modelOverride must not be empty');
  if (!o.runId) problems.push('runId is required');
  return problems;
}

interface Timed {
  record: CaptureRecord;
  order: number;
  timeMs: number;
}

function applyIntraSecond(sorted: Timed[], policy: IntraSecondPolicy): void {
  if (policy === 'burst') return;
  let i = 0;
  while (i < sorted.length) {
    const first = sorted[i] as Timed;
    if (first.record.hasSubSecondTime) {
      i++;
      continue;
    }
    // Whole-second records of this second, in capture order (stable sort kept it).
    const group: Timed[] = [];
    for (let j = i; j < sorted.length && (sorted[j] as Timed).timeMs === first.timeMs; j++) {
      if (!(sorted[j] as Timed).record.hasSubSecondTime) group.push(sorted[j] as Timed);
    }
    group.forEach((t, k) => (t.timeMs = first.timeMs + (k * 1000) / group.length));
    i += group.length;
    while (i < sorted.length && (sorted[i] as Timed).timeMs === first.timeMs && (sorted[i] as Timed).record.hasSubSecondTime) i++;
  }
}

interface BodyPlan {
  body: Uint8Array;
  streaming: boolean;
  overrides: string[];
  incompatible: { reason: DropReason; detail: string } | null;
}

function planBody(record: CaptureRecord, options: PlanOptions): BodyPlan {
  const { contentType, body } = record.input;
  const json = isJsonContentType(contentType);
  if (!json) {
    return {
      body,
      streaming: false,
      overrides: [],
      incompatible:
        options.targetKind === 'openai-chat'
          ? { reason: 'unsupported_content_type', detail: `content type ${contentType} cannot be sent to a chat target` }
          : null,
    };
  }
  // The parser has checked that JSON content types carry valid JSON.
  const parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as unknown;
  const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  const obj = (isObject ? parsed : {}) as Record<string, unknown>;
  if (options.targetKind === 'openai-chat' && !(isObject && Array.isArray(obj.messages))) {
    return { body, streaming: false, overrides: [], incompatible: { reason: 'not_chat_request', detail: 'JSON body without a messages array' } };
  }
  if (!isObject) return { body, streaming: false, overrides: [], incompatible: null };
  const overrides: string[] = [];
  let changed = obj;
  if (options.modelOverride !== undefined && obj.model !== options.modelOverride) {
    changed = { ...changed, model: options.modelOverride };
    overrides.push('model');
  }
  if (options.forceStreaming) {
    const streamOptions = obj.stream_options;
    const hasUsage = typeof streamOptions === 'object' && streamOptions !== null && (streamOptions as { include_usage?: unknown }).include_usage === true;
    if (obj.stream !== true || !hasUsage) {
      changed = {
        ...changed,
        stream: true,
        stream_options: { ...(typeof streamOptions === 'object' && streamOptions !== null ? streamOptions : {}), include_usage: true },
      };
      overrides.push('stream');
    }
  }
  return {
    body: overrides.length > 0 ? Buffer.from(JSON.stringify(changed), 'utf8') : body,
    streaming: changed.stream === true,
    overrides,
    incompatible: null,
  };
}

export function buildPlan(records: readonly CaptureRecord[], options: PlanOptions): ReplayPlan {
  const problems = validatePlanOptions(options);
  if (problems.length > 0) throw new Error(`invalid plan options: ${problems.join('; ')}`);
  // Work in ms relative to the earliest capture: epoch ms (~1.8e12) would cost the spread
  // fractions their precision.
  let base = Infinity;
  for (const r of records) if (r.inferenceTimeMs < base) base = r.inferenceTimeMs;
  const timed: Timed[] = records.map((record, order) => ({ record, order, timeMs: record.inferenceTimeMs - base }));
  timed.sort((a, b) => a.timeMs - b.timeMs || a.order - b.order);
  applyIntraSecond(timed, options.intraSecond);
  timed.sort((a, b) => a.timeMs - b.timeMs || a.order - b.order);

  const excluded: ReplayPlan['excluded'] = {};
  const first = timed[0];
  if (!first) return { requests: [], incompatible: [], excluded, scheduleZeroMs: null, durationMs: 0 };
  const zero = first.timeMs;
  const start = options.startOffsetMs ?? 0;
  const end = options.endOffsetMs ?? Infinity;
  let selected = timed.filter((t) => {
    const offset = t.timeMs - zero;
    return offset >= start && offset <= end;
  });
  if (selected.length < timed.length) excluded.outside_offset_window = timed.length - selected.length;
  if (options.sampleRate !== undefined && options.sampleRate < 1) {
    const random = seededRandom(options.seed ?? 1);
    const kept = selected.filter(() => random() < (options.sampleRate as number));
    if (kept.length < selected.length) excluded.sample = selected.length - kept.length;
    selected = kept;
  }
  if (options.limit !== undefined && selected.length > options.limit) {
    excluded.limit = selected.length - options.limit;
    selected = selected.slice(0, options.limit);
  }

  const requests: ScheduledRequest[] = [];
  const incompatible: ReplayPlan['incompatible'] = [];
  selected.forEach((t, index) => {
    const body = planBody(t.record, options);
    const request: ScheduledRequest = {
      index,
      offsetMs: (t.timeMs - zero - start) / options.timeScale,
      captureTimeMs: base + t.timeMs,
      correlationId: deterministicUuid(options.runId, t.record.eventId, index),
      eventId: t.record.eventId,
      inferenceId: t.record.inferenceId,
      source: t.record.source,
      contentType: t.record.input.contentType,
      body: body.body,
      streaming: body.streaming,
      overrides: body.overrides,
      capturedUsage: t.record.output?.usage ?? null,
    };
    if (body.incompatible) incompatible.push({ request, ...body.incompatible });
    else requests.push(request);
  });
  const last = selected[selected.length - 1];
  return {
    requests,
    incompatible,
    excluded,
    scheduleZeroMs: base + zero,
    durationMs: last ? (last.timeMs - zero - start) / options.timeScale : 0,
  };
}
