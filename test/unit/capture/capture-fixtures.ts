/** Builders for capture lines and streams, shared by the capture tests. */
import { DuplicateFilter, isLive } from '../../../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { parseCaptureStream } from '../../../lambdas/core/capture/stream';
import type { CaptureRecord, IngestReport } from '../../../lambdas/core/types';

/** Marker in every prompt: a rejection detail must never contain it. */
export const SECRET = 'SECRET-PROMPT';
export const CHAT_BODY = `{"messages":[{"role":"user","content":"${SECRET} héllo"}]}`;
export const OUTPUT_BODY =
  '{"choices":[{"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":7,"completion_tokens":30,"total_tokens":37}}';

export interface LineParts {
  input?: Record<string, unknown>;
  /** null: no endpointOutput at all; any other value replaces the whole field. */
  output?: Record<string, unknown> | null | unknown;
  meta?: Record<string, unknown>;
}

/** A well-formed capture line (JSON encoding, OpenAI answer with usage), with parts overridden. */
export function captureLine(parts: LineParts = {}): string {
  const captureData: Record<string, unknown> = {
    endpointInput: {
      observedContentType: 'application/json',
      mode: 'INPUT',
      data: CHAT_BODY,
      encoding: 'JSON',
      ...parts.input,
    },
  };
  if (parts.output === undefined)
    captureData.endpointOutput = {
      observedContentType: 'application/json',
      mode: 'OUTPUT',
      data: OUTPUT_BODY,
      encoding: 'JSON',
    };
  else if (parts.output !== null) captureData.endpointOutput = parts.output;
  return JSON.stringify({
    captureData,
    eventMetadata: { eventId: 'e-1', inferenceTime: '2026-04-29T00:03:18Z', ...parts.meta },
    eventVersion: '0',
  });
}

export async function* chunksOf(parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield typeof p === 'string' ? Buffer.from(p) : p;
}

/** A comparable view of a record: bodies as text; its duplicate filter's mark as whether it was superseded since. */
export function view(r: CaptureRecord) {
  const { dedupe, ...rest } = r;
  return {
    ...rest,
    input: { ...r.input, body: Buffer.from(r.input.body).toString('utf8') },
    ...(dedupe ? { superseded: dedupe.keptBy.superseded(dedupe.keptAs) } : {}),
  };
}

export async function parseAll(
  parts: (string | Uint8Array)[],
  options: { duplicates?: DuplicateFilter | null; file?: string; maxLineBytes?: number } = {},
): Promise<{ records: CaptureRecord[]; report: IngestReport }> {
  const builder = new IngestReportBuilder();
  const records: CaptureRecord[] = [];
  const duplicates = options.duplicates === null ? undefined : (options.duplicates ?? new DuplicateFilter());
  const extra = options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes };
  for await (const r of parseCaptureStream(chunksOf(parts), options.file ?? 'f.jsonl', builder, duplicates, extra))
    records.push(r);
  // The records a run replays: not those an earlier copy superseded after they were read.
  return { records: records.filter(isLive), report: builder.build() };
}
