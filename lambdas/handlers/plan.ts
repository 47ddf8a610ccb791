/**
 * Plan (scheduled A/B windows, issue 9). Trigger: the plan queue, fed by EventBridge
 * Scheduler (one schedule per entry of the deployment's `schedules`). Input: a plan message
 * (core/scheduled-runs/contract.ts planMessageSchema). Output: ONE window run of the pipeline:
 * the window's captured requests, read from the capture bucket's Data Capture partitions and
 * scheduled to every target of the schedule in the same due order, weighed against the fire
 * function's concurrency as ingest's runs are (core/pipeline/dispatch-capture.ts); or, when the
 * window holds nothing to replay, an empty run in the schedule's history (recordEmptyRun).
 * Failure: a malformed message, an unknown schedule, or a schedule the deployment cannot run
 * (a target or the capture bucket missing, a bad timezone) is logged and acknowledged: a retry
 * would fail the same way. An AWS error fails the record (partial batch response) for a retry.
 * Idempotent on (schedule, scheduledTime): docs/scheduled-runs.md#once-per-scheduled-time.
 * The window read in bounded memory: docs/scheduled-runs.md#what-the-window-means.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import { s3CaptureObjects } from '../adapters/aws/capture-listing';
import type { CloudWatchMetrics } from '../adapters/aws/cloudwatch-metrics';
import { BUNDLED_CHART_ASSETS } from '../adapters/bundled-chart-assets';
import { IngestReportBuilder } from '../core/capture/ingest-report';
import { isFinal, PermanentError } from '../core/errors';
import { writeIngestReport } from '../core/export/artifacts';
import { decodeJson } from '../core/pipeline/common';
import { runPrefix, runRecordKey, WORK_ROOT } from '../core/pipeline/keys';
import { dispatchCapture, targetKinds } from '../core/pipeline/dispatch-capture';
import type { PlanOptions } from '../core/plan/plan';
import {
  planMessageSchema,
  scheduledRunInfoSchema,
  windowRunId,
  type PlanMessage,
  type ScheduleConfig,
  type ScheduledRunInfo,
} from '../core/scheduled-runs/contract';
import { recordEmptyRun } from '../core/scheduled-runs/history';
import { hourPartitions, windowRange, type WindowRange } from '../core/scheduled-runs/window';
import {
  discoverCaptureFolders,
  dispatchOffsetsMs,
  listWindowFiles,
  readWindow,
  type CaptureObjectInfo,
  type CaptureObjects,
} from '../core/scheduled-runs/window-plan';
import type { IngestReport, TargetKind } from '../core/types';
import type { Clock, MessageQueue, Notifier, ObjectStore } from '../ports';
import type { RuntimeConfig, TargetConfig } from '../runtime/config';
import { defaultDeps } from '../runtime/deps';
import { runSetupOf } from './run-input';

/** What the plan function uses of the deps (the production Deps has all of it; tests and the bench pass memory stores and captures). */
export interface PlanDeps {
  config: RuntimeConfig;
  store: ObjectStore;
  replayQueue: MessageQueue;
  collectQueue: MessageQueue;
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  notifier: Notifier | null;
  /** The run's capacity metrics (core/pipeline/dispatch-capture.ts); none written without it. */
  metrics?: Pick<CloudWatchMetrics, 'publish'>;
  /** Reads the capture bucket (config.captureBucket) unless `captures` is given. */
  s3?: S3Client;
  captures?: CaptureObjects;
  /** Default: core/scheduled-runs/history.ts recordEmptyRun. */
  recordEmptyRun?: typeof recordEmptyRun;
}

/** The files a window run reads, pinned by its first attempt (key, ETag) so that every retry plans the same requests. */
export const windowFilesKey = (runId: string) => `${WORK_ROOT}${runId}/_window.json`;

const windowFilesSchema = z.object({
  v: z.literal(1),
  files: z.array(z.object({ key: z.string(), etag: z.string(), size: z.number() })),
  skipped: z.array(z.object({ key: z.string(), reason: z.string() })),
  folders: z.array(z.string()),
});
type WindowFiles = z.infer<typeof windowFilesSchema>;

function targetsOf(schedule: ScheduleConfig, config: RuntimeConfig): TargetConfig[] {
  return schedule.targets.map((name) => {
    const target = config.targets.find((t) => t.name === name);
    if (!target)
      throw new PermanentError(
        `schedule ${schedule.name} names target ${name}, which is not one of the deployment's ` +
          `(${config.targets.map((t) => t.name).join(', ')})`,
      );
    return target;
  });
}

function rangeOf(schedule: ScheduleConfig, scheduledTime: string): WindowRange {
  try {
    return windowRange(schedule.window, Date.parse(scheduledTime), schedule.timezone);
  } catch (error) {
    // An unknown timezone (Intl's RangeError) or a window the config check let through.
    throw new PermanentError(`schedule ${schedule.name}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}

/** The files of the window: those a previous attempt pinned, else listed now and pinned. */
async function windowFiles(
  deps: PlanDeps,
  captures: CaptureObjects,
  schedule: ScheduleConfig,
  runId: string,
  range: WindowRange,
): Promise<WindowFiles> {
  const key = windowFilesKey(runId);
  const pinned = await deps.store.get(key);
  if (pinned) return windowFilesSchema.parse(decodeJson(pinned));
  const { folders, ignored } = await discoverCaptureFolders(captures, deps.config.capturePrefix, {
    ...(schedule.endpoints ? { endpoints: schedule.endpoints } : {}),
    ...(schedule.variants ? { variants: schedule.variants } : {}),
  });
  if (ignored.length > 0)
    deps.logger.info('capture folders not read', {
      schedule: schedule.name,
      ignored: ignored.slice(0, 20),
      count: ignored.length,
    });
  const { files, skipped } = await listWindowFiles(captures, folders, hourPartitions(range));
  const listed: WindowFiles = { v: 1, files, skipped, folders: folders.map((f) => f.prefix) };
  if (await deps.store.putIfAbsent(key, JSON.stringify(listed), 'application/json')) return listed;
  // Another attempt pinned its list first: use that one.
  return windowFilesSchema.parse(decodeJson((await deps.store.get(key)) as Uint8Array));
}

/** Where the window's captures are read: the deps' own, else the configured capture bucket. */
function captureObjectsOf(deps: PlanDeps): CaptureObjects {
  if (deps.captures) return deps.captures;
  if (!deps.config.captureBucket)
    throw new PermanentError('no capture bucket configured (CAPTURE_BUCKET): scheduled runs cannot read captures');
  if (!deps.s3) throw new Error('plan deps: neither captures nor an S3 client');
  return s3CaptureObjects(deps.s3, deps.config.captureBucket);
}

function runInfoOf(schedule: ScheduleConfig, message: PlanMessage, range: WindowRange): ScheduledRunInfo {
  return scheduledRunInfoSchema.parse({
    name: schedule.name,
    scheduledTime: new Date(Date.parse(message.scheduledTime)).toISOString(),
    timezone: schedule.timezone,
    window: { start: new Date(range.startMs).toISOString(), end: new Date(range.endMs).toISOString() },
    targets: schedule.targets,
    dispatch: schedule.dispatch,
  });
}

function planOptionsOf(runId: string, schedule: ScheduleConfig, config: RuntimeConfig, kind: TargetKind): PlanOptions {
  return {
    runId,
    targetKind: kind,
    timeScale: schedule.timeScale,
    intraSecond: config.intraSecond,
    forceStreaming: config.forceStreaming,
    ...(config.modelOverride ? { modelOverride: config.modelOverride } : {}),
    ...(schedule.sample !== undefined ? { sampleRate: schedule.sample } : {}),
    ...(schedule.limit !== undefined ? { limit: schedule.limit } : {}),
    ...(schedule.amplify !== undefined ? { amplify: schedule.amplify } : {}),
  };
}

async function planWindowRun(message: PlanMessage, deps: PlanDeps): Promise<void> {
  const { config, logger, store } = deps;
  const schedule = config.schedules.find((s) => s.name === message.schedule);
  if (!schedule)
    throw new PermanentError(
      `no schedule named ${message.schedule} in this deployment (${config.schedules.map((s) => s.name).join(', ') || 'none'})`,
    );
  const targets = targetsOf(schedule, config);
  const range = rangeOf(schedule, message.scheduledTime);
  const runId = windowRunId(schedule.name, message.scheduledTime);
  const info = runInfoOf(schedule, message, range);
  if (await store.get(runRecordKey(runId))) {
    logger.info('window run already scheduled', { runId, schedule: schedule.name, scheduledTime: info.scheduledTime });
    return;
  }
  const captures = captureObjectsOf(deps);
  const empty = async (reason: string, report: IngestReport): Promise<void> => {
    await writeIngestReport(store, runPrefix(runId), report);
    // The trend page gets its charts from the bundled uPlot text, as the collector's does.
    await (deps.recordEmptyRun ?? recordEmptyRun)({
      store,
      notifier: deps.notifier,
      clock: deps.clock,
      runId,
      info,
      reason,
      resultsBucket: config.resultsBucket,
      chartAssets: BUNDLED_CHART_ASSETS,
    });
    logger.info('window run empty', { runId, schedule: schedule.name, window: info.window, reason });
  };

  const listed = await windowFiles(deps, captures, schedule, runId, range);
  const listingSkipped = listed.skipped.map((s) => ({ file: captures.describe(s.key), reason: s.reason }));
  if (listed.files.length === 0) {
    // The report of no file read: zero totals, the listing's skipped files.
    return empty('no captures in the window', { ...new IngestReportBuilder().build(), skippedFiles: listingSkipped });
  }

  // Targets of different kinds take different records (plan.ts rule 6): each kind gets its
  // own plan of the same entries, as in ingest.
  const setup = runSetupOf(config, targets, schedule.amplify ?? 1);
  const kinds = targetKinds(setup.targets);
  const planOptions = planOptionsOf(runId, schedule, config, kinds[0] as TargetKind);
  const pass = await readWindow(captures, listed.files as CaptureObjectInfo[], range, {
    ...planOptions,
    kinds,
    nowMs: Number(deps.clock.nowNs() / 1_000_000n),
  });
  const report = {
    ...pass.report,
    skippedFiles: [...listingSkipped, ...pass.report.skippedFiles],
    window: pass.counts,
    captures: pass.filesRead,
  };
  const taken = pass.plan.entries.some((e) => kinds.some((kind) => !e.record.verdicts[kind]));
  if (pass.counts.inWindow === 0) return empty('no captures in the window', report);
  if (pass.plan.entries.length === 0) return empty('no requests in the window after duplicates and sampling', report);
  if (!taken) return empty('no requests in the window that the targets take', report);
  const names = targets.map((t) => t.name);
  const sequential = schedule.dispatch === 'sequential';
  const offsets = dispatchOffsetsMs(names, schedule.dispatch, pass.plan.durationMs, config.requestTimeoutMs);
  await dispatchCapture(deps, {
    runId,
    setup,
    pass,
    planOptions,
    ...(sequential ? { targetStartOffsetsMs: offsets } : {}),
    startMoves: true,
    ingestReport: report,
    inputConfig: {
      mode: 'window',
      captures: pass.filesRead,
      schedule: info,
      ...(schedule.amplify !== undefined ? { amplify: schedule.amplify } : {}),
      ...(sequential ? { start_offsets_ms: offsets } : {}),
    },
    log: {
      message: 'window run planned',
      fields: {
        schedule: schedule.name,
        scheduledTime: info.scheduledTime,
        window: info.window,
        files: pass.filesRead.length,
        inWindow: pass.counts.inWindow,
        outsideWindow: pass.counts.outsideWindow,
        dispatch: schedule.dispatch,
      },
    },
  });
}

/** The plan message of an SQS record, or why it is not one. */
function parsePlanMessage(body: string): { ok: true; message: PlanMessage } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const parsed = planMessageSchema.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      reason: parsed.error.issues.map((i) => `${i.path.join('.') || '(message)'}: ${i.message}`).join('; '),
    };
  return { ok: true, message: parsed.data };
}

export function makePlanHandler(getDeps: () => PlanDeps) {
  const processor = new BatchProcessor(EventType.SQS);
  const recordHandler = async (record: SQSRecord): Promise<void> => {
    const deps = getDeps();
    const parsed = parsePlanMessage(record.body);
    if (!parsed.ok)
      return deps.logger.warn('plan message ignored', { messageId: record.messageId, reason: parsed.reason });
    try {
      await planWindowRun(parsed.message, deps);
    } catch (error) {
      if (!isFinal(error)) throw error;
      deps.logger.error('scheduled run not planned', {
        messageId: record.messageId,
        schedule: parsed.message.schedule,
        scheduledTime: parsed.message.scheduledTime,
        reason: error.message,
      });
    }
  };
  return (event: SQSEvent, context: Context) => processPartialResponse(event, recordHandler, processor, { context });
}

export const handler = makePlanHandler(defaultDeps);
