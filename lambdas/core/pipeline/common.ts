/**
 * What the pipeline stages share: the run record (written last by the ingest: its presence
 * means "fully scheduled"), message decoding, batch sending, and the permanent-error type.
 */
import { z } from 'zod';
import type { MessageQueue } from '../../ports';

export const INGEST_SHARD = 'ingest';

export const runRecordSchema = z.object({
  v: z.literal(1),
  runId: z.string(),
  targets: z.array(z.string()).min(1),
  startNs: z.string(),
  deadlineNs: z.string(),
  createdAt: z.string(),
  shards: z.array(z.object({ shardId: z.string(), requests: z.number().int().positive() })),
  notScheduledByReason: z.record(z.string(), z.number()),
  inputConfig: z.unknown(),
  /** Mirror mode: the capture hour (`YYYY-MM-DDTHH`) whose roll-up this run joins. */
  hour: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}$/).optional(),
});
export type RunRecord = z.infer<typeof runRecordSchema>;

export type { ResultLine } from './results';

export function decodeJson(bytes: Uint8Array): unknown {
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
}

/** A body that is not JSON is bad input, like one that fails its schema: permanent, not retried. */
export function parseMessageJson(raw: string, what: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new PermanentError(`not a ${what} message: body is not JSON`);
  }
}

export async function sendAll(queue: MessageQueue, messages: { id: string; body: string; delaySeconds: number }[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 10) {
    let batch = messages.slice(i, i + 10);
    for (let attempt = 0; attempt < 3 && batch.length > 0; attempt++) {
      const { failedIds } = await queue.sendBatch(batch);
      batch = batch.filter((m) => failedIds.includes(m.id));
    }
    // Retryable: the handler fails, SQS redelivers the ingest event, the run record is not
    // yet written, and scheduling runs again (shard claims make repeated messages harmless).
    if (batch.length > 0) throw new Error(`could not enqueue ${batch.length} shard message(s) after 3 attempts`);
  }
}

/** Bad input: count it, report it, acknowledge it; retrying cannot help. */
export class PermanentError extends Error {
  override readonly name = 'PermanentError';
}

