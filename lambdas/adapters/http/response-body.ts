/**
 * Response bodies in bounded memory, for every target (HTTP and SageMaker). A body is read as
 * it arrives and never held whole, whatever its size.
 *
 * What is kept of each kind of body: RESPONSE_LIMITS; the limits as the user sees them:
 * docs/outputs.md#responses-what-is-read-what-is-kept.
 *
 * What of the response's text reaches a record (an error message, hence error_summary) is an
 * excerpt of at most `excerptChars` characters, or nothing with `--no-response-excerpts`.
 */
import { cutText, printableText } from '../../core/metrics/error-details';

/**
 * The limits, by kind of body:
 * - an error response (any status but 2xx): its first `errorBodyKeepBytes` are kept to name
 *   the error; the rest is read to the last byte (the request's end time), counted and
 *   discarded;
 * - a non-streamed 2xx JSON answer: scanned, not parsed whole: only the members the record
 *   needs (`usage`, `error`, ...) are kept, each up to `memberKeepBytes`; the structure is
 *   checked on the way (brackets, strings, one value), so a cut-off or non-JSON body is still
 *   told apart;
 * - a stream: one SSE event is buffered at most `sseEventMaxChars`; arrival times are kept for
 *   the first `maxContentChunks` content chunks.
 */
export const RESPONSE_LIMITS = {
  /** Characters of response text in an error message (records and error_summary). */
  excerptChars: 160,
  /** Bytes of an error response's body kept to describe the error; the rest is counted and discarded. */
  errorBodyKeepBytes: 64 * 1024,
  /** Bytes of one kept member (`usage`, `error`) of a 2xx JSON body; a larger one is noted, not kept. */
  memberKeepBytes: 64 * 1024,
  /** Largest SSE event (or unterminated line) buffered: a larger one ends the request as MalformedStream. */
  sseEventMaxChars: 1024 * 1024,
  /** Content-chunk arrival times kept per request (TTFT, inter_chunk_latency); later chunks only extend the latency. */
  maxContentChunks: 131_072,
} as const;

/**
 * Response text as it may appear in a record: printable (control characters, separators and
 * bidirectional marks as one blank: core/metrics/error-details.ts, the rule every record
 * follows), cut to `chars` characters ('' when 0).
 */
export function responseExcerpt(text: string, chars: number = RESPONSE_LIMITS.excerptChars): string {
  if (chars <= 0) return '';
  return cutText(printableText(text), chars);
}

/**
 * `head` and an excerpt of what the response said (`head: excerpt`); with excerpts off (or
 * nothing said), `head` alone, noting that text was left out.
 */
export function withExcerpt(head: string, said: string, excerptChars: number): string {
  const excerpt = responseExcerpt(said, excerptChars);
  if (excerpt) return `${head}: ${excerpt}`;
  return excerptChars <= 0 ? `${head} (response text not kept)` : head;
}

/** A response's media type as a message may name it: `type/subtype` without parameters, or `none` / `other`. */
export function mediaTypeOf(contentType: string | undefined): string {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === '') return 'none';
  return type.length <= 64 && /^[a-z0-9][\w.+-]*\/[a-z0-9][\w.+-]*$/.test(type) ? type : 'other';
}

/**
 * Why a non-streamed answer to a chat request is not one: a chat answer is one JSON object
 * (well formed, nothing after it). Null when it is one. The same rule for HTTP and SageMaker
 * targets: such an answer is a `MalformedResponse`, not a success.
 */
export function notOneJsonObject(scan: JsonScanResult, bytes: number, contentType: string | undefined): string | null {
  if (scan.wellFormed && scan.values === 1 && scan.firstIsObject) return null;
  return `response is not one JSON object (${bytes} bytes, content-type ${mediaTypeOf(contentType)})`;
}

/** A body read chunk by chunk: a Node readable (undici's body, node:http's response). */
export interface ChunkSource {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  destroy(error?: Error): unknown;
  readonly readableEnded?: boolean;
}

/**
 * Hands each chunk of `body` to `onChunk` as it arrives, in the stream's own 'data' event: no
 * promise and no turn of the event loop per chunk, which an async iteration costs (a streamed
 * answer is a chunk per token, thousands a second in a fire invocation). Resolves at the body's
 * end; rejects with its error, or when it closes before its end. `onChunk` returns false to stop
 * reading: the body is destroyed (its connection let go) and the promise resolves.
 */
export function eachChunk(body: ChunkSource, onChunk: (chunk: Buffer) => boolean): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      if (error) reject(error);
      else resolve();
    };
    body.on('data', (chunk) => {
      if (settled) return;
      let more: boolean;
      try {
        more = onChunk(chunk);
      } catch (error) {
        body.destroy();
        return settle(error instanceof Error ? error : new Error(String(error)));
      }
      if (!more) {
        settle(null);
        body.destroy();
      }
    });
    body.on('end', () => settle(null));
    body.on('error', (error) => settle(error));
    body.on('close', () => settle(new Error('the response closed before its end')));
  });
}

/** What a body's reading kept: its first bytes, and how many there were in all. */
export interface CappedBody {
  kept: Buffer;
  totalBytes: number;
}

/** Reads a body to its end, keeping its first `keepBytes` (copied) and counting the rest. */
export async function readCapped(
  body: AsyncIterable<Uint8Array>,
  keepBytes: number = RESPONSE_LIMITS.errorBodyKeepBytes,
): Promise<CappedBody> {
  const parts: Buffer[] = [];
  let kept = 0;
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (kept < keepBytes) {
      const take = Math.min(chunk.byteLength, keepBytes - kept);
      parts.push(Buffer.from(chunk.subarray(0, take)));
      kept += take;
    }
  }
  return { kept: Buffer.concat(parts, kept), totalBytes: total };
}

/**
 * The readable part of an error body: the message of a JSON error (`error.message`, `error`,
 * `message`, `detail`) when the whole body was kept and is JSON, else the kept text.
 */
export function errorBodyText(body: CappedBody): string {
  const text = body.kept.toString('utf8');
  if (body.totalBytes === body.kept.length) {
    try {
      const parsed = JSON.parse(text) as unknown;
      const message = errorMessageOf(parsed);
      if (message !== null) return message;
    } catch {
      // Not JSON: the text as it is.
    }
  }
  return text;
}

/** The message of an error object or of a body carrying one; null when there is none. */
export function errorMessageOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (!value || typeof value !== 'object') return null;
  const v = value as { error?: unknown; message?: unknown; detail?: unknown };
  if (v.error !== undefined && v.error !== null && v.error !== false) {
    const inner = errorMessageOf(v.error);
    if (inner !== null) return inner;
  }
  if (typeof v.message === 'string') return v.message;
  if (typeof v.detail === 'string') return v.detail;
  return null;
}

/** Stands in for a selected member larger than the scanner keeps. `message` lets it read as an error object. */
export class OversizedValue {
  readonly message: string;
  constructor(readonly minBytes: number) {
    this.message = `(more than ${minBytes} bytes, not kept)`;
  }
}

export type JsonPath = readonly (string | number)[];

export interface JsonScanResult {
  /** Top-level values seen (JSON lines and concatenated values count one each). */
  values: number;
  /** The first top-level value is an object. */
  firstIsObject: boolean;
  /** The structure holds: brackets match, strings and values are closed, no stray character. */
  wellFormed: boolean;
  /** Per top-level value, a skeleton holding only the selected members at their paths. */
  skeletons: unknown[];
}

interface Frame {
  array: boolean;
  /** Current member key (objects) or element index (arrays); null: not tracked (too deep) or not read yet. */
  key: string | number | null;
  /** What may come next: V value, K key, C colon, E end or comma (after a member/element), F first (end or key/value). */
  expect: 'V' | 'K' | 'C' | 'E' | 'F';
}

const WS = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) WS[c] = 1;
/** Characters of numbers and literals (true, false, null): their exact grammar is not checked. */
const SCALAR = new Uint8Array(256);
for (const c of '0123456789+-.eEtrufalsn') SCALAR[c.charCodeAt(0)] = 1;

/**
 * A streaming JSON scanner over bytes that keeps only selected members. Structural bytes are
 * ASCII and never occur inside a UTF-8 multibyte sequence, so it works on raw bytes; strings
 * are skipped with a native search for the closing quote. Paths are tracked `maxDepth` deep.
 */
export class JsonMemberScanner {
  private readonly stack: Frame[] = [];
  private inString = false;
  private stringIsKey = false;
  /** The byte before the current position was an unescaped backslash (inside a string). */
  private escaped = false;
  private inScalar = false;
  private keyParts: Buffer[] = [];
  private keyBytes = 0;
  private failed = false;
  private started = false;
  private values = 0;
  private firstIsObject = false;
  private readonly skeletons: unknown[] = [];
  /** The member being kept: its path, the depth its value started at, its bytes so far. */
  private capture: {
    path: (string | number)[];
    depth: number;
    parts: Buffer[];
    bytes: number;
    oversized: boolean;
    start: number;
  } | null = null;

  constructor(
    private readonly select: (path: JsonPath) => boolean,
    private readonly maxDepth = 3,
    private readonly keepBytes: number = RESPONSE_LIMITS.memberKeepBytes,
  ) {}

  feed(chunk: Uint8Array): void {
    if (this.failed) return;
    let i = 0;
    const n = chunk.length;
    if (!this.started) {
      if (n >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
      this.started = true;
    }
    if (this.capture) this.capture.start = 0;
    while (i < n) {
      if (this.inString) {
        const q = this.closingQuote(chunk, i);
        if (q < 0) {
          if (this.stringIsKey) this.keepKey(chunk, i, n);
          i = n;
          break;
        }
        if (this.stringIsKey) this.keepKey(chunk, i, q);
        this.inString = false;
        this.escaped = false;
        i = q + 1;
        if (this.stringIsKey) this.endKey();
        else this.endValue(chunk, i);
        continue;
      }
      const c = chunk[i] as number;
      if (this.inScalar) {
        if (SCALAR[c]) {
          i++;
          continue;
        }
        this.inScalar = false;
        this.endValue(chunk, i);
        if (this.failed) return;
        continue;
      }
      if (WS[c]) {
        i++;
        continue;
      }
      i = this.structural(chunk, i, c);
      if (i < 0) return;
    }
    if (this.capture && !this.capture.oversized) this.keepCapture(chunk, this.capture.start, n);
  }

  end(): JsonScanResult {
    if (!this.failed && this.inScalar) {
      this.inScalar = false;
      this.endValue(new Uint8Array(0), 0);
    }
    const wellFormed = !this.failed && !this.inString && this.stack.length === 0 && this.values > 0;
    return { values: this.values, firstIsObject: this.firstIsObject, wellFormed, skeletons: this.skeletons };
  }

  /**
   * The structural byte `c` at `i` (outside strings and scalars, not whitespace): the index
   * to go on from, or -1 when it breaks the structure (the scan has failed).
   */
  private structural(chunk: Uint8Array, i: number, c: number): number {
    const top = this.stack[this.stack.length - 1];
    const expect = top ? top.expect : 'V';
    if (c === 0x22 /* " */) {
      if (top && !top.array && (expect === 'K' || expect === 'F')) {
        this.inString = true;
        this.stringIsKey = true;
        this.keyParts = [];
        this.keyBytes = 0;
        return i + 1;
      }
      if (expect !== 'V' && !(top?.array && expect === 'F')) return this.failAt();
      this.startValue(chunk, i);
      this.inString = true;
      this.stringIsKey = false;
      return i + 1;
    }
    if (c === 0x3a /* : */) {
      if (!top || top.array || expect !== 'C') return this.failAt();
      top.expect = 'V';
      return i + 1;
    }
    if (c === 0x2c /* , */) {
      if (!top || expect !== 'E') return this.failAt();
      if (top.array) {
        top.key = typeof top.key === 'number' ? top.key + 1 : null;
        top.expect = 'V';
      } else {
        top.key = null;
        top.expect = 'K';
      }
      return i + 1;
    }
    if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (!top || top.array !== (c === 0x5d) || (expect !== 'E' && expect !== 'F')) return this.failAt();
      this.stack.pop();
      this.endValue(chunk, i + 1);
      return i + 1;
    }
    const valueAllowed = expect === 'V' || (top?.array === true && expect === 'F');
    if (!valueAllowed) return this.failAt();
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      this.startValue(chunk, i);
      this.stack.push({
        array: c === 0x5b,
        key: c === 0x5b && this.stack.length < this.maxDepth ? 0 : null,
        expect: 'F',
      });
      return i + 1;
    }
    if (SCALAR[c]) {
      this.startValue(chunk, i);
      this.inScalar = true;
      return i + 1;
    }
    return this.failAt();
  }

  /** Fails the scan; -1, the index `structural` gives for it. */
  private failAt(): number {
    this.fail();
    return -1;
  }

  private fail(): void {
    this.failed = true;
    this.capture = null;
  }

  /** Index of the unescaped `"` closing the current string from `from`, or -1 (escape state carried). */
  private closingQuote(chunk: Uint8Array, from: number): number {
    let i = from;
    for (;;) {
      const q = chunk.indexOf(0x22, i);
      const stop = q < 0 ? chunk.length : q;
      // Backslashes right before `stop`, back to `from`; a pending escape extends the run.
      let k = stop - 1;
      while (k >= from && chunk[k] === 0x5c) k--;
      let run = stop - 1 - k;
      if (k < from && this.escaped) run++;
      if (q < 0) {
        if (stop > from) this.escaped = run % 2 === 1;
        return -1;
      }
      if (run % 2 === 0) return q;
      i = q + 1;
      if (i >= chunk.length) {
        this.escaped = false;
        return -1;
      }
      // The escaped quote is a literal: what follows starts a fresh run.
      from = i;
      this.escaped = false;
    }
  }

  private keepKey(chunk: Uint8Array, from: number, to: number): void {
    if (this.stack.length > this.maxDepth || this.keyBytes > 1024) return;
    this.keyParts.push(Buffer.from(chunk.subarray(from, to)));
    this.keyBytes += to - from;
  }

  private endKey(): void {
    const top = this.stack[this.stack.length - 1] as Frame;
    top.expect = 'C';
    if (this.stack.length > this.maxDepth || this.keyBytes > 1024) {
      top.key = null;
      return;
    }
    const raw = Buffer.concat(this.keyParts, this.keyBytes).toString('utf8');
    let key = raw;
    if (raw.includes('\\')) {
      try {
        key = JSON.parse(`"${raw}"`) as string;
      } catch {
        key = raw;
      }
    }
    top.key = key;
  }

  private path(): (string | number)[] | null {
    if (this.stack.length > this.maxDepth) return null;
    const path: (string | number)[] = [];
    for (const frame of this.stack) {
      if (frame.key === null) return null;
      path.push(frame.key);
    }
    return path;
  }

  private startValue(chunk: Uint8Array, at: number): void {
    if (this.stack.length === 0) {
      if (this.values === 0) this.firstIsObject = chunk[at] === 0x7b;
      this.skeletons.push(undefined);
    }
    if (this.capture) return;
    const path = this.path();
    if (path !== null && path.length > 0 && this.select(path)) {
      this.capture = { path, depth: this.stack.length, parts: [], bytes: 0, oversized: false, start: at };
    }
  }

  /** A value ended just before `at` (the byte after it). */
  private endValue(chunk: Uint8Array, at: number): void {
    const capture = this.capture;
    if (capture && this.stack.length === capture.depth) {
      if (!capture.oversized) this.keepCapture(chunk, capture.start, at);
      this.capture = null;
      let value: unknown;
      if (capture.oversized) value = new OversizedValue(this.keepBytes);
      else {
        try {
          value = JSON.parse(Buffer.concat(capture.parts, capture.bytes).toString('utf8'));
        } catch {
          value = undefined;
        }
      }
      if (value !== undefined) this.place(capture.path, value);
    }
    const top = this.stack[this.stack.length - 1];
    if (top) top.expect = 'E';
    else this.values++;
  }

  private keepCapture(chunk: Uint8Array, from: number, to: number): void {
    const capture = this.capture;
    if (!capture || capture.oversized || to <= from) return;
    capture.bytes += to - from;
    if (capture.bytes > this.keepBytes) {
      capture.oversized = true;
      capture.parts = [];
      return;
    }
    capture.parts.push(Buffer.from(chunk.subarray(from, to)));
  }

  private place(path: (string | number)[], value: unknown): void {
    const index = this.skeletons.length - 1;
    const first = path[0] as string | number;
    if (this.skeletons[index] === undefined) this.skeletons[index] = typeof first === 'number' ? [] : {};
    let node = this.skeletons[index] as Record<string | number, unknown>;
    for (let i = 0; i < path.length - 1; i++) {
      const key = path[i] as string | number;
      const next = path[i + 1] as string | number;
      if (node[key] === undefined || node[key] === null || typeof node[key] !== 'object')
        node[key] = typeof next === 'number' ? [] : {};
      node = node[key] as Record<string | number, unknown>;
    }
    node[path[path.length - 1] as string | number] = value;
  }
}

/** Members of a chat/LLM answer that a record needs; `[i, ...]` for answers that are arrays (`[{"generated_text": ...}]`). */
export function selectAnswerMembers(path: JsonPath): boolean {
  const rest = typeof path[0] === 'number' ? path.slice(1) : path;
  if (rest.length === 1)
    return (
      rest[0] === 'usage' || rest[0] === 'error' || rest[0] === 'object' || (rest[0] === 'message' && path.length === 1)
    );
  return rest.length === 2 && rest[0] === 'details' && rest[1] === 'generated_tokens';
}
