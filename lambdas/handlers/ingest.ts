/**
 * Ingest. Trigger: the ingest queue (S3 ObjectCreated notifications for `.jsonl` under the
 * capture prefix). Input: S3 event notifications (every record of each), S3 test events
 * (ignored), EventBridge Object Created events. Output: per capture file, one run: the
 * ingest report, shard messages on the replay queue, a deadline message on the collect queue.
 * Capacity: each run's lanes are weighed against the fire function's concurrency (the ingest
 * report's `capacity`); a run that cannot start on time is logged as a warning naming the
 * setting to raise, and every run's expected lateness is a metric (run-input.ts logCapacity).
 * Failure: a bad message or a non-.jsonl key is logged and acknowledged; an AWS error fails
 * that SQS record alone (partial batch response) for a retry. Idempotent on (bucket, key,
 * ETag): the run id derives from them, and a scheduled run is not scheduled again.
 * Modes: `file` starts each file's replay `lead` after ingest; `mirror` sends each request at
 * its inferenceTime + lag and rolls the results up per capture hour.
 * Targets: the deployment's `autoReplay` targets (AUTO_REPLAY_TARGETS) when it names some,
 * else every target; scheduled runs choose their own (plan.ts).
 * Scale: two passes over the object (an index first, then each shard's lines by byte
 * range), so memory is bounded by the index, not the file: a 1 GB capture fits.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { CaptureSupersededError, openCaptureObject } from '../adapters/aws/s3-capture-object';
import { DuplicateFilter } from '../core/capture/duplicates';
import { IngestReportBuilder } from '../core/capture/ingest-report';
import { parseCaptureStream } from '../core/capture/stream';
import { fileRunId } from '../core/ids';
import type { DispatchablePlan } from '../core/pipeline/dispatch';
import { dispatchRun } from '../core/pipeline/stages';
import {
  incompatibleAs,
  indexRecord,
  planIndexed,
  type IndexedEntry,
  type IndexedRecord,
  type PlanOptions,
} from '../core/plan/plan';
import { readBackRequests } from '../core/plan/read-back';
import type { TargetKind } from '../core/types';
import { targetKindOf, type RuntimeConfig, type TargetConfig } from '../runtime/config';
import { defaultDeps, type Deps } from '../runtime/deps';
import { baseInputConfig, fireCapacityOf, logCapacity, schedulingOf, sendCollectMessages } from './run-input';
import { parseIngestMessage, type CaptureObjectRef } from './s3-events';

/** The targets a new capture file replays to: the autoReplay subset, in the configured order, or every target. */
export function ingestTargets(config: Pick<RuntimeConfig, 'targets' | 'autoReplayTargets'>): TargetConfig[] {
  const subset = config.autoReplayTargets;
  return subset ? config.targets.filter((t) => subset.includes(t.name)) : config.targets;
}

async function ingestObject(ref: CaptureObjectRef, deps: Deps): Promise<void> {
  const { config, logger } = deps;
  const replayTargets = ingestTargets(config);
  const file = `s3://${ref.bucket}/${ref.key}`;
  // Every read of this object names the version the event named (If-Match on its ETag).
  const object = await openCaptureObject(deps.s3, ref.bucket, ref.key, ref.etag);
  const mirror = config.mode === 'mirror';
  const runId = fileRunId(config.mode, ref.bucket, ref.key, object.etag);
  // Targets of different kinds take different records (plan.ts rule 6: a CSV record goes to
  // a SageMaker endpoint, a chat target counts it as dropped): the records are indexed once
  // with every kind's verdict, and each kind gets its own plan of them, as the CLI does.
  const kinds = [...new Set(replayTargets.map(targetKindOf))];
  const planOptions: PlanOptions = {
    runId,
    targetKind: kinds[0] as TargetKind,
    // Mirror mode keeps the captured pace: each request at its inferenceTime + lag.
    timeScale: mirror ? 1 : config.timeScale,
    // Copies stay within each request's gap to the next (amplify.ts), so a mirror's pace holds at k times the rate.
    ...(config.amplify !== 1 ? { amplify: config.amplify } : {}),
    intraSecond: config.intraSecond,
    forceStreaming: config.forceStreaming,
    ...(config.modelOverride ? { modelOverride: config.modelOverride } : {}),
  };

  // Pass 1: stream the file once, keeping an index (times, spans, verdicts), not bodies.
  const report = new IngestReportBuilder();
  const index: IndexedRecord[] = [];
  const indexKinds = kinds.length > 1 ? kinds : undefined;
  for await (const record of parseCaptureStream(object.chunks, file, report, new DuplicateFilter()))
    index.push(indexRecord(record, planOptions, indexKinds));
  const ingest = report.build();
  const plan = planIndexed(index, planOptions);
  index.length = 0;

  // Pass 2 happens inside dispatchRun, a window of shards at a time: their lines are read
  // back by byte range and made requests just before their messages are sent.
  const entries = new Map(plan.entries.map((e) => [e.index, e]));
  const planFor = (kind: TargetKind): DispatchablePlan => {
    const options: PlanOptions = { ...planOptions, targetKind: kind };
    const verdicts = plan.entries.map((e) => incompatibleAs(e.record, kind));
    return {
      items: plan.entries.flatMap((e, i) =>
        verdicts[i] ? [] : [{ index: e.index, offsetMs: e.offsetMs, bodyBytes: e.record.bodyBytes, sourceFile: file }],
      ),
      incompatible: plan.entries.flatMap((e, i) => {
        const verdict = verdicts[i];
        return verdict ? [{ index: e.index, offsetMs: e.offsetMs, reason: verdict.reason }] : [];
      }),
      durationMs: plan.durationMs,
      load: (items) =>
        readBackRequests(
          items.map((i) => entries.get(i.index) as IndexedEntry),
          (start, end) => object.readRange(start, end),
          options,
        ),
    };
  };
  const plans = new Map(kinds.map((kind) => [kind, planFor(kind)]));
  const duplicates = ingest.totals.rejectedByReason.duplicate ?? 0;
  const targets = replayTargets.map((t) => t.name);
  // The first target's kind is the run's plan; a target of another kind gets its kind's.
  const targetPlans = Object.fromEntries(
    replayTargets
      .filter((t) => targetKindOf(t) !== kinds[0])
      .map((t) => [t.name, plans.get(targetKindOf(t)) as DispatchablePlan]),
  );
  // file: the run starts `lead` after planning, fixed now that the slow part (pass 1) is
  // done; shards are then sent in due order, ahead of their due times. mirror: every
  // request at inferenceTime + lag (late ones, when the file arrived after that, follow the
  // late policy and are counted).
  // What the results' AIPerf input_config is made of (collect.ts pipelineInputConfig).
  const { tool, ...settings } = baseInputConfig(config, replayTargets);
  const startNs =
    mirror && plan.scheduleZeroMs !== null
      ? BigInt(Math.round((plan.scheduleZeroMs + config.lagMs) * 1e6))
      : deps.clock.nowNs() + BigInt(config.leadMs) * 1_000_000n;
  const result = await dispatchRun({
    runId,
    plan: plans.get(kinds[0] as TargetKind) as DispatchablePlan,
    targets,
    ...(Object.keys(targetPlans).length > 0 ? { targetPlans } : {}),
    startNs,
    ...(mirror && plan.scheduleZeroMs !== null
      ? { hour: new Date(plan.scheduleZeroMs).toISOString().slice(0, 13) }
      : {}),
    leadMs: config.leadMs,
    // A shard due last may stream for up to the request timeout: only then can it be lost.
    graceMs: config.requestTimeoutMs + config.graceMs,
    ...schedulingOf(config),
    // The ramp may start the run later than the lead; a mirror run keeps the capture's timeline.
    startMoves: !mirror,
    // With what the intra-second policy did to the times (how many spread, by how much at most);
    // dispatch adds the lanes against the fire function's concurrency.
    ingestReport: { ...ingest, timing: plan.timing },
    ...fireCapacityOf(config, config.amplify),
    inputConfig: {
      tool,
      mode: config.mode,
      ...(mirror ? { lag_ms: config.lagMs } : {}),
      ...(config.amplify !== 1 ? { amplify: config.amplify } : {}),
      capture: file,
      etag: object.etag,
      ...settings,
    },
    notScheduledByReason: { ...plan.excluded, ...(duplicates ? { duplicate: duplicates } : {}) },
    store: deps.store,
    queue: deps.replayQueue,
    clock: deps.clock,
  });
  if (result.status === 'scheduled') await sendCollectMessages(deps.collectQueue, runId, targets, result);
  if (result.status === 'scheduled')
    logCapacity(logger, {
      runId,
      stackName: config.stackName,
      capacity: result.capacity,
      nowMs: Number(deps.clock.nowNs() / 1_000_000n),
      metrics: deps.metrics,
    });
  logger.info('capture file ingested', {
    runId,
    key: ref.key,
    status: result.status,
    bytes: object.size,
    accepted: ingest.totals.accepted,
    rejected: ingest.totals.rejected,
    scheduled: plan.entries.length,
    shards: result.shards,
    messages: result.messages,
    ...(result.status === 'scheduled'
      ? { lateShards: result.emission.lateShards, maxEmissionLateMs: Math.round(result.emission.maxLateMs) }
      : {}),
  });
}

export function makeIngestHandler(getDeps: () => Deps) {
  const processor = new BatchProcessor(EventType.SQS);
  const recordHandler = async (record: SQSRecord): Promise<void> => {
    const deps = getDeps();
    const message = parseIngestMessage(record.body);
    if (message.kind === 'test') return deps.logger.info('S3 test event ignored', { messageId: record.messageId });
    if (message.kind === 'invalid')
      return deps.logger.warn('ingest message ignored', { messageId: record.messageId, reason: message.reason });
    for (const ref of message.objects) {
      if (!ref.key.endsWith('.jsonl')) {
        deps.logger.info('not a capture file, ignored', { key: ref.key });
        continue;
      }
      try {
        await ingestObject(ref, deps);
      } catch (error) {
        // Overwritten since the event: the new version's own event replays it.
        if (!(error instanceof CaptureSupersededError)) throw error;
        deps.logger.warn('capture file superseded, ignored', { key: ref.key, reason: error.message });
      }
    }
  };
  return (event: SQSEvent, context: Context) => processPartialResponse(event, recordHandler, processor, { context });
}

export const handler = makeIngestHandler(defaultDeps);
