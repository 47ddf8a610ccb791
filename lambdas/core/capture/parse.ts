/**
 * SageMaker Data Capture parsing: a stream of bytes in, validated `CaptureRecord`s out, and
 * every line accounted for in the ingest report. A bad line is counted under one reason and
 * never stops the run.
 *
 * Speed (bench/parse-throughput.ts; the floor is split lines + `JSON.parse` of each):
 * - zod over the whole object costs several times a JSON.parse, so the well-formed path
 *   checks the few fields we use by hand and zod runs only on a line that fails them, to name
 *   what is wrong. A test holds the two to the same verdicts.
 * - The JSON body inside each line must be checked to reject `bad_inner_json`. A second
 *   JSON.parse of it built the whole body again to throw it away (~40 % of our time above the
 *   floor, its garbage included); json-check.ts checks it without building anything, skipping
 *   string contents with indexOf and looking for control characters in the body's bytes four
 *   at a time. JSON.parse still runs on a body the check refuses: it has the last word and
 *   names the position. test/unit/capture/parse-differential.test.ts holds this parser to
 *   the verdicts and reports of the one that parsed twice.
 * - Body bytes are written into a shared slab: `Buffer.from(string)` allocates once per
 *   body and measured ~10x slower than writing into a slab.
 * - The timestamp is read by hand: a regex plus Date.parse cost a quarter of a JSON.parse per
 *   line, and Date.parse rolls impossible dates (Feb 30) over silently.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { inputContentType, isJsonContentType, jsonErrorAt } from './body-type';
import type { DuplicateFilter } from './duplicates';
import type { IngestFileCounter, IngestReportBuilder } from './ingest-report';
import type { CaptureEncoding, CaptureRecord, CaptureSource, CapturedOutputSummary, IngestFileReport, RejectReason, TokenUsage } from '../types';

export { isJsonContentType } from './body-type';
export { DuplicateFilter, isLive } from './duplicates';
export { IngestFileCounter, IngestReportBuilder } from './ingest-report';

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
  if (n < 20 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return null;
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
    const om = rest === 2 ? 0 : rest === 4 ? digits(text, i + 3, 2) : rest === 5 && text.charCodeAt(i + 3) === 58 ? digits(text, i + 4, 2) : -1;
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
  // Up to a third of the slab's body limit in characters fits whatever they are (3 bytes at
  // most each, a surrogate pair 4 for 2); above, the exact size (simdutf, ~15 GB/s) keeps
  // bodies of up to SLAB_MAX_BODY bytes in the slab, not in a Buffer.from of their own.
  const room = text.length <= SLAB_MAX_BODY / 3 ? text.length * 3 : Buffer.byteLength(text, 'utf8');
  if (!slabRoom(room)) return Buffer.from(text, 'utf8');
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

function decodePayload(data: string, rawEncoding: string | null | undefined): { ok: true; encoding: CaptureEncoding; body: Buffer } | Rejection {
  // SageMaker writes upper case; a lower-case spelling names the same encoding.
  const encoding = rawEncoding == null ? 'BASE64' : rawEncoding.toUpperCase();
  if (encoding === 'JSON' || encoding === 'CSV') return { ok: true, encoding, body: utf8Bytes(data) };
  if (encoding !== 'BASE64') return { ok: false, reason: 'bad_encoding', detail: `unknown encoding ${JSON.stringify((rawEncoding ?? '').slice(0, 20))} (expected JSON, CSV or BASE64)` };
  const body = strictBase64(data);
  if (!body) return { ok: false, reason: 'bad_base64', detail: `data is not valid base64 (${data.length} chars)` };
  return { ok: true, encoding: 'BASE64', body };
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

/** The last `"usage"` in `text`, or -1. */
function lastUsageKey(text: string): number {
  // lastIndexOf is a runtime call that cost more than the forward search (a builtin) of the
  // answer's tail, where usage is written; the whole text is searched only if it is not there.
  let at = text.indexOf('"usage"', text.length - 512);
  if (at === -1) return text.lastIndexOf('"usage"');
  for (let next = text.indexOf('"usage"', at + 1); next !== -1; next = text.indexOf('"usage"', next + 1)) at = next;
  return at;
}

function usageOf(text: string): TokenUsage | null {
  const key = lastUsageKey(text);
  if (key === -1) return null;
  USAGE_OBJECT.lastIndex = key + 7;
  const match = USAGE_OBJECT.exec(text);
  if (!match?.[1]) return null;
  try {
    const usage = JSON.parse(match[1]) as { prompt_tokens?: unknown; completion_tokens?: unknown };
    const result = { promptTokens: tokenCount(usage.prompt_tokens), completionTokens: tokenCount(usage.completion_tokens) };
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
  const { data, observedContentType, encoding } = output as { data?: unknown; observedContentType?: unknown; encoding?: unknown };
  if (typeof data !== 'string') return null;
  // None declared (absent or null): none is asked for when replaying. InvokeEndpoint's Accept
  // is optional and the container answers in its default type without it, while one it does
  // not support is refused (the built-in XGBoost takes text/csv and text/libsvm only:
  // https://docs.aws.amazon.com/sagemaker/latest/dg/cdf-inference.html). The usage is looked for.
  const contentType = typeof observedContentType === 'string' ? observedContentType : null;
  const base64 = typeof encoding !== 'string' || encoding.toUpperCase() === 'BASE64';
  let usage: TokenUsage | null = null;
  if (contentType === null || isJsonContentType(contentType)) usage = usageOf(base64 ? Buffer.from(data, 'base64').toString('utf8') : data);
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
  captureData?: { endpointInput?: { observedContentType?: unknown; data?: unknown; encoding?: unknown }; endpointOutput?: unknown };
  eventMetadata?: { eventId?: unknown; inferenceId?: unknown; inferenceTime?: unknown };
}

/** Why a parsed time cannot be a capture's, or null (see EARLIEST_PLAUSIBLE_TIME_MS). */
export function implausibleTime(epochMs: number, nowMs: number): string | null {
  if (epochMs < EARLIEST_PLAUSIBLE_TIME_MS) return 'is before 2017-11-29, when SageMaker launched';
  if (epochMs > nowMs + MAX_FUTURE_MS) return `is more than a day ahead of this machine's clock (${new Date(nowMs).toISOString()})`;
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
    return { ok: false, reason: 'not_an_object', detail: `a JSON ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}, not an object` };
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
    return { ok: false, reason: 'missing_field', detail: explainShape(value) };
  }
  const time = parseInferenceTime(meta.inferenceTime);
  if (!time) return { ok: false, reason: 'bad_inference_time', detail: `inferenceTime ${JSON.stringify(meta.inferenceTime.slice(0, 40))} is not an ISO-8601 instant` };
  const implausible = implausibleTime(time.epochMs, options.nowMs ?? Date.now());
  if (implausible) return { ok: false, reason: 'implausible_time', detail: `inferenceTime ${JSON.stringify(meta.inferenceTime.slice(0, 40))} ${implausible}` };
  const data = input.data;
  const decoded = decodePayload(data, input.encoding as string | null | undefined);
  if (!decoded.ok) return decoded;
  const type = inputContentType(input.observedContentType as string | null | undefined, decoded, data);
  if (!type.ok) return type;
  return {
    ok: true,
    record: {
      eventId: meta.eventId,
      inferenceId: typeof meta.inferenceId === 'string' ? meta.inferenceId : null,
      inferenceTimeMs: time.epochMs,
      hasSubSecondTime: time.subSecond,
      input: { contentType: type.contentType, encoding: decoded.encoding, body: decoded.body, ...(type.inferred ? { contentTypeInferred: true } : {}) },
      output: summariseOutput((captureData as { endpointOutput?: unknown }).endpointOutput),
      source,
    },
  };
}

// ---------------------------------------------------------------------------------------
// The stream

const LF = 0x0a;
const CR = 0x0d;

/** The first bytes of a gzip stream (RFC 1952). */
const GZIP_MAGIC = [0x1f, 0x8b] as const;

export const GZIP_SKIP_REASON = 'gzip-compressed (starts with bytes 1f 8b), not read: decompress it (gunzip) and replay the .jsonl';

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

/**
 * The duplicate rule (duplicates.ts) on a parsed line: false when it is a copy of a record
 * kept (counted here); true when it is kept, after counting the copy it replaces, if any.
 */
function admitted(duplicates: DuplicateFilter, record: CaptureRecord, report: IngestReportBuilder, counter: IngestFileCounter, lineNo: number): boolean {
  const id = record.eventId.slice(0, 80);
  const admission = duplicates.admit(record);
  if (admission.duplicate) {
    counter.reject('duplicate', lineNo, `eventId ${id} with the same body was seen before`);
    return false;
  }
  const { replaced } = admission;
  if (replaced) {
    const owner = report.fileCounter(replaced.source.file);
    if (!owner) throw new Error(`duplicate filter and ingest report disagree: ${replaced.source.file} is not in the report`);
    owner.withdraw(replaced.source.line, replaced.contentTypeInferred, 'duplicate', `eventId ${id} with the same body has an earlier copy (by inferenceTime) at ${record.source.file}:${record.source.line}, replayed instead`);
  }
  return true;
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
    if (end - start >= 3 && buf[start] === BOM_BYTES[0] && buf[start + 1] === BOM_BYTES[1] && buf[start + 2] === BOM_BYTES[2]) start += 3;
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
    const { record } = verdict;
    if (duplicates && !admitted(duplicates, record, report, c, lineNo)) return;
    c.accept(record);
    record.span = { start: base + start, end: base + end };
    ready.push(record);
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
      else if (pendingBytes > 0) handle(Buffer.concat([...pending, buf.subarray(start, nl)]), pendingStart, 0, length, true);
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
