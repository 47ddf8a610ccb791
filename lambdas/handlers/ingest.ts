/**
 * Ingest. Trigger: the ingest queue (S3 ObjectCreated notifications for `.jsonl` under the
 * capture prefix). Input: S3 event notifications (every record of each), S3 test events
 * (ignored), EventBridge Object Created events. Output: per capture file, one run: the
 * ingest report, shard messages on the replay queue, a deadline message on the collect queue.
 * Failure: a bad message or a non-.jsonl key is logged and acknowledged; an AWS error fails
 * that SQS record alone (partial batch response) for a retry. Idempotent on (bucket, key,
 * ETag): the run id derives from them, and a scheduled run is not scheduled again.
 * Modes: `file` starts each file's replay `lead` after ingest; `mirror` sends each request at
 * its inferenceTime + lag and rolls the results up per capture hour.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { openS3Object } from '../adapters/aws/s3-object-store';
import { DuplicateFilter, IngestReportBuilder, parseCaptureStream } from '../core/capture/parse';
import { writeIngestReport } from '../core/export/artifacts';
import { deterministicUuid } from '../core/ids';
import { runPrefix } from '../core/pipeline/keys';
import { DEFAULT_SHARDING } from '../core/pipeline/shards';
import { collectMessage, scheduleRun } from '../core/pipeline/stages';
import { buildPlan } from '../core/plan/plan';
import type { CaptureRecord } from '../core/types';
import { defaultDeps, type Deps } from '../runtime/deps';
import { parseIngestMessage, type CaptureObjectRef } from './s3-events';

/** A run per capture-file version: the same object and ETag always map to the same run. */
export function fileRunId(mode: 'file' | 'mirror', ref: CaptureObjectRef, etag: string): string {
  return `${mode}-${deterministicUuid(mode, ref.bucket, ref.key, etag)}`;
}

async function ingestObject(ref: CaptureObjectRef, deps: Deps): Promise<void> {
  const { config, logger } = deps;
  const object = await openS3Object(deps.s3, ref.bucket, ref.key);
  const mirror = config.mode === 'mirror';
  const runId = fileRunId(config.mode, ref, ref.etag ?? object.etag);
  const report = new IngestReportBuilder();
  const records: CaptureRecord[] = [];
  for await (const record of parseCaptureStream(object.chunks, `s3://${ref.bucket}/${ref.key}`, report, new DuplicateFilter())) records.push(record);
  const ingest = report.build();
  await writeIngestReport(deps.store, runPrefix(runId), ingest);
  const plan = buildPlan(records, {
    runId,
    targetKind: 'openai-chat',
    // Mirror mode keeps the captured pace: each request at its inferenceTime + lag.
    timeScale: mirror ? 1 : config.timeScale,
    intraSecond: config.intraSecond,
    forceStreaming: config.forceStreaming,
    ...(config.modelOverride ? { modelOverride: config.modelOverride } : {}),
  });
  const duplicates = ingest.totals.rejectedByReason.duplicate ?? 0;
  const targets = config.targets.map((t) => t.name);
  const result = await scheduleRun({
    runId,
    plan,
    targets,
    // file: the first request `lead` after ingest; mirror: every request at inferenceTime + lag
    // (late ones, when the file arrived after that, follow the late policy and are counted).
    startNs: mirror && plan.scheduleZeroMs !== null ? BigInt(Math.round((plan.scheduleZeroMs + config.lagMs) * 1e6)) : deps.clock.nowNs() + BigInt(config.leadMs) * 1_000_000n,
    ...(mirror && plan.scheduleZeroMs !== null ? { hour: new Date(plan.scheduleZeroMs).toISOString().slice(0, 13) } : {}),
    leadMs: config.leadMs,
    // A shard due last may stream for up to the request timeout: only then can it be lost.
    graceMs: config.requestTimeoutMs + config.graceMs,
    sharding: { ...DEFAULT_SHARDING, slotMs: config.slotMs },
    inputConfig: { tool: 'capture-replay', mode: config.mode, ...(mirror ? { lag_ms: config.lagMs } : {}), capture: `s3://${ref.bucket}/${ref.key}`, etag: ref.etag ?? object.etag, targets: config.targets.map(({ name, url, path }) => ({ name, url, path })) },
    notScheduledByReason: { ...plan.excluded, ...(duplicates ? { duplicate: duplicates } : {}) },
    store: deps.store,
    queue: deps.replayQueue,
    clock: deps.clock,
  });
  if (result.status === 'scheduled') {
    // The deadline check finalises the run even if a worker dies with its shard.
    await deps.collectQueue.sendBatch(targets.map((t) => collectMessage(runId, t, result.deadlineNs)));
  }
  logger.info('capture file ingested', { runId, key: ref.key, status: result.status, accepted: ingest.totals.accepted, rejected: ingest.totals.rejected, scheduled: plan.requests.length + plan.incompatible.length, shards: result.shards });
}

export function makeIngestHandler(getDeps: () => Deps) {
  const processor = new BatchProcessor(EventType.SQS);
  const recordHandler = async (record: SQSRecord): Promise<void> => {
    const deps = getDeps();
    const message = parseIngestMessage(record.body);
    if (message.kind === 'test') return deps.logger.info('S3 test event ignored', { messageId: record.messageId });
    if (message.kind === 'invalid') return deps.logger.warn('ingest message ignored', { messageId: record.messageId, reason: message.reason });
    for (const ref of message.objects) {
      if (!ref.key.endsWith('.jsonl')) {
        deps.logger.info('not a capture file, ignored', { key: ref.key });
        continue;
      }
      await ingestObject(ref, deps);
    }
  };
  return (event: SQSEvent, context: Context) => processPartialResponse(event, recordHandler, processor, { context });
}

export const handler = makeIngestHandler(defaultDeps);
