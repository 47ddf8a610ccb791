/**
 * One capture file's bytes in, its `CaptureRecord`s out, every line accounted for in the
 * ingest report (ingest-report.ts): lines are split here, each judged by line.ts, copies of a
 * record counted by duplicates.ts. A bad line is counted under one reason and never stops the
 * run.
 */
import type { DuplicateFilter } from './duplicates';
import type { IngestFileCounter, IngestReportBuilder } from './ingest-report';
import { parseCaptureLine, type LineOptions } from './line';
import type { CaptureRecord, IngestFileReport } from '../types';

/**
 * A line is held whole to be parsed. SageMaker payloads are at most tens of MB (base64 adds a
 * third), so a longer line is corruption (a file without newlines); past ~512 MB V8 cannot
 * even make it a string. The stream counts a longer line's bytes as they pass and never
 * holds more than this of it, whatever its size. The CLI lowers it with
 * `CAPTURE_REPLAY_MAX_LINE_BYTES` (between MIN_LINE_BYTES_LIMIT and this).
 */
export const MAX_LINE_BYTES = 128 * 1024 * 1024;
export const MIN_LINE_BYTES_LIMIT = 1024;

/** UTF-8 bytes of a byte-order mark. */
const BOM_BYTES = [0xef, 0xbb, 0xbf] as const;

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

/**
 * The duplicate rule (duplicates.ts) on a parsed line: false when it is a copy of a record
 * kept (counted here); true when it is kept, after counting the copy it replaces, if any.
 */
function admitted(
  duplicates: DuplicateFilter,
  record: CaptureRecord,
  report: IngestReportBuilder,
  counter: IngestFileCounter,
  lineNo: number,
): boolean {
  const id = record.eventId.slice(0, 80);
  const admission = duplicates.admit(record);
  if (admission.duplicate) {
    counter.reject('duplicate', lineNo, `eventId ${id} with the same body was seen before`);
    return false;
  }
  const { replaced } = admission;
  if (replaced) {
    const owner = report.fileCounter(replaced.source.file);
    if (!owner)
      throw new Error(`duplicate filter and ingest report disagree: ${replaced.source.file} is not in the report`);
    owner.withdraw(
      replaced.source.line,
      replaced.contentTypeInferred,
      'duplicate',
      `eventId ${id} with the same body has an earlier copy (by inferenceTime) at ` +
        `${record.source.file}:${record.source.line}, replayed instead`,
    );
  }
  return true;
}

export interface StreamOptions extends LineOptions {
  /** Lowers the line cap (MAX_LINE_BYTES); a longer line is counted as `line_too_long`. */
  maxLineBytes?: number;
}

/**
 * The lines of one file entered in the report: each split line judged and counted, the
 * records kept collected in `ready` for the stream to yield. Lines are split in one loop per
 * chunk (`push`), not a generator per line: that hop cost more than the split.
 */
class FileLines {
  readonly ready: CaptureRecord[] = [];
  private readonly r: IngestFileReport;
  private lineNo = 0;
  // The unfinished line: copied parts (a source may reuse its chunk buffers), or only a byte
  // count once the line is known to be too long.
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private overlong = false;
  private pendingStart = 0; // file offset of the unfinished line's first byte

  constructor(
    private readonly counter: IngestFileCounter,
    private readonly file: string,
    private readonly report: IngestReportBuilder,
    private readonly duplicates: DuplicateFilter | undefined,
    private readonly maxLineBytes: number,
    private readonly lineOptions: LineOptions,
  ) {
    this.r = counter.report;
  }

  /** The next chunk of the file: its complete lines judged, the rest carried over. */
  push(buf: Buffer): void {
    const chunkBase = this.r.bytesRead;
    this.r.bytesRead += buf.length;
    let start = 0;
    for (let nl = buf.indexOf(LF); nl !== -1; nl = buf.indexOf(LF, start)) {
      const length = this.pendingBytes + nl - start;
      if (this.overlong || length > this.maxLineBytes) this.tooLong(length);
      else if (this.pendingBytes > 0)
        this.line(Buffer.concat([...this.pending, buf.subarray(start, nl)]), this.pendingStart, 0, length, true);
      else this.line(buf, chunkBase, start, nl, true);
      this.pending = [];
      this.pendingBytes = 0;
      this.overlong = false;
      start = nl + 1;
    }
    if (start < buf.length) {
      if (this.pendingBytes === 0) this.pendingStart = chunkBase + start;
      this.pendingBytes += buf.length - start;
      if (this.overlong || this.pendingBytes > this.maxLineBytes) {
        this.overlong = true;
        this.pending = [];
      } else this.pending.push(Buffer.from(buf.subarray(start)));
    }
  }

  /** A file of one byte: that byte, as the unfinished last line. */
  holdOnly(head: Buffer): void {
    this.r.bytesRead = head.length;
    this.pending = [head];
    this.pendingBytes = head.length;
    this.pendingStart = 0;
  }

  /** The end of the file: its last line, when it has no newline. */
  end(): void {
    if (this.overlong) this.tooLong(this.pendingBytes);
    else if (this.pendingBytes > 0)
      this.line(Buffer.concat(this.pending), this.pendingStart, 0, this.pendingBytes, false);
  }

  // `base` is the file offset of buf[0]: spans are file offsets.
  private line(buf: Buffer, base: number, start: number, end: number, complete: boolean): void {
    const c = this.counter;
    const rep = this.r;
    const lineNo = ++this.lineNo;
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
    const verdict = parseCaptureLine(line, { file: this.file, line: lineNo }, this.lineOptions);
    if (!verdict.ok) {
      // A last line without newline that is not even JSON was cut off mid-write; a complete
      // JSON value there only lost its newline and keeps its own verdict.
      if (!complete && verdict.reason === 'invalid_json') {
        c.reject('truncated_line', lineNo, `last line has no newline and is not complete JSON (${line.length} chars)`);
      } else c.reject(verdict.reason, lineNo, verdict.detail);
      return;
    }
    const { record } = verdict;
    if (this.duplicates && !admitted(this.duplicates, record, this.report, c, lineNo)) return;
    c.accept(record);
    record.span = { start: base + start, end: base + end };
    this.ready.push(record);
  }

  private tooLong(bytes: number): void {
    const lineNo = ++this.lineNo;
    this.r.linesRead++;
    this.counter.reject('line_too_long', lineNo, `line of ${bytes} bytes exceeds the ${this.maxLineBytes}-byte limit`);
  }
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
  const enter = (): FileLines =>
    new FileLines(report.startFile(file), file, report, duplicates, maxLineBytes, lineOptions);
  let lines: FileLines | null = null;
  // Until the file is entered: its first byte, when a chunk of one byte left it undecided.
  let head: Buffer | null = null;
  for await (const chunk of chunks) {
    let buf = asBuffer(chunk);
    if (!lines) {
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
      lines = enter();
    }
    lines.push(buf);
    for (const record of lines.ready) yield record;
    lines.ready.length = 0;
  }
  if (!lines) {
    // Empty, or a single byte.
    lines = enter();
    if (head) lines.holdOnly(head);
  }
  lines.end();
  for (const record of lines.ready) yield record;
}
