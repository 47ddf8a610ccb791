/**
 * Ingest. Trigger: the ingest queue (S3 ObjectCreated notifications for `.jsonl` under the
 * capture prefix). Input: S3 event notifications (every record of each), S3 test events
 * (ignored), EventBridge Object Created events. Output: per capture file, one run: the
 * ingest report, shard messages on the replay queue, a deadline message on the collect queue.
 * Failure: a bad message or a non-.jsonl key is logged and acknowledged; an AWS error fails
 * that SQS record alone (partial batch response) for a retry. Idempotent on (bucket, key,
 * ETag): the run id derives from them, and a scheduled run is not scheduled again.
 * Modes (`file`, `mirror`) and targets (`autoReplay`; scheduled runs choose their own, plan.ts):
 * docs/deploy.md#configuration. Capacity, each run's lanes weighed against the fire function's
 * concurrency (core/pipeline/dispatch-capture.ts): docs/deploy.md#traffic-above-the-peak.
 * Two passes over the object, so memory is bounded by the index: docs/deploy.md#at-scale.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { openCaptureObject } from '../adapters/aws/s3-capture-object';
import { CaptureSupersededError, isFinal } from '../core/errors';
import { fileRunId } from '../core/ids';
import { readCapturePass } from '../core/pipeline/capture-pass';
import { dispatchCapture, targetKinds } from '../core/pipeline/dispatch-capture';
import type { PlanOptions } from '../core/plan/plan';
import type { TargetKind } from '../core/types';
import type { RuntimeConfig, TargetConfig } from '../runtime/config';
import { defaultDeps, type Deps } from '../runtime/deps';
import { runSetupOf } from './run-input';
import { parseIngestMessage, type CaptureObjectRef } from './s3-events';

/** The targets a new capture file replays to: the autoReplay subset, in the configured order, or every target. */
export function ingestTargets(config: Pick<RuntimeConfig, 'targets' | 'autoReplayTargets'>): TargetConfig[] {
  const subset = config.autoReplayTargets;
  return subset ? config.targets.filter((t) => subset.includes(t.name)) : config.targets;
}

async function ingestObject(ref: CaptureObjectRef, deps: Deps): Promise<void> {
  const { config } = deps;
  const setup = runSetupOf(config, ingestTargets(config), config.amplify);
  const file = `s3://${ref.bucket}/${ref.key}`;
  // Every read of this object names the version the event named (If-Match on its ETag).
  const object = await openCaptureObject(deps.s3, ref.bucket, ref.key, ref.etag);
  const mirror = config.mode === 'mirror';
  const runId = fileRunId(config.mode, ref.bucket, ref.key, object.etag);
  // Targets of different kinds take different records (plan.ts rule 6): the records are
  // indexed once with every kind's verdict, and each kind gets its own plan of them.
  const kinds = targetKinds(setup.targets);
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
  // Pass 1: the file streamed once into an index (times, spans, verdicts), not bodies. Pass 2
  // happens inside dispatchRun, a window of shards at a time, read back by byte range.
  const source = { name: file, open: async () => object, goneReason: 'superseded' };
  const pass = await readCapturePass([source], { ...planOptions, kinds });
  const { plan, report } = pass;
  // file: the run starts `lead` after planning, fixed now that the slow part (pass 1) is
  // done; shards are then sent in due order, ahead of their due times. mirror: every
  // request at inferenceTime + lag (late ones, when the file arrived after that, follow the
  // late policy and are counted).
  const mirrorZeroMs = mirror ? plan.scheduleZeroMs : null;
  await dispatchCapture(deps, {
    runId,
    setup,
    pass,
    planOptions,
    ...(mirrorZeroMs !== null
      ? {
          startNs: BigInt(Math.round((mirrorZeroMs + config.lagMs) * 1e6)),
          hour: new Date(mirrorZeroMs).toISOString().slice(0, 13),
        }
      : {}),
    // The ramp may start the run later than the lead; a mirror run keeps the capture's timeline.
    startMoves: !mirror,
    // With what the intra-second policy did to the times (how many spread, by how much at most).
    ingestReport: report,
    inputConfig: {
      mode: config.mode,
      ...(mirror ? { lag_ms: config.lagMs } : {}),
      ...(config.amplify !== 1 ? { amplify: config.amplify } : {}),
      capture: file,
      etag: object.etag,
    },
    log: {
      message: 'capture file ingested',
      fields: {
        key: ref.key,
        bytes: object.size,
        accepted: report.totals.accepted,
        rejected: report.totals.rejected,
      },
    },
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
        // Overwritten since the event: the new version's own event replays it. Another final
        // error would fail the same way again: acknowledged. Anything else is retried.
        if (!isFinal(error)) throw error;
        if (error instanceof CaptureSupersededError)
          deps.logger.warn('capture file superseded, ignored', { key: ref.key, reason: error.message });
        else deps.logger.error('capture file not ingested', { key: ref.key, error: error.name, reason: error.message });
      }
    }
  };
  return (event: SQSEvent, context: Context) => processPartialResponse(event, recordHandler, processor, { context });
}

export const handler = makeIngestHandler(defaultDeps);
