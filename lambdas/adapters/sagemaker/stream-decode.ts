/**
 * Decodes what a SageMaker model streams back (`InvokeEndpointWithResponseStream`): the bytes
 * of its `PayloadPart`s joined are whatever the container wrote, and SageMaker splits them
 * into parts without regard for lines or events. So the decoder buffers across parts and
 * reports, per part, how many content-bearing events that part completed. Pure: no I/O, no
 * clock. How the format is sniffed, what counts as content, usage and an in-stream error:
 * docs/sagemaker-targets.md#what-the-stream-decoder-reads.
 */
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { plausibleTokenCount } from '../../core/metrics/usage';
import type { TokenUsage } from '../../core/types';

export type StreamFormat = 'sse' | 'json' | 'text';

export interface StreamDecoder {
  /** Feeds one part's bytes; returns the number of content-bearing events they completed. */
  push(bytes: Uint8Array): number;
  /** The stream ended: flushes a trailing event without its terminator; returns its content count. */
  end(): number;
  /** Usage from the last event that reported it; null when none did. */
  readonly usage: TokenUsage | null;
  /** The first in-stream error message (never a body excerpt longer than 300 characters). */
  readonly error: string | null;
  /** True once an end marker was seen: `[DONE]`, a `finish_reason`, TGI `details`/`generated_text`. */
  readonly finished: boolean;
  /** The sniffed format; null until the first non-blank byte. */
  readonly format: StreamFormat | null;
  /** Events that could not be decoded (a JSON value that does not parse), ignored. */
  readonly malformed: number;
}

const MAX_ERROR_EXCERPT = 300;
const SSE_FIELDS = ['data:', 'event:', 'id:', 'retry:', ':'];
/** Bound on one buffered value (a JSON object or SSE event that never ends): 16 MiB of text. */
const MAX_BUFFER_CHARS = 16 * 1024 * 1024;

interface Chunk {
  choices?: unknown;
  usage?: unknown;
  error?: unknown;
  token?: unknown;
  generated_text?: unknown;
  details?: unknown;
  text?: unknown;
  outputs?: unknown;
}

const nonEmptyString = (v: unknown): boolean => typeof v === 'string' && v.length > 0;
/** A token count when plausible (whole, >= 0, <= 10,000,000: core/metrics/usage.ts), else null. */
const count = plausibleTokenCount;

/** Content, usage, end marker and error of one decoded JSON event (exported for the non-streaming path). */
export function inspectChunk(value: unknown): {
  content: boolean;
  usage: TokenUsage | null;
  finished: boolean;
  error: string | null;
} {
  if (Array.isArray(value)) {
    // A JSON array event: e.g. `[{"generated_text": ...}]`. Merge its elements.
    let content = false;
    let usage: TokenUsage | null = null;
    let finished = false;
    let error: string | null = null;
    for (const item of value) {
      const r = inspectChunk(item);
      content ||= r.content;
      usage = r.usage ?? usage;
      finished ||= r.finished;
      error ??= r.error;
    }
    return { content, usage, finished, error };
  }
  if (typeof value === 'string') return { content: value.length > 0, usage: null, finished: false, error: null };
  if (typeof value !== 'object' || value === null) return { content: false, usage: null, finished: false, error: null };
  const chunk = value as Chunk;
  if (chunk.error !== undefined && chunk.error !== null && chunk.error !== false) {
    const raw = chunk.error;
    const message =
      typeof raw === 'string'
        ? raw
        : typeof raw === 'object' && 'message' in raw
          ? String((raw as { message: unknown }).message)
          : JSON.stringify(raw);
    return { content: false, usage: null, finished: false, error: message.slice(0, MAX_ERROR_EXCERPT) };
  }
  let content = false;
  let finished = false;
  if (Array.isArray(chunk.choices)) {
    for (const choice of chunk.choices as {
      delta?: Record<string, unknown>;
      text?: unknown;
      finish_reason?: unknown;
    }[]) {
      if (!choice || typeof choice !== 'object') continue;
      const delta = choice.delta;
      if (delta && typeof delta === 'object') {
        if (nonEmptyString(delta.content) || nonEmptyString(delta.reasoning_content) || nonEmptyString(delta.reasoning))
          content = true;
        if (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0) content = true;
      }
      if (nonEmptyString(choice.text)) content = true;
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) finished = true;
    }
  }
  const token = chunk.token as { text?: unknown; special?: unknown } | null | undefined;
  if (token && typeof token === 'object') {
    if (nonEmptyString(token.text) && token.special !== true) content = true;
  } else if (nonEmptyString(chunk.generated_text)) {
    content = true;
  }
  if (nonEmptyString(chunk.text)) content = true;
  if (Array.isArray(chunk.outputs) && chunk.outputs.some(nonEmptyString)) content = true;

  let usage: TokenUsage | null = null;
  const u = chunk.usage as { prompt_tokens?: unknown; completion_tokens?: unknown } | null | undefined;
  if (u && typeof u === 'object' && (count(u.prompt_tokens) !== null || count(u.completion_tokens) !== null)) {
    usage = { promptTokens: count(u.prompt_tokens), completionTokens: count(u.completion_tokens) };
  }
  const details = chunk.details as { generated_tokens?: unknown } | null | undefined;
  if (details && typeof details === 'object') {
    finished = true;
    const generated = count(details.generated_tokens);
    if (generated !== null && usage === null) usage = { promptTokens: null, completionTokens: generated };
  }
  if (token && chunk.generated_text !== undefined && chunk.generated_text !== null) finished = true;
  return { content, usage, finished, error: null };
}

/**
 * Splits concatenated JSON values (newline-delimited or not, pretty-printed or not) by
 * bracket depth, string-aware. Non-JSON text between values is reported line by line.
 */
class JsonValueSplitter {
  private buf = '';
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Text outside any value, up to the next newline. */
  private junk = '';

  constructor(
    private readonly onValue: (text: string) => void,
    private readonly onJunk: (line: string) => void,
  ) {}

  feed(text: string): void {
    let start = this.depth > 0 ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.depth === 0) {
        if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
          if (this.junk.trim()) this.onJunk(this.junk);
          this.junk = '';
          this.depth = 1;
          this.inString = false;
          this.escaped = false;
          start = i;
        } else if (c === 0x0a /* \n */) {
          if (this.junk.trim()) this.onJunk(this.junk);
          this.junk = '';
        } else {
          this.junk += text[i];
        }
        continue;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c /* \ */) this.escaped = true;
        else if (c === 0x22 /* " */) this.inString = false;
        continue;
      }
      if (c === 0x22) this.inString = true;
      else if (c === 0x7b || c === 0x5b) this.depth++;
      else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
        this.depth--;
        if (this.depth === 0) {
          const value = this.buf + text.slice(start, i + 1);
          this.buf = '';
          start = -1;
          this.onValue(value);
        }
      }
    }
    if (this.depth > 0 && start >= 0) {
      this.buf += text.slice(start);
      if (this.buf.length > MAX_BUFFER_CHARS)
        throw new RangeError(`a streamed JSON value exceeds ${MAX_BUFFER_CHARS} characters`);
    }
  }

  /** The stream ended: an unterminated value is malformed; trailing text is one junk line. */
  end(): boolean {
    const incomplete = this.depth > 0;
    if (this.junk.trim()) this.onJunk(this.junk);
    this.junk = '';
    this.buf = '';
    this.depth = 0;
    return incomplete;
  }
}

export function createStreamDecoder(): StreamDecoder {
  return new Decoder();
}

/** Decides the format from the first non-blank characters; null while they are ambiguous. */
function sniff(text: string, final: boolean): StreamFormat | null {
  const head = text.replace(/^[\uFEFF\s]+/, '');
  if (head.length === 0) return final ? 'text' : null;
  if (head[0] === '{' || head[0] === '[') return 'json';
  if (SSE_FIELDS.some((field) => head.startsWith(field))) return 'sse';
  if (!final && SSE_FIELDS.some((field) => field.startsWith(head))) return null;
  return 'text';
}

class Decoder implements StreamDecoder {
  private readonly utf8 = new TextDecoder();
  private sniffedFormat: StreamFormat | null = null;
  private sniffed = '';
  private lastUsage: TokenUsage | null = null;
  private firstError: string | null = null;
  private sawEnd = false;
  private malformedCount = 0;
  private contentEvents = 0;
  private sse: EventSourceParser | null = null;
  private json: JsonValueSplitter | null = null;

  push(bytes: Uint8Array): number {
    const text = this.utf8.decode(bytes, { stream: true });
    if (this.sniffedFormat === null) {
      this.sniffed += text;
      const f = sniff(this.sniffed, false);
      if (f === null) return 0;
      this.start(f);
      const pending = this.sniffed;
      this.sniffed = '';
      this.feedText(pending);
    } else this.feedText(text);
    return this.take();
  }

  end(): number {
    const rest = this.utf8.decode();
    if (this.sniffedFormat === null) {
      this.sniffed += rest;
      this.start(sniff(this.sniffed, true)!);
      const pending = this.sniffed;
      this.sniffed = '';
      if (pending.trim()) this.feedText(pending);
    } else if (rest) this.feedText(rest);
    // A last SSE event without its blank line still counts; so does a last JSON line.
    if (this.sniffedFormat === 'sse') this.sse!.feed('\n\n');
    if (this.sniffedFormat === 'json' && this.json!.end()) this.malformedCount++;
    return this.take();
  }

  get usage(): TokenUsage | null {
    return this.lastUsage;
  }

  get error(): string | null {
    return this.firstError;
  }

  get finished(): boolean {
    return this.sawEnd;
  }

  get format(): StreamFormat | null {
    return this.sniffedFormat;
  }

  get malformed(): number {
    return this.malformedCount;
  }

  private start(f: StreamFormat): void {
    this.sniffedFormat = f;
    if (f === 'sse') {
      this.sse = createParser({
        maxBufferSize: MAX_BUFFER_CHARS,
        onEvent: (event: EventSourceMessage) => this.onSseEvent(event.data),
      });
    } else if (f === 'json') {
      this.json = new JsonValueSplitter(
        (text) => this.onJsonText(text),
        (text) => this.onText(text),
      );
    }
  }

  private onSseEvent(data: string): void {
    if (data === '[DONE]') {
      this.sawEnd = true;
      return;
    }
    const trimmed = data.trimStart();
    if (trimmed.startsWith('{') || trimmed.startsWith('[')) this.onJsonText(data);
    else this.onText(data);
  }

  private onJsonText(text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.malformedCount++;
      return;
    }
    this.onJsonEvent(value);
  }

  private onJsonEvent(value: unknown): void {
    if (this.firstError !== null) return;
    const r = inspectChunk(value);
    if (r.error !== null) {
      this.firstError = r.error;
      return;
    }
    if (r.content) this.contentEvents++;
    if (r.usage) this.lastUsage = r.usage;
    if (r.finished) this.sawEnd = true;
  }

  private onText(text: string): void {
    if (this.firstError === null && text.trim().length > 0) this.contentEvents++;
  }

  private feedText(text: string): void {
    if (this.sniffedFormat === 'sse') this.sse!.feed(text);
    else if (this.sniffedFormat === 'json') this.json!.feed(text);
    else this.onText(text);
  }

  private take(): number {
    const n = this.contentEvents;
    this.contentEvents = 0;
    return n;
  }
}
