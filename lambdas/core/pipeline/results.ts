/**
 * A shard's results object: one JSON line per request, a profile record or a drop. The
 * collector reads these back from storage it does not control byte for byte, so every line
 * is validated, and bigint nanoseconds travel as decimal strings (a float64 would lose them).
 */
import { z } from 'zod';
import type { DropReason, ProfileRecord } from '../types';

/** One line of a shard's results object. */
export type ResultLine =
  | { kind: 'record'; record: ProfileRecord }
  | { kind: 'drop'; requestId: string; index: number; scheduledNs: bigint; dropReason: DropReason };

const ns = z
  .string()
  .regex(/^-?\d+$/, 'expected epoch ns as a decimal string')
  .transform((s) => BigInt(s));

// A Record over DropReason makes the compiler flag a reason added to types.ts but not here.
const DROP_REASONS: Record<DropReason, true> = {
  unsupported_content_type: true,
  not_chat_request: true,
  late_beyond_tolerance: true,
  lost: true,
  expired: true,
  aborted: true,
};
const dropReasonSchema = z.enum(Object.keys(DROP_REASONS) as [DropReason, ...DropReason[]]);

const errorSchema = z.object({ code: z.number().nullable(), type: z.string(), message: z.string() });

const recordSchema = z.object({
  metadata: z.object({
    session_num: z.number().int().nonnegative(),
    x_request_id: z.string().min(1),
    x_correlation_id: z.string(),
    conversation_id: z.string(),
    turn_index: z.number().int(),
    request_start_ns: ns,
    request_ack_ns: ns.nullable(),
    request_end_ns: ns,
    worker_id: z.string(),
    record_processor_id: z.string(),
    benchmark_phase: z.literal('profiling'),
    was_cancelled: z.boolean(),
    cancellation_time_ns: ns.nullable(),
  }),
  metrics: z.record(z.string(), z.object({ value: z.union([z.number(), z.array(z.number())]), unit: z.string() })),
  error: errorSchema.nullable(),
  capture_replay: z.object({
    target: z.string(),
    scheduled_ns: ns,
    schedule_lag_ms: z.number(),
    // Null when never written, and in results from before the wire stamp.
    wire_lag_ms: z.number().nullable().default(null),
    capture_event_id: z.string(),
    capture_copy: z.number().int().nonnegative().optional(),
    capture_inference_id: z.string().nullable(),
    capture_file: z.string(),
    capture_line: z.number().int(),
    capture_time_ms: z.number(),
    captured_output_tokens: z.number().nullable(),
    output_match: z.boolean().nullable().default(null),
    overrides: z.array(z.string()),
  }),
});

export const resultLineSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('record'), record: recordSchema }),
  z.object({
    kind: z.literal('drop'),
    requestId: z.string().min(1),
    index: z.number().int().nonnegative(),
    scheduledNs: ns,
    dropReason: dropReasonSchema,
  }),
]);

function encodeJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** One line of a results object (without its newline). */
export const encodeResultLine = (line: ResultLine): string => encodeJson(line);

/** JSONL, one line per outcome; an empty shard is an empty object (its presence still counts). */
export function encodeResultLines(lines: readonly ResultLine[]): string {
  return joinResultLines(lines.map(encodeResultLine));
}

/** Encoded lines as one results object's text, each followed by a newline. */
export const joinResultLines = (encoded: readonly string[]): string =>
  encoded.join('\n') + (encoded.length ? '\n' : '');

/**
 * Parses a results object. A corrupt line throws with the object key and line number: the
 * collect step then fails (and is retried, then dead-lettered) rather than publishing an
 * accounting that silently misses a request.
 */
export function decodeResultLines(text: string, key: string): ResultLine[] {
  const out: ResultLine[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line) continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new Error(`${key}:${i + 1}: not JSON`);
    }
    const parsed = resultLineSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(
        `${key}:${i + 1}: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid result line'}`,
      );
    }
    out.push(parsed.data);
  }
  return out;
}

/** The request id a line accounts for: the collector counts each id once (at-least-once delivery). */
export const resultRequestId = (line: ResultLine): string =>
  line.kind === 'record' ? line.record.metadata.x_request_id : line.requestId;
