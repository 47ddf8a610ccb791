/**
 * Shard messages of a small run, as the ingest schedules them (dispatchRun, the real sharder),
 * for tests that hand them to the fire handler themselves: the run's record is written to the
 * given store, the messages are kept in memory instead of a queue.
 */
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { MemoryQueue } from '../../lambdas/adapters/local/memory-queue';
import { dispatchRun } from '../../lambdas/core/pipeline/stages';
import type { ScheduledRequest } from '../../lambdas/core/types';
import type { ObjectStore } from '../../lambdas/ports';
import { scheduledRequest } from './fixtures';
import { toSqsRecord } from './sqs-event-source';

/** `count` chat requests `spacingMs` apart (non-streamed unless `streaming`). */
export function chatRequests(count: number, spacingMs: number, streaming = false): ScheduledRequest[] {
  return Array.from({ length: count }, (_, i) =>
    scheduledRequest(i, i * spacingMs, {
      body: Buffer.from(
        JSON.stringify({
          model: 'm',
          messages: [{ role: 'user', content: `q${i}` }],
          max_tokens: 1,
          ...(streaming ? { stream: true } : {}),
        }),
      ),
      streaming,
    }),
  );
}

/** The run's shard messages (bodies), one per shard, in due order. */
export async function shardBodies(args: {
  runId: string;
  target: string;
  requests: ScheduledRequest[];
  startNs: bigint;
  leadMs: number;
  store: ObjectStore;
  slotMs?: number;
}): Promise<string[]> {
  const queue = new MemoryQueue(() => BigInt(Date.now()) * 1_000_000n);
  const result = await dispatchRun({
    runId: args.runId,
    plan: {
      requests: args.requests,
      incompatible: [],
      excluded: {},
      scheduleZeroMs: 0,
      durationMs: args.requests.at(-1)?.offsetMs ?? 0,
    },
    targets: [args.target],
    startNs: args.startNs,
    leadMs: args.leadMs,
    graceMs: 60_000,
    inputConfig: { mode: 'file' },
    notScheduledByReason: {},
    store: args.store,
    queue,
    clock: { nowNs: () => BigInt(Date.now()) * 1_000_000n, waitUntil: async () => undefined },
    sharding: {
      slotMs: args.slotMs ?? 1000,
      maxShardRequests: 250,
      maxMessageBytes: 768 * 1024,
      maxInlineBodyBytes: 64 * 1024,
    },
  });
  if (result.status !== 'scheduled') throw new Error(`run ${args.runId} not scheduled: ${result.status}`);
  return queue.messages.map((m) => m.body).filter((b) => (JSON.parse(b) as { kind: string }).kind === 'shard');
}

/** An SQS event of these bodies, as the event source delivers it. */
export function sqsEventOf(
  bodies: readonly string[],
  queueArn = 'arn:aws:sqs:us-east-1:123456789012:replay',
): SQSEvent {
  const records: SQSRecord[] = bodies.map((body, i) =>
    toSqsRecord(
      { MessageId: `m-${i}-${Math.random().toString(36).slice(2)}`, ReceiptHandle: `r-${i}`, Body: body },
      queueArn,
    ),
  );
  return { Records: records };
}
