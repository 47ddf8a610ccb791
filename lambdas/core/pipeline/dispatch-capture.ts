/**
 * The one dispatch path of the pipeline's runs (a capture file's, handlers/ingest.ts; a
 * scheduled window's, handlers/plan.ts): from pass 1 (capture-pass.ts) to each target kind's
 * plan, the run dispatched (dispatch.ts: shards, their messages, the run record, the ingest
 * report with the run's capacity), the collector told, the capacity said where an operator
 * looks (logCapacity) and the outcome logged. Idempotent as dispatchRun is: a run already
 * recorded is a `duplicate` that sends nothing. The deployment's settings come in as a
 * RunSetup (handlers/run-input.ts runSetupOf): core reads no config.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Clock, MessageQueue, ObjectStore } from '../../ports';
import { ingestMetricSets, type MetricSet } from '../metrics/cloudwatch';
import type { PlanOptions } from '../plan/plan';
import type { IngestReport, TargetKind } from '../types';
import type { CapacityReport } from './capacity';
import { capturePlans, type CapturePass } from './capture-pass';
import { collectMessage } from './collect';
import { sendAll } from './common';
import { dispatchRun, type DispatchablePlan, type DispatchResult, type DispatchRunArgs } from './dispatch';

/** Where a run's capacity metrics go (adapters/aws/cloudwatch-metrics.ts in AWS). */
export interface MetricsPublisher {
  publish(sets: readonly MetricSet[], timestampMs: number): void;
}

/** What dispatching a run uses of the deps. */
export interface CaptureRunDeps {
  store: ObjectStore;
  replayQueue: MessageQueue;
  collectQueue: MessageQueue;
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** The run's capacity metrics; none written without them. */
  metrics?: MetricsPublisher | undefined;
}

/** A target of a run: its name, and the kind of plan it takes (plan.ts rule 6). */
export interface RunTarget {
  name: string;
  kind: TargetKind;
}

/** What a run takes of the deployment's settings. */
export interface RunSetup extends Pick<DispatchRunArgs, 'leadMs' | 'graceMs' | 'sharding' | 'ramp' | 'fireCapacity'> {
  /** In order: the first one's kind is the run's plan, a target of another kind gets its kind's. */
  targets: RunTarget[];
  /** The run record's inputConfig every run carries: `tool` first, then the shared settings. */
  inputConfig: Record<string, unknown>;
  /** The metrics' `Stack` dimension; no metrics without it. */
  stackName: string | undefined;
}

/** One run to dispatch: what differs between a file's run and a window's. */
export interface CaptureRun {
  runId: string;
  setup: RunSetup;
  /** Pass 1, indexed for every kind of the targets (targetKinds). */
  pass: Pick<CapturePass, 'plan' | 'readers' | 'notScheduled'>;
  /** The plan options of pass 1 (each kind's plan reads its bodies back with its own targetKind). */
  planOptions: PlanOptions;
  /** Default: `lead` from now (the slow part, pass 1, is done). */
  startNs?: bigint;
  /** Mirror mode: the capture hour whose roll-up the run joins. */
  hour?: string;
  /** Whether the ramp may start the run later than asked (a mirror keeps the capture's timeline). */
  startMoves: boolean;
  /** Sequential dispatch: each target's start after the run's. */
  targetStartOffsetsMs?: Record<string, number>;
  /** Written by dispatch with the lanes against the fire function's concurrency. */
  ingestReport: IngestReport;
  /** The run's own inputConfig fields (its mode first), between the tool and the shared settings. */
  inputConfig: Record<string, unknown>;
  /** The outcome's log line and the run's own fields in it. */
  log: { message: string; fields: Record<string, unknown> };
}

/** The target kinds of a run, in the order of their first target: pass 1 indexes every one. */
export function targetKinds(targets: readonly RunTarget[]): TargetKind[] {
  return [...new Set(targets.map((t) => t.kind))];
}

/** Dispatches a run from its pass 1; see the file's header. */
export async function dispatchCapture(deps: CaptureRunDeps, run: CaptureRun): Promise<DispatchResult> {
  const { logger, clock } = deps;
  const { runId, setup } = run;
  const kinds = targetKinds(setup.targets);
  const plans = capturePlans(run.pass, kinds, run.planOptions);
  const names = setup.targets.map((t) => t.name);
  const targetPlans = Object.fromEntries(
    setup.targets.filter((t) => t.kind !== kinds[0]).map((t) => [t.name, plans.get(t.kind) as DispatchablePlan]),
  );
  const { tool, ...settings } = setup.inputConfig;
  const result = await dispatchRun({
    runId,
    plan: plans.get(kinds[0] as TargetKind) as DispatchablePlan,
    targets: names,
    ...(Object.keys(targetPlans).length > 0 ? { targetPlans } : {}),
    ...(run.targetStartOffsetsMs ? { targetStartOffsetsMs: run.targetStartOffsetsMs } : {}),
    startNs: run.startNs ?? clock.nowNs() + BigInt(setup.leadMs) * 1_000_000n,
    ...(run.hour !== undefined ? { hour: run.hour } : {}),
    leadMs: setup.leadMs,
    graceMs: setup.graceMs,
    ...(setup.sharding ? { sharding: setup.sharding } : {}),
    ...(setup.ramp ? { ramp: setup.ramp } : {}),
    startMoves: run.startMoves,
    ingestReport: run.ingestReport,
    ...(setup.fireCapacity ? { fireCapacity: setup.fireCapacity } : {}),
    // What the results' AIPerf input_config is made of (collect.ts pipelineInputConfig).
    inputConfig: { tool, ...run.inputConfig, ...settings },
    notScheduledByReason: run.pass.notScheduled,
    store: deps.store,
    queue: deps.replayQueue,
    clock,
  });
  if (result.status === 'scheduled') {
    await sendCollectMessages(deps.collectQueue, runId, names, result);
    logCapacity(logger, {
      runId,
      stackName: setup.stackName,
      capacity: result.capacity,
      nowMs: Number(clock.nowNs() / 1_000_000n),
      metrics: deps.metrics,
    });
  }
  logger.info(run.log.message, {
    runId,
    ...run.log.fields,
    status: result.status,
    scheduled: run.pass.plan.entries.length,
    shards: result.shards,
    messages: result.messages,
    ...(result.status === 'scheduled'
      ? { lateShards: result.emission.lateShards, maxEmissionLateMs: Math.round(result.emission.maxLateMs) }
      : {}),
  });
  return result;
}

/**
 * The deadline check finalises the run even if a worker dies with its shard. A target that
 * takes none of the records has nothing to wait for: it is collected now.
 */
async function sendCollectMessages(
  queue: MessageQueue,
  runId: string,
  targets: readonly string[],
  result: Extract<DispatchResult, { status: 'scheduled' }>,
): Promise<void> {
  const now = targets.filter((t) => result.shardsByTarget[t] === 0);
  await sendAll(queue, [
    ...targets.map((t) => collectMessage(runId, t, result.deadlineNs)),
    ...now.map((t) => ({ ...collectMessage(runId, t, 0n), id: `now-${t}`.replace(/[^A-Za-z0-9_-]/g, '_') })),
  ]);
}

/**
 * A run's capacity where an operator looks: a warning naming the setting to raise (and its
 * value) when the fire function cannot start every lane on time, else one line at info; and,
 * whatever the log level, the run's expected lateness and whether it is undersized as
 * CloudWatch metrics (EMF through Powertools' Metrics, adapters/aws/cloudwatch-metrics.ts) with
 * the stack's name as their `Stack` dimension.
 */
export function logCapacity(
  logger: Pick<Logger, 'info' | 'warn'>,
  o: {
    runId: string;
    stackName: string | undefined;
    capacity: CapacityReport | undefined;
    nowMs: number;
    metrics?: MetricsPublisher | undefined;
  },
): void {
  const c = o.capacity;
  if (!c) return;
  const fields = {
    runId: o.runId,
    lanesAtOnce: c.lanesAtOnce,
    concurrency: c.concurrency,
    lateLanes: c.lateLanes,
    lateRequests: c.lateRequests,
    ...(c.raise ? { raise: c.raise.setting, raiseTo: c.raise.value } : {}),
    reason: c.reason,
    expectedLatenessSeconds: c.expectedLatenessSeconds,
  };
  if (!c.onTime && c.raise)
    logger.warn(
      `run expected late by at least ${c.expectedLatenessSeconds} s: raise ${c.raise.setting} to ${c.raise.value}`,
      fields,
    );
  else logger.info('run capacity: every lane starts on time', fields);
  if (o.stackName && o.metrics) o.metrics.publish(ingestMetricSets(o.stackName, c), o.nowMs);
}
