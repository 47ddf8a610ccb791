/**
 * Usage errors of the command line: exit 2, one line that says what is wrong in the words the
 * user typed (flags, not internal field names), and one line that says where to look. Kept
 * free of heavy imports: the launcher loads it before anything else.
 */
import type { Command } from 'commander';
import { EXIT_CODES } from '../core/errors';
import { METRICS } from '../core/metrics/registry';
import { didYouMean } from '../core/suggest';

export const USAGE_EXIT = EXIT_CODES.usage;

/**
 * `--rehearsal`'s largest: 50 times auto's most (bench/RESULTS.md: time and memory of a rehearsal); 1e9 ran V8 out of
 * memory after ~80 s.
 */
export const MAX_REHEARSAL_REQUESTS = 100_000;
/** `--resamples`' largest: 50 times the default; the bootstrap keeps each resample's statistics, and 1e9 ran out of memory. */
export const MAX_RESAMPLES = 100_000;

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

/**
 * A number as typed on the command line, the one parser of every numeric flag: decimal digits,
 * a point, an exponent (`1e-7`), a sign. NaN for anything else `Number()` would also take (`0x2`
 * is 2 to it, `0b11` 3, `Infinity`, `''` 0), so that a typo is refused, not read as another
 * number.
 */
export function decimalNumber(raw: string): number {
  const text = raw.trim();
  return DECIMAL.test(text) ? Number(text) : NaN;
}

/** The second line of a usage error: where to look. */
export function usageHint(command: string): string {
  return `Run '${command ? `capture-replay ${command}` : 'capture-replay'} --help' for the options.`;
}

/** `capture-replay <command>: <message>` and the hint, each on its own line. */
export function usageMessage(command: string, message: string): string {
  return `${command ? `capture-replay ${command}` : 'capture-replay'}: ${message}\n${usageHint(command)}\n`;
}

/**
 * A commander command whose usage errors are two lines on stderr (commander's message,
 * prefixed with the command the user ran instead of `error:`, then where to look), never the
 * whole help, and exit 2 (commander's own code for them is 1, which here means "the run could
 * not be done"). `commands` lists the subcommands for an unknown one with no close match.
 */
export function usageErrors(command: Command, path: string, commands?: () => string[]): Command {
  return command
    .showHelpAfterError(usageHint(path))
    .configureOutput({ outputError: (text, write) => write(oneLine(text, path, commands)) })
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : USAGE_EXIT));
}

/** commander's error text as one line: `capture-replay <command>: ...`, its suggestion kept on it. */
export function oneLine(text: string, path: string, commands?: () => string[]): string {
  let message = text
    .trim()
    .replace(/^error: /, '')
    .replace(/\s*\n\(Did you mean (.+)\?\)$/, '; did you mean $1?');
  // "option '--x <v>' argument 'v' is invalid. <why>": our parsers' <why> names the flag already.
  const invalid = /^option '(--[\w-]+)[^']*' argument '(.*)' is invalid\. (.*)$/s.exec(message);
  if (invalid)
    message = invalid[3]?.startsWith(invalid[1] as string)
      ? (invalid[3] as string)
      : `${invalid[1]} "${invalid[2]}": ${invalid[3]}`;
  if (commands && /^unknown command /.test(message) && !message.includes('did you mean'))
    message += ` (the commands are ${commands().join(', ')})`;
  return `capture-replay${path ? ` ${path}` : ''}: ${message}\n`;
}

/**
 * Metrics a goodput SLO can name: the per-request metrics with one value per request
 * (inter_chunk_latency is a list; schedule_lag is the client's, not the server's).
 */
export const GOODPUT_TAGS: readonly string[] = METRICS.filter(
  (m) => m.kind === 'record' && m.tag !== 'inter_chunk_latency' && m.tag !== 'schedule_lag',
).map((m) => m.tag);

/**
 * `--goodput` as AIPerf spells it: space-separated `metric_tag:value` pairs, each value in the
 * metric's unit (ms for latencies, tokens/s for output_token_throughput_per_user, tokens for
 * lengths), e.g. `"time_to_first_token:200 inter_token_latency:50"`. Commas separate too.
 * A request is good when every latency is at most its value and the throughput per user at
 * least its value. Returns the SLOs, or what is wrong.
 */
export function parseGoodput(raw: string): Record<string, number> | string {
  const pairs = raw.split(/[\s,]+/).filter(Boolean);
  if (pairs.length === 0)
    return `--goodput takes metric:value pairs, e.g. "time_to_first_token:200 inter_token_latency:50" (got "${raw}")`;
  const slos: Record<string, number> = {};
  for (const pair of pairs) {
    const at = pair.lastIndexOf(':');
    const tag = at < 0 ? pair : pair.slice(0, at);
    const text = at < 0 ? '' : pair.slice(at + 1);
    const value = decimalNumber(text);
    if (at < 0 || !Number.isFinite(value))
      return `--goodput: "${pair}" is not metric:value (e.g. time_to_first_token:200)`;
    if (!GOODPUT_TAGS.includes(tag))
      return `--goodput: unknown metric "${tag}"${didYouMean(tag, GOODPUT_TAGS)} (one of ${GOODPUT_TAGS.join(', ')})`;
    if (value < 0) return `--goodput: ${tag} must be >= 0 (got ${text})`;
    if (tag in slos) return `--goodput: ${tag} is given twice`;
    slos[tag] = value;
  }
  return slos;
}

/** The goodput metrics only a streamed answer has (record-metrics.ts: from the times of its chunks). */
export const STREAMED_GOODPUT_TAGS: readonly string[] = [
  'time_to_first_token',
  'time_to_second_token',
  'inter_token_latency',
  'output_token_throughput_per_user',
];

/**
 * What to say when --goodput names a metric only a streamed answer has and --streaming is not
 * given: a request captured without `"stream": true` is answered whole, has no such metric,
 * and never meets that objective however fast it is answered. null when there is nothing to say.
 */
export function unstreamedGoodputWarning(
  goodput: Readonly<Record<string, number>> | null | undefined,
  streaming: boolean,
): string | null {
  const streamed = Object.keys(goodput ?? {}).filter((tag) => STREAMED_GOODPUT_TAGS.includes(tag));
  if (streaming || streamed.length === 0) return null;
  return (
    `warning: --goodput ${streamed.join(', ')} is measured on streamed answers only, and --streaming is not ` +
    `given: every request captured without "stream": true misses that objective however fast it is answered; add --streaming`
  );
}

/** Most fire threads `--workers` takes (fire-workers.ts MAX_WORKERS; kept here, free of its imports). */
const MAX_WORKERS = 64;

/** `--rehearsal`: `auto` or a whole number of requests >= 0. Returns it, or what is wrong. */
export function parseRehearsal(raw: string): number | 'auto' | string {
  if (raw.trim().toLowerCase() === 'auto') return 'auto';
  const n = decimalNumber(raw);
  if (!Number.isInteger(n) || n < 0) return `--rehearsal must be auto or a whole number >= 0 (got "${raw}")`;
  return n;
}

/** `--workers`: `auto` or a whole number of fire threads, 1 to 64. Returns it, or what is wrong. */
export function parseWorkers(raw: string): number | 'auto' | string {
  if (raw.trim().toLowerCase() === 'auto') return 'auto';
  const n = decimalNumber(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_WORKERS)
    return `--workers must be auto or a whole number from 1 to ${MAX_WORKERS} (got "${raw}")`;
  return n;
}
