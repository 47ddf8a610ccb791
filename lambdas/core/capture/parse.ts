/**
 * SageMaker Data Capture parsing: a stream of bytes in, validated `CaptureRecord`s out, and
 * every line accounted for in the ingest report. A bad line is counted under one reason and
 * never stops the run.
 *
 * Speed: the floor is plain `JSON.parse` of each line. Validating the whole object with zod
 * costs several times that, so the well-formed path checks the few fields we use by hand and
 * zod runs only on a line that fails them, to name what is wrong. Same verdicts, both ways.
 */
import { z } from 'zod';
import type {
  CaptureEncoding,
  CaptureRecord,
  CaptureSource,
  IngestFileReport,
  IngestReport,
  RejectReason,
  TokenUsage,
} from '../types';

const MAX_EXAMPLES_PER_REASON = 5;

export type LineVerdict = { ok: true; record: CaptureRecord } | { ok: false; reason: RejectReason; detail: string };

const payloadSchema = z.object({
  observedContentType: z.string().optional(),
  mode: z.string().optional(),
  data: z.string(),
  encoding: z.string().optional(),
});

/** The shape we rely on; used to explain a rejection (the fast path checks the same fields). */
export const captureLineSchema = z.object({
  captureData: z.object({
    endpointInput: payloadSchema,
    endpointOutput: payloadSchema.optional(),
  }),
  eventMetadata: z.object({
    eventId: z.string().min(1),
    inferenceId: z.string().optional(),
    inferenceTime: z.string(),
  }),
});

/** Value of `len` ASCII digits at `at`, or -1. */
function digits(text: string, at: number, len: number): number {
  let v = 0;
  for (let i = at; i < at + len; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * Epoch ms of an ISO-8601 instant (`YYYY-MM-DDTHH:MM:SS`, optional fraction, `Z` or
 * `±HH:MM`/`±HHMM`), or null. Read by hand: a regex plus Date.parse cost a quarter of a
 * JSON.parse per line, and Date.parse would roll impossible dates (Feb 30) over silently.
 */
export function parseInferenceTime(text: string): { epochMs: number; subSecond: boolean } | null {
  if (text.length < 20 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return null;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return null;
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  let i = 19;
  let fractionMs = 0;
  let subSecond = false;
  if (text.charCodeAt(i) === 46) {
    let scale = 100;
    const start = ++i;
    while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) {
      const d = text.charCodeAt(i) - 48;
      fractionMs += d * scale;
      if (d !== 0) subSecond = true;
      scale /= 10;
      i++;
    }
    if (i === start || i - start > 9) return null;
  }
  let offsetMin = 0;
  const sign = text.charCodeAt(i);
  if (sign === 90 && i === text.length - 1) {
    offsetMin = 0;
  } else if (sign === 43 || sign === 45) {
    const rest = text.length - i - 1;
    const oh = digits(text, i + 1, 2);
    const om = rest === 5 && text.charCodeAt(i + 3) === 58 ? digits(text, i + 4, 2) : rest === 4 ? digits(text, i + 3, 2) : -1;
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return null;
    offsetMin = (sign === 43 ? 1 : -1) * (oh * 60 + om);
  } else return null;
  return { epochMs: Date.UTC(year, month - 1, day, hour, minute, second) + fractionMs - offsetMin * 60_000, subSecond };
}

/**
 * Node's base64 decoder skips characters it does not know, which would send a corrupted
 * body. Strict check without a regex over the whole string: a well-formed string has a
 * length that is a multiple of 4 and decodes to exactly 3/4 of it less the padding; any
 * skipped character makes the decoded length come up short.
 */
function strictBase64(data: string): Buffer | null {
  const compact = data.includes('\n') || data.includes('\r') ? data.replace(/[\r\n]/g, '') : data;
  if (compact.length % 4 !== 0) return null;
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  const decoded = Buffer.from(compact, 'base64');
  return decoded.length === (compact.length / 4) * 3 - padding ? decoded : null;
}

function decodePayload(
  data: string,
  rawEncoding: string | undefined,
): { ok: true; encoding: CaptureEncoding; body: Uint8Array } | { ok: false; reason: RejectReason; detail: string } {
  const encoding = (rawEncoding ?? 'BASE64').toUpperCase();
  if (encoding === 'JSON' || encoding === 'CSV') return { ok: true, encoding, body: Buffer.from(data, 'utf8') };
  if (encoding !== 'BASE64') return { ok: false, reason: 'bad_encoding', detail: `unknown encoding "${rawEncoding?.slice(0, 20)}"` };
  const body = strictBase64(data);
  if (!body) return { ok: false, reason: 'bad_base64', detail: `data is not valid base64 (${data.length} chars)` };
  return { ok: true, encoding: 'BASE64', body };
}

const jsonTypeCache = new Map<string, boolean>();

/** application/json or any +json type, parameters ignored; memoised (a file has a handful). */
export function isJsonContentType(contentType: string): boolean {
  let known = jsonTypeCache.get(contentType);
  if (known === undefined) {
    const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
    known = type === 'application/json' || type.endsWith('+json');
    if (jsonTypeCache.size < 256) jsonTypeCache.set(contentType, known);
  }
  return known;
}

function isValidJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

// OpenAI's usage object is flat ({prompt_tokens, completion_tokens, total_tokens, maybe
// *_details objects one level down}); parsing just it, not the whole captured answer, keeps
// the hot path near the cost of one JSON.parse per line.
const USAGE = /"usage"\s*:\s*(\{(?:[^{}]|\{[^{}]*\})*\})/;

function usageOf(contentType: string, data: string, encoding: string | undefined): TokenUsage | null {
  if (!isJsonContentType(contentType)) return null;
  try {
    const text = (encoding ?? 'BASE64').toUpperCase() === 'BASE64' ? Buffer.from(data, 'base64').toString('utf8') : data;
    const match = USAGE.exec(text);
    if (!match) return null;
    const usage = JSON.parse(match[1] as string) as { prompt_tokens?: unknown; completion_tokens?: unknown };
    if (!usage || typeof usage !== 'object') return null;
    const count = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);
    return { promptTokens: count(usage.prompt_tokens), completionTokens: count(usage.completion_tokens) };
  } catch {
    return null; // output is information only: an odd one never rejects the line
  }
}

interface RawPayload {
  observedContentType?: unknown;
  data?: unknown;
  encoding?: unknown;
}

function explainShape(value: unknown): string {
  const result = captureLineSchema.safeParse(value);
  if (result.success) return 'unexpected shape';
  const issue = result.error.issues[0];
  return issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unexpected shape';
}

/** Parses one non-blank line. */
export function parseCaptureLine(line: string, source: CaptureSource): LineVerdict {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'invalid_json', detail: `not JSON (${line.length} chars)` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'not_an_object', detail: `a JSON ${Array.isArray(value) ? 'array' : typeof value}, not an object` };
  }
  const v = value as { captureData?: { endpointInput?: RawPayload; endpointOutput?: RawPayload }; eventMetadata?: Record<string, unknown> };
  const input = v.captureData?.endpointInput;
  const meta = v.eventMetadata;
  const output = v.captureData?.endpointOutput;
  if (
    typeof input !== 'object' ||
    input === null ||
    typeof input.data !== 'string' ||
    (input.encoding !== undefined && typeof input.encoding !== 'string') ||
    (input.observedContentType !== undefined && typeof input.observedContentType !== 'string') ||
    typeof meta !== 'object' ||
    meta === null ||
    typeof meta.eventId !== 'string' ||
    meta.eventId === '' ||
    typeof meta.inferenceTime !== 'string' ||
    (meta.inferenceId !== undefined && typeof meta.inferenceId !== 'string') ||
    (output !== undefined && (typeof output !== 'object' || output === null || typeof output.data !== 'string'))
  ) {
    return { ok: false, reason: 'missing_field', detail: explainShape(value) };
  }
  const time = parseInferenceTime(meta.inferenceTime);
  if (!time) return { ok: false, reason: 'bad_inference_time', detail: `inferenceTime "${meta.inferenceTime.slice(0, 40)}" is not an ISO-8601 instant` };
  const contentType = (input.observedContentType as string | undefined) ?? 'application/octet-stream';
  const decoded = decodePayload(input.data, input.encoding as string | undefined);
  if (!decoded.ok) return decoded;
  if (isJsonContentType(contentType) && !isValidJson(decoded.encoding === 'BASE64' ? Buffer.from(decoded.body).toString('utf8') : input.data)) {
    return { ok: false, reason: 'bad_inner_json', detail: `content type ${contentType} but data is not JSON` };
  }
  let outputSummary: CaptureRecord['output'] = null;
  if (output && typeof output.data === 'string') {
    const outType = typeof output.observedContentType === 'string' ? output.observedContentType : 'application/octet-stream';
    const outEncoding = typeof output.encoding === 'string' ? output.encoding : undefined;
    outputSummary = {
      contentType: outType,
      byteLength: (outEncoding ?? 'BASE64').toUpperCase() === 'BASE64' ? Math.floor((output.data.length * 3) / 4) : Buffer.byteLength(output.data),
      usage: usageOf(outType, output.data, outEncoding),
    };
  }
  return {
    ok: true,
    record: {
      eventId: meta.eventId,
      inferenceId: typeof meta.inferenceId === 'string' ? meta.inferenceId : null,
      inferenceTimeMs: time.epochMs,
      hasSubSecondTime: time.subSecond,
      input: { contentType, encoding: decoded.encoding, body: decoded.body },
      output: outputSummary,
      source,
    },
  };
}

/**
 * Same eventId and same body: one record replayed once. Shared by all files of a run.
 * Bodies are compared only when an eventId repeats (rare: SageMaker ids are per invocation),
 * so the common case is one map lookup, not a hash of every body. The filter keeps a
 * reference to each first body; a run keeps its records for planning anyway, so that costs
 * no extra memory there. A parse that must stay flat in memory (the benchmark) runs without one.
 */
export class DuplicateFilter {
  private readonly byEventId = new Map<string, Uint8Array | Uint8Array[]>();

  /** True when this record was seen before (and remembers it otherwise). */
  seen(record: CaptureRecord): boolean {
    const body = record.input.body;
    const known = this.byEventId.get(record.eventId);
    if (known === undefined) {
      this.byEventId.set(record.eventId, body);
      return false;
    }
    const bodies = Array.isArray(known) ? known : [known];
    if (bodies.some((b) => Buffer.compare(b, body) === 0)) return true;
    this.byEventId.set(record.eventId, [...bodies, body]);
    return false;
  }
}

export class IngestFileCounter {
  readonly report: IngestFileReport;

  constructor(file: string) {
    this.report = { file, bytesRead: 0, linesRead: 0, blankLines: 0, accepted: 0, rejected: 0, rejectedByReason: {}, examples: {} };
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
  private readonly files: IngestFileCounter[] = [];
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
    const totals: IngestReport['totals'] = { files: files.length, linesRead: 0, blankLines: 0, accepted: 0, rejected: 0, rejectedByReason: {} };
    for (const f of files) {
      totals.linesRead += f.linesRead;
      totals.blankLines += f.blankLines;
      totals.accepted += f.accepted;
      totals.rejected += f.rejected;
      for (const [reason, count] of Object.entries(f.rejectedByReason) as [RejectReason, number][]) {
        totals.rejectedByReason[reason] = (totals.rejectedByReason[reason] ?? 0) + count;
      }
    }
    return { files, skippedFiles: [...this.skipped], totals };
  }
}

const NEWLINE = 0x0a;

function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0xfeff) return false;
  }
  return true;
}

/**
 * Parses one capture file's bytes; rejected lines go to the report, good records are yielded.
 * Lines are split here, inside one loop per chunk (no generator per line: that hop cost more
 * than the split), holding at most one partial line across chunks. Each line is decoded
 * whole, so a multi-byte character split across chunks is never mangled; CR before LF is
 * dropped.
 */
export async function* parseCaptureStream(
  chunks: AsyncIterable<Uint8Array>,
  file: string,
  report: IngestReportBuilder,
  duplicates?: DuplicateFilter,
): AsyncGenerator<CaptureRecord> {
  const counter = report.startFile(file);
  const r = counter.report;
  let lineNo = 0;
  const ready: CaptureRecord[] = [];
  const handle = (line: string, complete: boolean) => {
    lineNo++;
    r.linesRead++;
    if (isBlank(line)) {
      r.blankLines++;
      return;
    }
    const verdict = parseCaptureLine(line, { file, line: lineNo });
    if (!verdict.ok) {
      // A last line without newline that does not parse was cut off mid-write.
      const truncated = !complete && (verdict.reason === 'invalid_json' || verdict.reason === 'missing_field');
      counter.reject(truncated ? 'truncated_line' : verdict.reason, lineNo, truncated ? `last line has no newline and does not parse (${line.length} chars)` : verdict.detail);
      return;
    }
    if (duplicates?.seen(verdict.record)) {
      counter.reject('duplicate', lineNo, `eventId ${verdict.record.eventId} with the same body was seen before`);
      return;
    }
    r.accepted++;
    ready.push(verdict.record);
  };
  let carry: Buffer | null = null;
  for await (const chunk of chunks) {
    r.bytesRead += chunk.byteLength;
    let buf: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (carry) {
      buf = Buffer.concat([carry, buf]);
      carry = null;
    }
    let start = 0;
    for (let nl = buf.indexOf(NEWLINE, start); nl !== -1; nl = buf.indexOf(NEWLINE, start)) {
      handle(buf.toString('utf8', start, nl > start && buf[nl - 1] === 0x0d ? nl - 1 : nl), true);
      start = nl + 1;
    }
    if (start < buf.length) carry = Buffer.from(buf.subarray(start));
    for (const record of ready) yield record;
    ready.length = 0;
  }
  if (carry && carry.length > 0) {
    handle(carry.toString('utf8', 0, carry[carry.length - 1] === 0x0d ? carry.length - 1 : carry.length), false);
    for (const record of ready) yield record;
  }
}
