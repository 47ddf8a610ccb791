/*
 * The parser as of commit 5cd21d9 (before issue 11 part 4), the oracle of parse-differential.test.ts:
 * verbatim but for the types import, the detail issue 22 added (a line with neither Data Capture
 * field: not-data-capture.ts, imported) and the rules issue 18 added, each written here in its plainest
 * form and marked `issue 18` (a missing input content type inferred; a missing output content type
 * kept null; of the copies of one record the earliest by inferenceTime kept; the inferred count).
 * Change it only to add a rule to both parsers.
 */

/**
 * SageMaker Data Capture parsing: a stream of bytes in, validated `CaptureRecord`s out, and
 * every line accounted for in the ingest report. A bad line is counted under one reason and
 * never stops the run.
 *
 * Speed (bench/parse-throughput.ts; the floor is split lines + `JSON.parse` of each):
 * - zod over the whole object costs several times a JSON.parse, so the well-formed path
 *   checks the few fields we use by hand and zod runs only on a line that fails them, to name
 *   what is wrong. A test holds the two to the same verdicts.
 * - The JSON body inside each line must be parsed a second time to reject `bad_inner_json`.
 *   That is most of what we cost above the floor; a hand-written validator measured no faster
 *   than V8's JSON.parse, so JSON.parse it is.
 * - Body bytes are written into a shared slab: `Buffer.from(string)` allocates once per
 *   body and measured ~10x slower than writing into a slab.
 * - The timestamp is read by hand: a regex plus Date.parse cost a quarter of a JSON.parse per
 *   line, and Date.parse rolls impossible dates (Feb 30) over silently.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { notDataCaptureDetail } from '../../../../lambdas/core/capture/not-data-capture';
import type {
  CaptureEncoding,
  CaptureRecord,
  CaptureSource,
  CapturedOutputSummary,
  IngestFileReport,
  IngestReport,
  RejectReason,
  TokenUsage,
} from '../../../../lambdas/core/types';

const MAX_EXAMPLES_PER_REASON = 5;

/**
 * A line is held whole to be parsed. SageMaker payloads are at most tens of MB (base64 adds a
 * third), so a longer line is corruption (a file without newlines); past ~512 MB V8 cannot
 * even make it a string. The stream counts a longer line's bytes as they pass and never
 * holds more than this of it, whatever its size. The CLI lowers it with
 * `CAPTURE_REPLAY_MAX_LINE_BYTES` (between MIN_LINE_BYTES_LIMIT and this).
 */
export const MAX_LINE_BYTES = 128 * 1024 * 1024;
export const MIN_LINE_BYTES_LIMIT = 1024;

/**
 * Plausible inferenceTimes: not before Amazon SageMaker's launch (2017-11-29, UTC), and not
 * more than a day ahead of the clock of the machine that reads the capture (clock skew and
 * time zones fit a day; a year 9999 would schedule a run of thousands of years).
 */
export const EARLIEST_PLAUSIBLE_TIME_MS = Date.UTC(2017, 10, 29);
export const MAX_FUTURE_MS = 24 * 3600 * 1000;

/** UTF-8 bytes of a byte-order mark, and the character it decodes to. */
const BOM_BYTES = [0xef, 0xbb, 0xbf] as const;
const BOM_CHAR = 0xfeff;

export type LineVerdict = { ok: true; record: CaptureRecord } | { ok: false; reason: RejectReason; detail: string };
type Rejection = Extract<LineVerdict, { ok: false }>;

// Optional fields accept null as absent: "nothing there", whichever way a writer spelled it.
const inputSchema = z.object({
  observedContentType: z.string().nullish(),
  data: z.string(),
  encoding: z.string().nullish(),
});

/**
 * The shape a capture line must have. Output is information only (an odd one never rejects a
 * line) and `eventVersion` is not read, so neither is required. The fast path in
 * `parseCaptureLine` checks exactly this; zod explains a failure.
 */
export const captureLineSchema = z.object({
  captureData: z.object({
    endpointInput: inputSchema,
    endpointOutput: z.unknown().optional(),
  }),
  eventMetadata: z.object({
    eventId: z.string().min(1),
    inferenceId: z.string().nullish(),
    inferenceTime: z.string(),
  }),
});

// ---------------------------------------------------------------------------------------
// inferenceTime

/** Value of `len` ASCII digits at `at`, or -1. */
function digits(text: string, at: number, len: number): number {
  let v = 0;
  for (let i = at; i < at + len; i++) {
    const d = text.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return -1;
    v = v * 10 + d;
  }
  return v;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil); Date.UTC maps years 0-99 to 19xx. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * ((month + 9) % 12) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/**
 * Epoch ms of an ISO-8601 instant `YYYY-MM-DDTHH:MM:SS`, an optional fraction (1-9 digits),
 * then `Z` or an offset `±HH`, `±HHMM`, `±HH:MM`; null for anything else. Years are taken as
 * written (0050 is 0050, not 1950 as `Date.UTC` would make it). `subSecond` follows the
 * TEXT: true when a fractional part is written at all, `.000` included (that writer gave the
 * time to the millisecond: it is exact and kept); false for `...:18Z`, the whole seconds
 * SageMaker writes, which the intra-second policy spreads.
 */
export function parseInferenceTime(text: string): { epochMs: number; subSecond: boolean } | null {
  const n = text.length;
  if (
    n < 20 ||
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 84 ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58
  )
    return null;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return null;
  let i = 19;
  let fractionNs = 0;
  const fraction = text.charCodeAt(i) === 46;
  if (fraction) {
    const start = ++i;
    while (i < n && i - start < 10) {
      const d = text.charCodeAt(i) - 48;
      if (!(d >= 0 && d <= 9)) break;
      fractionNs = fractionNs * 10 + d;
      i++;
    }
    const count = i - start;
    if (count === 0 || count > 9) return null;
    fractionNs *= 10 ** (9 - count);
  }
  let offsetMinutes = 0;
  const sign = text.charCodeAt(i);
  if (sign === 90 /* Z */) {
    if (i !== n - 1) return null;
  } else if (sign === 43 || sign === 45) {
    const rest = n - i - 1;
    const oh = digits(text, i + 1, 2);
    const om =
      rest === 2
        ? 0
        : rest === 4
          ? digits(text, i + 3, 2)
          : rest === 5 && text.charCodeAt(i + 3) === 58
            ? digits(text, i + 4, 2)
            : -1;
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return null;
    offsetMinutes = (sign === 43 ? 1 : -1) * (oh * 60 + om);
  } else return null;
  const seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60;
  return { epochMs: seconds * 1000 + fractionNs / 1e6, subSecond: fraction };
}

// ---------------------------------------------------------------------------------------
// Payload bytes

// Bodies are written into a shared slab and handed out as views (so `body.buffer` is the
// slab: read bodies through byteOffset/byteLength, as every user here does). A record kept alive keeps
// its slab alive (as Node's own 8 KiB Buffer pool does), so the slab is small; bodies too big
// to share one get their own allocation, which their size amortises.
const SLAB_BYTES = 128 * 1024;
const SLAB_MAX_BODY = SLAB_BYTES / 4;
let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
let slabUsed = 0;

/** Makes room for `maxBytes` in the slab; false when a body that size should not share one. */
function slabRoom(maxBytes: number): boolean {
  if (maxBytes > SLAB_MAX_BODY) return false;
  if (slabUsed + maxBytes > SLAB_BYTES) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabUsed = 0;
  }
  return true;
}

function takeSlab(written: number): Buffer {
  const view = slab.subarray(slabUsed, slabUsed + written);
  slabUsed += written;
  return view;
}

function utf8Bytes(text: string): Buffer {
  if (!slabRoom(text.length * 3)) return Buffer.from(text, 'utf8');
  return takeSlab(slab.write(text, slabUsed, 'utf8'));
}

/**
 * Strict base64. Node's decoder skips characters it does not know and also takes the
 * base64url alphabet, which would replay a corrupted body. Rather than a regex over the whole
 * string: a well-formed string has a length that is a multiple of 4 and decodes to exactly 3/4
 * of it less the padding, and any skipped character (or `=` inside) makes the decoded length
 * come up short; `-` and `_` are looked for apart. MIME line breaks are tolerated.
 */
function strictBase64(data: string): Buffer | null {
  const compact = data.includes('\n') || data.includes('\r') ? data.replace(/[\r\n]/g, '') : data;
  if (compact.length % 4 !== 0 || compact.includes('-') || compact.includes('_')) return null;
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  const expected = (compact.length / 4) * 3 - padding;
  if (!slabRoom(expected)) {
    const decoded = Buffer.from(compact, 'base64');
    return decoded.length === expected ? decoded : null;
  }
  const written = slab.write(compact, slabUsed, expected, 'base64');
  return written === expected ? takeSlab(written) : null;
}

function decodePayload(
  data: string,
  rawEncoding: string | null | undefined,
): { ok: true; encoding: CaptureEncoding; body: Buffer } | Rejection {
  // SageMaker writes upper case; a lower-case spelling names the same encoding.
  const encoding = rawEncoding == null ? 'BASE64' : rawEncoding.toUpperCase();
  if (encoding === 'JSON' || encoding === 'CSV') return { ok: true, encoding, body: utf8Bytes(data) };
  if (encoding !== 'BASE64')
    return {
      ok: false,
      reason: 'bad_encoding',
      detail: `unknown encoding ${JSON.stringify((rawEncoding ?? '').slice(0, 20))} (expected JSON, CSV or BASE64)`,
    };
  const body = strictBase64(data);
  if (!body) return { ok: false, reason: 'bad_base64', detail: `data is not valid base64 (${data.length} chars)` };
  return { ok: true, encoding: 'BASE64', body };
}

const jsonTypeCache = new Map<string, boolean>();
let lastType = '';
let lastTypeIsJson = false;

/** application/json or any +json type, parameters ignored; memoised (a file has a handful, mostly one). */
export function isJsonContentType(contentType: string): boolean {
  if (contentType === lastType) return lastTypeIsJson;
  let known = jsonTypeCache.get(contentType);
  if (known === undefined) {
    const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
    known = type === 'application/json' || type.endsWith('+json');
    if (jsonTypeCache.size < 256) jsonTypeCache.set(contentType, known);
  }
  lastType = contentType;
  lastTypeIsJson = known;
  return known;
}

/** Where JSON.parse gave up, as a number only: its message quotes the input, which may be prompt text. */
function jsonErrorAt(error: unknown, length: number): string {
  const position = error instanceof Error ? /position (\d+)/.exec(error.message)?.[1] : undefined;
  return position === undefined ? `${length} chars` : `at char ${position} of ${length}`;
}

function innerJsonError(text: string): string | null {
  try {
    JSON.parse(text);
    return null;
  } catch (error) {
    return jsonErrorAt(error, text.length);
  }
}

// ---------------------------------------------------------------------------------------
// Captured output (information only: nothing about it rejects a line)

// OpenAI's usage object is flat ({prompt_tokens, completion_tokens, total_tokens, maybe
// *_details objects one level down}) and written last; parsing just it, found from the end,
// costs a fraction of a second JSON.parse of the whole answer. `"usage"` with bare quotes
// cannot come from inside a string value, where quotes are escaped.
const USAGE_OBJECT = /\s*:\s*(\{(?:[^{}]|\{[^{}]*\})*\})/y;

function tokenCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;
}

function usageOf(text: string): TokenUsage | null {
  const key = text.lastIndexOf('"usage"');
  if (key === -1) return null;
  USAGE_OBJECT.lastIndex = key + 7;
  const match = USAGE_OBJECT.exec(text);
  if (!match?.[1]) return null;
  try {
    const usage = JSON.parse(match[1]) as { prompt_tokens?: unknown; completion_tokens?: unknown };
    const result = {
      promptTokens: tokenCount(usage.prompt_tokens),
      completionTokens: tokenCount(usage.completion_tokens),
    };
    return result.promptTokens === null && result.completionTokens === null ? null : result;
  } catch {
    return null;
  }
}

function base64ByteLength(data: string): number {
  const compact = data.replace(/[\r\n]/g, '');
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((compact.length * 3) / 4) - padding);
}

function summariseOutput(output: unknown): CapturedOutputSummary | null {
  if (typeof output !== 'object' || output === null) return null;
  const { data, observedContentType, encoding } = output as {
    data?: unknown;
    observedContentType?: unknown;
    encoding?: unknown;
  };
  if (typeof data !== 'string') return null;
  const contentType = typeof observedContentType === 'string' ? observedContentType : null; // issue 18
  const base64 = typeof encoding !== 'string' || encoding.toUpperCase() === 'BASE64';
  let usage: TokenUsage | null = null;
  if (contentType === null || isJsonContentType(contentType))
    usage = usageOf(base64 ? Buffer.from(data, 'base64').toString('utf8') : data);
  // Only outputs without token usage are hashed: they are the deterministic ones worth an exact
  // comparison, and small; hashing every LLM answer would slow the parser for nothing.
  // (Invalid base64 has no known bytes: no digest.)
  const bytes = usage !== null ? null : base64 ? strictBase64(data) : Buffer.from(data, 'utf8');
  const sha256 = bytes === null ? null : createHash('sha256').update(bytes).digest('hex');
  return { contentType, byteLength: base64 ? base64ByteLength(data) : Buffer.byteLength(data, 'utf8'), usage, sha256 };
}

// ---------------------------------------------------------------------------------------
// One line

function explainShape(value: unknown): string {
  const result = captureLineSchema.safeParse(value);
  const issue = result.success ? undefined : result.error.issues[0];
  // Paths and zod's messages name fields and types, never values.
  return issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unexpected shape';
}

function isOptionalString(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}

interface RawLine {
  captureData?: {
    endpointInput?: { observedContentType?: unknown; data?: unknown; encoding?: unknown };
    endpointOutput?: unknown;
  };
  eventMetadata?: { eventId?: unknown; inferenceId?: unknown; inferenceTime?: unknown };
}

/** Why a parsed time cannot be a capture's, or null (see EARLIEST_PLAUSIBLE_TIME_MS). */
export function implausibleTime(epochMs: number, nowMs: number): string | null {
  if (epochMs < EARLIEST_PLAUSIBLE_TIME_MS) return 'is before 2017-11-29, when SageMaker launched';
  if (epochMs > nowMs + MAX_FUTURE_MS)
    return `is more than a day ahead of this machine's clock (${new Date(nowMs).toISOString()})`;
  return null;
}

export interface LineOptions {
  /** The reading machine's clock, epoch ms, for the plausibility of times. Default: now. */
  nowMs?: number;
}

/**
 * Parses one non-blank line (without its newline). A leading byte-order mark is skipped
 * (the stream drops the file's own before the line; this catches files joined with theirs).
 */
export function parseCaptureLine(line: string, source: CaptureSource, options: LineOptions = {}): LineVerdict {
  if (line.charCodeAt(0) === BOM_CHAR) line = line.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { ok: false, reason: 'invalid_json', detail: `not JSON (${jsonErrorAt(error, line.length)})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ok: false,
      reason: 'not_an_object',
      detail: `a JSON ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}, not an object`,
    };
  }
  // The fast path: the same checks as captureLineSchema, by hand (see the header).
  const raw = value as RawLine;
  const captureData = raw.captureData;
  const input = typeof captureData === 'object' && captureData !== null ? captureData.endpointInput : undefined;
  const meta = raw.eventMetadata;
  if (
    typeof input !== 'object' ||
    input === null ||
    typeof input.data !== 'string' ||
    !isOptionalString(input.encoding) ||
    !isOptionalString(input.observedContentType) ||
    typeof meta !== 'object' ||
    meta === null ||
    typeof meta.eventId !== 'string' ||
    meta.eventId === '' ||
    typeof meta.inferenceTime !== 'string' ||
    !isOptionalString(meta.inferenceId)
  ) {
    // issue 22: a line with neither Data Capture field says what it looks like.
    return { ok: false, reason: 'missing_field', detail: notDataCaptureDetail(value as object) ?? explainShape(value) };
  }
  const time = parseInferenceTime(meta.inferenceTime);
  if (!time)
    return {
      ok: false,
      reason: 'bad_inference_time',
      detail: `inferenceTime ${JSON.stringify(meta.inferenceTime.slice(0, 40))} is not an ISO-8601 instant`,
    };
  const implausible = implausibleTime(time.epochMs, options.nowMs ?? Date.now());
  if (implausible)
    return {
      ok: false,
      reason: 'implausible_time',
      detail: `inferenceTime ${JSON.stringify(meta.inferenceTime.slice(0, 40))} ${implausible}`,
    };
  const data = input.data;
  const declared = input.observedContentType as string | null | undefined;
  let contentType = declared ?? 'application/octet-stream';
  const decoded = decodePayload(data, input.encoding as string | null | undefined);
  if (!decoded.ok) return decoded;
  const text = decoded.encoding === 'BASE64' ? decoded.body.toString('utf8') : data;
  // issue 18: no content type: encoding JSON, or (but for CSV) a body that is JSON, is application/json.
  const inferred =
    declared == null &&
    (decoded.encoding === 'JSON' || (decoded.encoding === 'BASE64' && innerJsonError(text) === null));
  if (inferred) contentType = 'application/json';
  // Only the content type says "one JSON document": SageMaker also writes JSON Lines and
  // other JSON-ish types with encoding JSON.
  if (isJsonContentType(contentType)) {
    const error = innerJsonError(text);
    if (error !== null) {
      const detail = inferred
        ? `no content type and encoding JSON, but the data is not JSON (${error})`
        : `content type ${contentType.slice(0, 60)} but the data is not JSON (${error})`;
      return { ok: false, reason: 'bad_inner_json', detail };
    }
  }
  return {
    ok: true,
    record: {
      eventId: meta.eventId,
      inferenceId: typeof meta.inferenceId === 'string' ? meta.inferenceId : null,
      inferenceTimeMs: time.epochMs,
      hasSubSecondTime: time.subSecond,
      input: {
        contentType,
        encoding: decoded.encoding,
        body: decoded.body,
        ...(inferred ? { contentTypeInferred: true } : {}),
      },
      output: summariseOutput((captureData as { endpointOutput?: unknown }).endpointOutput),
      source,
    },
  };
}

// ---------------------------------------------------------------------------------------
// Duplicates and the report

/**
 * Same eventId and same input body: one record, replayed once; same eventId with another body
 * is two records. Shared by all files of a run (S3 redelivers, files get re-uploaded). Keeps
 * a digest, not the body: the first 128 bits of SHA-256 over the eventId (length-prefixed)
 * and the body, as a 16-character string, ~54 B a record with the set's own slot (a key of
 * eventId + base64 digest took ~214 B: 100 MB at 480k records). A false duplicate needs a
 * 128-bit collision: about 1e-27 for a million records. Never pins the bodies themselves.
 * Hashing every body is its main cost (~30 % of parse time at 1 GB); comparing bodies only
 * when an eventId repeats would avoid it but keep every body alive for as long as the filter.
 */
// issue 18: the earliest copy by inferenceTime is kept (ties: the first seen); a later-seen earlier one supersedes it.
export class DuplicateFilter {
  private readonly kept = new Map<string, { timeMs: number; source: CaptureSource; inferred: boolean; row: number }>();
  private readonly superseded_ = new Set<number>();
  private rows = 0;

  admit(
    record: CaptureRecord,
  ):
    | { duplicate: true; keptAt: CaptureSource }
    | { duplicate: false; replaced: { source: CaptureSource; contentTypeInferred: boolean } | null } {
    const { eventId } = record;
    const key = createHash('sha256')
      .update(`${eventId.length}:${eventId}`)
      .update(record.input.body)
      .digest()
      .toString('latin1', 0, 16);
    const before = this.kept.get(key);
    if (before && record.inferenceTimeMs >= before.timeMs) return { duplicate: true, keptAt: before.source };
    if (before) this.superseded_.add(before.row);
    const row = this.rows++;
    this.kept.set(key, {
      timeMs: record.inferenceTimeMs,
      source: record.source,
      inferred: record.input.contentTypeInferred === true,
      row,
    });
    record.dedupe = { keptBy: this, keptAs: row };
    return {
      duplicate: false,
      replaced: before ? { source: before.source, contentTypeInferred: before.inferred } : null,
    };
  }

  superseded(row: number): boolean {
    return this.superseded_.has(row);
  }

  get size(): number {
    return this.kept.size;
  }
}

export class IngestFileCounter {
  readonly report: IngestFileReport;

  constructor(file: string) {
    this.report = {
      file,
      bytesRead: 0,
      linesRead: 0,
      blankLines: 0,
      accepted: 0,
      rejected: 0,
      contentTypeInferred: 0,
      rejectedByReason: {},
      examples: {},
    };
  }

  reject(reason: RejectReason, line: number, detail: string): void {
    const r = this.report;
    r.rejected++;
    r.rejectedByReason[reason] = (r.rejectedByReason[reason] ?? 0) + 1;
    const examples = (r.examples[reason] ??= []);
    if (examples.length < MAX_EXAMPLES_PER_REASON) examples.push({ file: r.file, line, detail });
  }
}

export class IngestReportBuilder {
  readonly files: IngestFileCounter[] = [];
  private readonly skipped: { file: string; reason: string }[] = [];

  startFile(file: string): IngestFileCounter {
    const counter = new IngestFileCounter(file);
    this.files.push(counter);
    return counter;
  }

  skipFile(file: string, reason: string): void {
    this.skipped.push({ file, reason });
  }

  build(): IngestReport {
    const files = this.files.map((f) => structuredClone(f.report));
    const totals: IngestReport['totals'] = {
      files: files.length,
      linesRead: 0,
      blankLines: 0,
      accepted: 0,
      rejected: 0,
      contentTypeInferred: 0,
      rejectedByReason: {},
    };
    for (const f of files) {
      totals.linesRead += f.linesRead;
      totals.blankLines += f.blankLines;
      totals.accepted += f.accepted;
      totals.rejected += f.rejected;
      totals.contentTypeInferred += f.contentTypeInferred;
      for (const [reason, count] of Object.entries(f.rejectedByReason) as [RejectReason, number][]) {
        totals.rejectedByReason[reason] = (totals.rejectedByReason[reason] ?? 0) + count;
      }
    }
    return { files, skippedFiles: [...this.skipped], totals };
  }
}

// ---------------------------------------------------------------------------------------
// The stream

const LF = 0x0a;
const CR = 0x0d;

/** The first bytes of a gzip stream (RFC 1952). */
const GZIP_MAGIC = [0x1f, 0x8b] as const;

export const GZIP_SKIP_REASON =
  'gzip-compressed (starts with bytes 1f 8b), not read: decompress it (gunzip) and replay the .jsonl';

function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== CR && c !== 0x0b && c !== 0x0c) return false;
  }
  return true;
}

function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

export interface StreamOptions extends LineOptions {
  /** Lowers the line cap (MAX_LINE_BYTES); a longer line is counted as `line_too_long`. */
  maxLineBytes?: number;
}

/**
 * Parses one capture file's bytes; rejected lines go to the report, good records are yielded.
 * Memory is bounded by the chunk size plus the line cap: only the unfinished end of a chunk
 * is carried over, and a line is known to be too long as soon as its bytes pass the cap, from
 * then on only counted (any length: a 600 MiB line costs a pass over its bytes, no string).
 * Lines are decoded whole, so a multi-byte character split across chunks is never mangled.
 * CR before LF is dropped, and a UTF-8 byte-order mark at the start of a line (the file's
 * own, or one left by joining files) is skipped, outside the line's span. A gzip file
 * (bytes 1f 8b first) is listed as skipped, not parsed into thousands of `invalid_json`.
 * Lines are split in one loop per chunk, not a generator per line: that hop cost more than
 * the split.
 */
export async function* parseCaptureStream(
  chunks: AsyncIterable<Uint8Array>,
  file: string,
  report: IngestReportBuilder,
  duplicates?: DuplicateFilter,
  options: StreamOptions = {},
): AsyncGenerator<CaptureRecord> {
  const maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
  const lineOptions: LineOptions = { nowMs: options.nowMs ?? Date.now() };
  // The file is entered in the report once its first bytes show it is not gzip.
  let counter: IngestFileCounter | null = null;
  let r: IngestFileReport | null = null;
  let lineNo = 0;
  const ready: CaptureRecord[] = [];

  // `base` is the file offset of buf[0]: spans are file offsets.
  const handle = (buf: Buffer, base: number, start: number, end: number, complete: boolean): void => {
    const c = counter as IngestFileCounter;
    const rep = c.report;
    lineNo++;
    rep.linesRead++;
    if (
      end - start >= 3 &&
      buf[start] === BOM_BYTES[0] &&
      buf[start + 1] === BOM_BYTES[1] &&
      buf[start + 2] === BOM_BYTES[2]
    )
      start += 3;
    if (end > start && buf[end - 1] === CR) end--;
    const line = buf.toString('utf8', start, end);
    if (isBlank(line)) {
      rep.blankLines++;
      return;
    }
    const verdict = parseCaptureLine(line, { file, line: lineNo }, lineOptions);
    if (!verdict.ok) {
      // A last line without newline that is not even JSON was cut off mid-write; a complete
      // JSON value there only lost its newline and keeps its own verdict.
      if (!complete && verdict.reason === 'invalid_json') {
        c.reject('truncated_line', lineNo, `last line has no newline and is not complete JSON (${line.length} chars)`);
      } else c.reject(verdict.reason, lineNo, verdict.detail);
      return;
    }
    const id = verdict.record.eventId.slice(0, 80);
    const admission = duplicates?.admit(verdict.record);
    if (admission?.duplicate) {
      c.reject('duplicate', lineNo, `eventId ${id} with the same body was seen before`);
      return;
    }
    if (admission?.replaced) {
      // issue 18: the copy kept so far is counted as the duplicate instead.
      const { source, contentTypeInferred } = admission.replaced;
      const owner = report.files.filter((f) => f.report.file === source.file).pop() as IngestFileCounter;
      owner.report.accepted--;
      if (contentTypeInferred) owner.report.contentTypeInferred--;
      owner.reject(
        'duplicate',
        source.line,
        `eventId ${id} with the same body has an earlier copy (by inferenceTime) at ${file}:${lineNo}, replayed instead`,
      );
    }
    rep.accepted++;
    if (verdict.record.input.contentTypeInferred) rep.contentTypeInferred++;
    verdict.record.span = { start: base + start, end: base + end };
    ready.push(verdict.record);
  };
  const tooLong = (bytes: number): void => {
    const c = counter as IngestFileCounter;
    lineNo++;
    c.report.linesRead++;
    c.reject('line_too_long', lineNo, `line of ${bytes} bytes exceeds the ${maxLineBytes}-byte limit`);
  };

  // The unfinished line: copied parts (a source may reuse its chunk buffers), or only a byte
  // count once the line is known to be too long.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let overlong = false;
  let pendingStart = 0; // file offset of the unfinished line's first byte
  // Until the file is entered: its first byte, when a chunk of one byte left it undecided.
  let head: Buffer | null = null;
  for await (const chunk of chunks) {
    let buf = asBuffer(chunk);
    if (!r) {
      if (buf.length === 0) continue;
      if (head) buf = Buffer.concat([head, buf]);
      if (buf.length < GZIP_MAGIC.length && buf[0] === GZIP_MAGIC[0]) {
        head = Buffer.from(buf);
        continue;
      }
      head = null;
      if (buf[0] === GZIP_MAGIC[0] && buf[1] === GZIP_MAGIC[1]) {
        report.skipFile(file, GZIP_SKIP_REASON);
        return;
      }
      counter = report.startFile(file);
      r = counter.report;
    }
    const chunkBase = r.bytesRead;
    r.bytesRead += buf.length;
    let start = 0;
    for (let nl = buf.indexOf(LF); nl !== -1; nl = buf.indexOf(LF, start)) {
      const length = pendingBytes + nl - start;
      if (overlong || length > maxLineBytes) tooLong(length);
      else if (pendingBytes > 0)
        handle(Buffer.concat([...pending, buf.subarray(start, nl)]), pendingStart, 0, length, true);
      else handle(buf, chunkBase, start, nl, true);
      pending = [];
      pendingBytes = 0;
      overlong = false;
      start = nl + 1;
    }
    if (start < buf.length) {
      if (pendingBytes === 0) pendingStart = chunkBase + start;
      pendingBytes += buf.length - start;
      if (overlong || pendingBytes > maxLineBytes) {
        overlong = true;
        pending = [];
      } else pending.push(Buffer.from(buf.subarray(start)));
    }
    for (const record of ready) yield record;
    ready.length = 0;
  }
  if (!r) {
    // Empty, or a single byte.
    counter = report.startFile(file);
    r = counter.report;
    if (head) {
      r.bytesRead = head.length;
      pending = [head];
      pendingBytes = head.length;
      pendingStart = 0;
    }
  }
  if (overlong) tooLong(pendingBytes);
  else if (pendingBytes > 0) handle(Buffer.concat(pending), pendingStart, 0, pendingBytes, false);
  for (const record of ready) yield record;
}
