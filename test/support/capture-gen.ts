/**
 * A deterministic generator of realistic SageMaker Data Capture JSON Lines, for scale tests
 * and benchmarks: chat-completion requests (`model`, `messages`, `max_tokens`, ...) of about
 * a configured size, each with an OpenAI-style answer carrying `usage`, encoding JSON,
 * `inferenceTime` in whole seconds as SageMaker writes it (`2026-04-29T00:03:18Z`), unique
 * UUID-shaped eventIds, `eventVersion` "0".
 *
 * Timing: second s of the capture holds floor((s+1)*rate) - floor(s*rate) records, so a file
 * of `durationSeconds` at `ratePerSecond` has exactly floor(rate * duration) records, spread
 * evenly (fractional rates too); `arrivals: 'poisson'` draws each second's count instead.
 *
 * Streaming: lines come from a generator and chunks are cut from it, so a 1 GB file is
 * written in memory bounded by one chunk. The same options and seed always give the same
 * bytes.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { seededRandom } from '../../lambdas/core/random';

export interface CaptureGenOptions {
  /** Requests per second of capture time (> 0). */
  ratePerSecond: number;
  /** Capture length in seconds (> 0); the last second may hold fewer records at fractional rates. */
  durationSeconds: number;
  /** First inferenceTime (epoch ms or Date); floored to a whole second. */
  startTime: number | Date;
  /** PRNG seed. Default 1. */
  seed?: number;
  /** Approximate size of each request body in bytes (JSON text). Default 1300. */
  bodyBytes?: number;
  /** `even` (default): exactly the rate each second; `poisson`: a Poisson draw per second. */
  arrivals?: 'even' | 'poisson';
  /** Model name in the bodies. Default `llama-3-8b-instruct`. */
  model?: string;
  /** Fraction of records with a caller-set inferenceId. Default 0.2. */
  inferenceIdFraction?: number;
  /** Stop once this many bytes have been produced (the line crossing it is the last). */
  maxBytes?: number;
}

export interface CaptureStats {
  records: number;
  bytes: number;
  /** inferenceTime of the first and last records (epoch ms), null when empty. */
  firstTimeMs: number | null;
  lastTimeMs: number | null;
}

const WORDS = (
  'the a of to and in is that for it on with as was be by this are or at from an not have but can all your what which ' +
  'please summarise explain compare list write translate review refactor describe draft outline answer question customer ' +
  'order invoice contract clause supplier deadline shipment account password reset latency throughput model endpoint ' +
  'request response cluster region bucket queue function memory timeout retry error warning status report quarterly revenue'
).split(' ');

const SYSTEM_PROMPTS = [
  'You are a helpful assistant. Answer concisely and cite the relevant policy section when one applies.',
  'You are a customer support agent for an online store. Be polite, precise and never invent order details.',
  'You are a senior software engineer reviewing code. Point out bugs first, then style issues, briefly.',
  'You are a translation engine. Translate the user text faithfully and keep the formatting intact.',
];

const MB = 1024 * 1024;

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}

/** Poisson draw (Knuth for small means, a rounded normal approximation above 50). */
function poisson(mean: number, random: () => number): number {
  if (mean > 50) {
    const u = Math.max(random(), 1e-12);
    const v = random();
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    return Math.max(0, Math.round(mean + z * Math.sqrt(mean)));
  }
  const limit = Math.exp(-mean);
  let k = 0;
  let p = random();
  while (p > limit) {
    k++;
    p *= random();
  }
  return k;
}

const hex = (random: () => number, digits: number) => {
  let out = '';
  for (let i = 0; i < digits; i++) out += Math.floor(random() * 16).toString(16);
  return out;
};

/** UUID v4 shape; the last group is the record index, so ids are unique by construction. */
function eventId(random: () => number, index: number): string {
  return (
    `${hex(random, 8)}-${hex(random, 4)}-4${hex(random, 3)}-` +
    `${'89ab'[Math.floor(random() * 4)]}${hex(random, 3)}-${index.toString(16).padStart(12, '0')}`
  );
}

/** `2026-04-29T00:03:18Z`: whole seconds, as SageMaker writes inferenceTime. */
export function wholeSecondIso(epochMs: number): string {
  return new Date(Math.floor(epochMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The number of records in each second of the capture, in order. */
export function* secondCounts(
  o: Pick<CaptureGenOptions, 'ratePerSecond' | 'durationSeconds' | 'arrivals'>,
  random: () => number,
): Generator<number> {
  const seconds = Math.ceil(o.durationSeconds);
  const total = Math.floor(o.ratePerSecond * o.durationSeconds);
  for (let s = 0; s < seconds; s++) {
    if (o.arrivals === 'poisson') {
      yield poisson(o.ratePerSecond * Math.min(1, o.durationSeconds - s), random);
    } else {
      yield Math.min(total, Math.floor((s + 1) * o.ratePerSecond)) - Math.min(total, Math.floor(s * o.ratePerSecond));
    }
  }
}

/**
 * The capture lines, each ending in `\n`. Each record's content is drawn from the PRNG, so
 * the whole stream is a pure function of the options.
 */
export function* captureLines(options: CaptureGenOptions): Generator<string> {
  positive('ratePerSecond', options.ratePerSecond);
  positive('durationSeconds', options.durationSeconds);
  const bodyBytes = positive('bodyBytes', options.bodyBytes ?? 1300);
  const start =
    Math.floor((options.startTime instanceof Date ? options.startTime.getTime() : options.startTime) / 1000) * 1000;
  if (!Number.isFinite(start)) throw new RangeError('startTime must be a valid time');
  const random = seededRandom(options.seed ?? 1);
  // Arrival counts on their own stream, so changing a body never moves the timing.
  const arrivalRandom = seededRandom(((options.seed ?? 1) ^ 0x9e3779b9) >>> 0);
  const model = options.model ?? 'llama-3-8b-instruct';
  const idFraction = options.inferenceIdFraction ?? 0.2;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const text = (targetChars: number) => {
    let out = pick(WORDS);
    while (out.length < targetChars) out += ' ' + pick(WORDS);
    return out.charAt(0).toUpperCase() + out.slice(1) + '.';
  };

  let index = 0;
  let bytes = 0;
  let second = 0;
  for (const count of secondCounts(options, arrivalRandom)) {
    const inferenceTime = wholeSecondIso(start + second * 1000);
    second++;
    for (let k = 0; k < count; k++) {
      const system = pick(SYSTEM_PROMPTS);
      const turns = random() < 0.3 ? 3 : 1;
      // Size the user text so the serialized body lands near bodyBytes (+-10 %).
      const fixed = 160 + system.length + (turns > 1 ? 2 * 60 : 0);
      const userChars = Math.max(20, Math.round((bodyBytes - fixed) * (0.9 + 0.2 * random())));
      const messages: { role: string; content: string }[] = [{ role: 'system', content: system }];
      if (turns > 1) {
        messages.push({ role: 'user', content: text(40) });
        messages.push({ role: 'assistant', content: text(40) });
      }
      messages.push({ role: 'user', content: text(userChars) });
      const maxTokens = pick([128, 256, 512, 1024]);
      const body = JSON.stringify({
        model,
        messages,
        max_tokens: maxTokens,
        temperature: Math.round(random() * 10) / 10,
        top_p: 0.95,
      });
      const answer = text(40 + Math.floor(random() * 400));
      const promptTokens = Math.round(body.length / 4);
      const completionTokens = Math.min(maxTokens, Math.round(answer.length / 4));
      const output = JSON.stringify({
        id: `chatcmpl-${index.toString(36)}`,
        object: 'chat.completion',
        created: Math.floor(start / 1000) + second - 1,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          total_tokens: promptTokens + completionTokens,
        },
      });
      const line =
        JSON.stringify({
          captureData: {
            endpointInput: { observedContentType: 'application/json', mode: 'INPUT', data: body, encoding: 'JSON' },
            endpointOutput: { observedContentType: 'application/json', mode: 'OUTPUT', data: output, encoding: 'JSON' },
          },
          eventMetadata: {
            eventId: eventId(random, index),
            ...(random() < idFraction ? { inferenceId: `inf-${index.toString(36)}` } : {}),
            inferenceTime,
          },
          eventVersion: '0',
        }) + '\n';
      index++;
      yield line;
      bytes += Buffer.byteLength(line);
      if (options.maxBytes !== undefined && bytes >= options.maxBytes) return;
    }
  }
}

/** The capture as Buffers of about `chunkBytes` each (whole lines; default 1 MiB). */
export function* captureChunks(options: CaptureGenOptions, chunkBytes = MB): Generator<Buffer> {
  positive('chunkBytes', chunkBytes);
  let parts: string[] = [];
  let size = 0;
  for (const line of captureLines(options)) {
    parts.push(line);
    size += line.length; // UTF-16 units; the text is ASCII, so bytes
    if (size >= chunkBytes) {
      yield Buffer.from(parts.join(''), 'utf8');
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) yield Buffer.from(parts.join(''), 'utf8');
}

/** Counts what a capture stream holds while passing it through. */
export function statsOf(lines: Iterable<string>): CaptureStats {
  const stats: CaptureStats = { records: 0, bytes: 0, firstTimeMs: null, lastTimeMs: null };
  for (const line of lines) {
    stats.records++;
    stats.bytes += Buffer.byteLength(line);
    const at = line.lastIndexOf('"inferenceTime":"');
    const ms = Date.parse(line.slice(at + 17, line.indexOf('"', at + 17)));
    stats.firstTimeMs ??= ms;
    stats.lastTimeMs = ms;
  }
  return stats;
}

/** The whole capture in one Buffer: for test-sized files (tens of MB), not for 1 GB. */
export function captureBuffer(options: CaptureGenOptions): Buffer {
  return Buffer.concat([...captureChunks(options)]);
}

/** Writes the capture to `path` with backpressure, in memory bounded by one chunk. */
export async function writeCaptureFile(
  path: string,
  options: CaptureGenOptions,
  chunkBytes = 4 * MB,
): Promise<{ records: number; bytes: number }> {
  const out = createWriteStream(path);
  let bytes = 0;
  let records = 0;
  try {
    for (const chunk of captureChunks(options, chunkBytes)) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) records++;
      if (!out.write(chunk)) await once(out, 'drain');
    }
  } finally {
    out.end();
    await once(out, 'finish');
  }
  return { records, bytes };
}
