/**
 * One SageMaker Data Capture line: its schema, and the verdict on it (a `CaptureRecord`, or
 * one reject reason with a detail that names fields and positions, never values).
 *
 * Why it is fast, and what holds it to a plain parse: parseCaptureLine.
 */
import { z } from 'zod';
import { inputContentType, jsonErrorAt } from './body-type';
import { notDataCaptureDetail } from './not-data-capture';
import { summariseOutput } from './output-summary';
import { decodePayload } from './payload';
import { implausibleTime, parseInferenceTime } from './time';
import type { CaptureRecord, CaptureSource, RejectReason } from '../types';

/** The character a UTF-8 byte-order mark decodes to. */
const BOM_CHAR = 0xfeff;

export type LineVerdict = { ok: true; record: CaptureRecord } | { ok: false; reason: RejectReason; detail: string };

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

export interface LineOptions {
  /** The reading machine's clock, epoch ms, for the plausibility of times. Default: now. */
  nowMs?: number;
}

/**
 * Parses one non-blank line (without its newline). A leading byte-order mark is skipped
 * (the stream drops the file's own before the line; this catches files joined with theirs).
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
 * - Body bytes go into a shared slab (payload.ts); the time is read by hand (time.ts).
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
    return { ok: false, reason: 'missing_field', detail: notDataCaptureDetail(value) ?? explainShape(value) };
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
      input: {
        contentType: type.contentType,
        encoding: decoded.encoding,
        body: decoded.body,
        ...(type.inferred ? { contentTypeInferred: true } : {}),
      },
      output: summariseOutput((captureData as { endpointOutput?: unknown }).endpointOutput),
      source,
    },
  };
}
