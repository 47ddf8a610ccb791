/**
 * The run's root: when every target of a pipeline run is final, its comparison.json (two
 * targets or more) and report.html under runs/<run>/, built by the same code as the local
 * CLI's (analyse, renderReportHtml, writeRunAnalysis); for a scheduled run, its history line,
 * trend page and summary (core/scheduled-runs/history.ts); and the figures of the run's
 * CloudWatch metrics, which the collect handler writes (core/metrics/cloudwatch.ts).
 * When a target counts as final, why finalisers at once or again are harmless, the memory
 * bound and how drops get their pair's identity: docs/deploy.md#the-runs-comparison-and-report.
 */
import { createHash } from 'node:crypto';
import type { Clock, Log, Notifier, ObjectStore } from '../../ports';
import { analyse, TargetAccumulator } from '../compare/analysis';
import { recordIdentity } from '../compare/columns';
import {
  COMPARED_METRICS,
  DEFAULT_COMPARE_OPTIONS,
  OUTCOME,
  type CompareOptions,
  type ComparedMetricTag,
  type ComparisonDocument,
} from '../compare/types';
import { ARTIFACT_FILES } from '../export/artifacts';
import { writeRunAnalysis, RUN_FILES } from '../export/run-artifacts';
import { runEndedAtMs, targetFiguresOf, type RunFigures } from '../metrics/cloudwatch';
import { summarize } from '../metrics/stats';
import type { ChartAssets } from '../report/page';
import { renderReportHtml } from '../report/report-page';
import type { ReportTargetSummary } from '../report/types';
import { scheduledRunInfoSchema } from '../scheduled-runs/contract';
import { historyLineOf, recordScheduledRun, type AppendRetry, type TargetOutcome } from '../scheduled-runs/history';
import { decodeJson, INGEST_SHARD, mapLimited, runRecordSchema, shardsOf, type RunRecord } from './common';
import { resultsKey, resultsPrefix, runPrefix, runRecordKey, targetPrefix, WORK_ROOT } from './keys';
import { decodeResultLines, resultRequestId } from './results';

/** Shard results objects read at once (as the collector's gatherRun). */
export const ANALYSIS_READ_CONCURRENCY = 16;

export const analysisMarkerKey = (runId: string) => `${WORK_ROOT}${runId}/_analysis.json`;

export interface RunAnalysisDeps {
  store: ObjectStore;
  clock: Clock;
  /** Scheduled runs' summaries; null when the deployment names no topic. */
  notifier: Notifier | null;
  /** For the s3:// locations in the summary. */
  resultsBucket: string;
  chartAssets: ChartAssets;
  log?: Log;
  compare?: CompareOptions;
  retry?: AppendRetry;
}

export type RunAnalysisStatus = 'unknown-run' | 'not-final' | 'unchanged' | 'analysed';

export interface RunAnalysisResult {
  status: RunAnalysisStatus;
  /** Keys written under runs/<run>/. */
  keys: string[];
  comparison: ComparisonDocument | null;
  /** Scheduled runs: whether this call appended the history line and published the summary. */
  history?: { outcome: 'appended' | 'present'; published: boolean; subject: string };
  /**
   * What the run's CloudWatch metrics say (core/metrics/cloudwatch.ts runMetricSets), once: for
   * an analysed run, and for a scheduled one only from the call that appended its history line
   * (two finalisers at once write its metrics once). `endedAtMs`: the latest target's end, the
   * metrics' timestamp (the same for a second finaliser of the same run).
   */
  figures?: RunFigures & { endedAtMs: number | null };
}

const utf8 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');

/** One target as gathered for the analysis. */
interface Gathered {
  name: string;
  accumulator: TargetAccumulator;
  summary: ReportTargetSummary;
  missingShards: number;
}

/** Drops waiting for their identity until every target has been read. */
interface PendingDrop {
  target: number;
  index: number;
  reason: string;
  scheduledNs: bigint;
}

/**
 * Builds the analysis of `runId` when all its targets are final. Safe to call from every
 * finaliser of the run, at once or again.
 */
export async function analyseRunIfFinal(runId: string, deps: RunAnalysisDeps): Promise<RunAnalysisResult> {
  const raw = await deps.store.get(runRecordKey(runId));
  if (!raw) return { status: 'unknown-run', keys: [], comparison: null };
  const run = runRecordSchema.parse(decodeJson(raw));

  // Final targets, and the fingerprint of what their manifests account for.
  const manifests: unknown[] = [];
  for (const target of run.targets) {
    const bytes = await deps.store.get(targetPrefix(runId, target) + ARTIFACT_FILES.manifest);
    if (!bytes) return { status: 'not-final', keys: [], comparison: null };
    manifests.push(decodeJson(bytes));
  }
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([run.targets, manifests.map(accountingOf)]))
    .digest('hex');
  if ((await markedFingerprint(deps.store, runId)) === fingerprint)
    return { status: 'unchanged', keys: [], comparison: null };

  const targets = await gatherTargets(runId, run, deps.store);
  const generatedAt = new Date(Number(deps.clock.nowNs() / 1_000_000n)).toISOString();
  const scheduled = scheduledRunInfoSchema.safeParse((run.inputConfig as { schedule?: unknown } | null)?.schedule);
  const info = scheduled.success ? scheduled.data : null;
  const title = info ? `capture-replay | schedule ${info.name} | ${info.scheduledTime}` : `capture-replay | ${runId}`;
  const targetStats = targets.map((t) => statsOf(t));
  const analysis = analyse({
    title,
    runId,
    generatedAt,
    compare: deps.compare ?? DEFAULT_COMPARE_OPTIONS,
    targets: targets.map((t) => ({ accumulator: t.accumulator, summary: t.summary })),
  });
  const keys = await writeRunAnalysis(
    deps.store,
    runPrefix(runId),
    analysis.comparison,
    renderReportHtml(analysis.report, deps.chartAssets),
  );
  deps.log?.info('run analysis written', { runId, keys, targets: run.targets });

  let history: RunAnalysisResult['history'];
  if (info) {
    const line = historyLineOf({
      runId,
      info,
      status: targets.some((t) => t.missingShards > 0) ? 'deadline' : 'complete',
      reportKey: runPrefix(runId) + RUN_FILES.report,
      targets: targets.map((t, i) => ({ ...t.summary, metrics: targetStats[i] as TargetOutcome['metrics'] })),
      comparison: analysis.comparison,
    });
    history = await recordScheduledRun(
      {
        store: deps.store,
        notifier: deps.notifier,
        clock: deps.clock,
        resultsBucket: deps.resultsBucket,
        chartAssets: deps.chartAssets,
        ...(deps.retry ? { retry: deps.retry } : {}),
      },
      line,
    );
    deps.log?.info('schedule history', {
      runId,
      schedule: info.name,
      outcome: history.outcome,
      published: history.published,
    });
  } else if (run.inputConfig && typeof run.inputConfig === 'object' && 'schedule' in run.inputConfig) {
    // A run that says it is scheduled but whose info cannot be read: its report stands, the history cannot take it.
    deps.log?.warn('run record names a schedule that cannot be read: no history line', {
      runId,
      reason: scheduled.error?.issues[0]?.message ?? 'invalid',
    });
  }
  // The metrics once: a scheduled run's from the finaliser that appended its history line.
  const figures =
    !info || history?.outcome === 'appended'
      ? await runFigures(runId, run, manifests, info?.name ?? null, analysis.comparison, deps.store)
      : null;
  await deps.store.put(
    analysisMarkerKey(runId),
    JSON.stringify({ v: 1, fingerprint, at: generatedAt }),
    'application/json',
  );
  return {
    status: 'analysed',
    keys,
    comparison: analysis.comparison,
    ...(history ? { history } : {}),
    ...(figures ? { figures } : {}),
  };
}

/**
 * The run's figures for its CloudWatch metrics: each target's accounting (its manifest, read
 * above) and AIPerf's aggregates the collector wrote (profile_export_aiperf.json), not
 * computed again; the comparison just made.
 */
async function runFigures(
  runId: string,
  run: RunRecord,
  manifests: readonly unknown[],
  schedule: string | null,
  comparison: ComparisonDocument | null,
  store: ObjectStore,
): Promise<NonNullable<RunAnalysisResult['figures']>> {
  const targets = await Promise.all(
    run.targets.map(async (target, i) => {
      const bytes = await store.get(targetPrefix(runId, target) + ARTIFACT_FILES.aiperfJson);
      let aggregates: unknown = null;
      try {
        aggregates = bytes ? decodeJson(bytes) : null;
      } catch {
        aggregates = null; // its counts still stand
      }
      return targetFiguresOf(target, manifests[i], aggregates);
    }),
  );
  return { schedule, targets, comparison, endedAtMs: runEndedAtMs(manifests) };
}

/** The fingerprint the last complete analysis recorded; null when none (or unreadable: then analysed again). */
async function markedFingerprint(store: ObjectStore, runId: string): Promise<string | null> {
  const bytes = await store.get(analysisMarkerKey(runId));
  if (!bytes) return null;
  try {
    const fingerprint = (decodeJson(bytes) as { fingerprint?: unknown } | null)?.fingerprint;
    return typeof fingerprint === 'string' ? fingerprint : null;
  } catch {
    return null;
  }
}

/** The part of a target's manifest the analysis depends on (not its times). */
function accountingOf(manifest: unknown): unknown {
  const m = (manifest ?? {}) as Record<string, unknown>;
  return [m.scheduled, m.succeeded, m.failed, m.dropped, m.droppedByReason, m.failedByType];
}

/** p50, p90, p99 and mean of each compared metric over a target's succeeded requests. */
function statsOf(t: Gathered): TargetOutcome['metrics'] {
  const columns = t.accumulator.columns.build();
  const out: TargetOutcome['metrics'] = {};
  for (const { tag } of COMPARED_METRICS) {
    const values: number[] = [];
    const column = columns.metrics[tag];
    for (let i = 0; i < column.length; i++)
      if (columns.outcome[i] === OUTCOME.succeeded && Number.isFinite(column[i] as number))
        values.push(column[i] as number);
    const s = summarize(values);
    if (s) out[tag as ComparedMetricTag] = { p50: s.p50, p90: s.p90, p99: s.p99, mean: s.avg };
  }
  return out;
}

/**
 * Each target's accumulator, built from its shard results a window of objects at a time, keeping only the comparison's
 * columns (no records, no bodies): the same input as gatherRun, never all of it at once. Drops carry the plan index,
 * which every target shares (the plans come from the same records, dispatch.ts): a drop takes the event id of any
 * target's record of that index. A shard that never reported has no indices in the store: a target of the same plan
 * that reported it lends its indices (in order), else its requests keep an identity of their own (`only_in_*`).
 */
async function gatherTargets(runId: string, run: RunRecord, store: ObjectStore): Promise<Gathered[]> {
  const eventByIndex = new Map<number, string>();
  /** Per target, per shard reported: the plan indices it held, sorted. */
  const shardIndices: Map<string, number[]>[] = [];
  const drops: PendingDrop[] = [];
  const lost: { target: number; shardId: string; requests: number }[] = [];
  const gathered: Gathered[] = [];

  for (const [ti, target] of run.targets.entries()) {
    const accumulator = new TargetAccumulator(target);
    const summary: ReportTargetSummary = {
      name: target,
      scheduled: 0,
      succeeded: 0,
      failed: 0,
      dropped: 0,
      droppedByReason: {},
      failedByType: {},
    };
    const indices = new Map<string, number[]>();
    shardIndices.push(indices);
    const prefix = resultsPrefix(runId, target);
    const present = new Set((await store.list(prefix)).map((k) => k.slice(prefix.length).replace(/\.jsonl$/, '')));
    const shards = shardsOf(run, target);
    const expected = [INGEST_SHARD, ...shards.map((s) => s.shardId)];
    const reported = expected.filter((id) => present.has(id));
    const seen = new Set<string>();
    const dropped = (reason: string, n: number) => {
      summary.dropped += n;
      summary.droppedByReason[reason] = (summary.droppedByReason[reason] ?? 0) + n;
    };
    // A window of objects at a time, folded in shard order: the first occurrence of a request id wins, as in gatherRun.
    for (let w = 0; w < reported.length; w += ANALYSIS_READ_CONCURRENCY) {
      const ids = reported.slice(w, w + ANALYSIS_READ_CONCURRENCY);
      const objects = await mapLimited(ids, ANALYSIS_READ_CONCURRENCY, async (id) => {
        const key = resultsKey(runId, target, id);
        const bytes = await store.get(key);
        return decodeResultLines(bytes ? utf8(bytes) : '', key);
      });
      objects.forEach((lines, k) => {
        const shardId = ids[k] as string;
        const held: number[] = [];
        for (const line of lines) {
          const requestId = resultRequestId(line);
          if (seen.has(requestId)) continue;
          seen.add(requestId);
          if (line.kind === 'drop') {
            held.push(line.index);
            drops.push({ target: ti, index: line.index, reason: line.dropReason, scheduledNs: line.scheduledNs });
            dropped(line.dropReason, 1);
            continue;
          }
          const { record } = line;
          held.push(record.metadata.session_num);
          if (!eventByIndex.has(record.metadata.session_num))
            eventByIndex.set(
              record.metadata.session_num,
              recordIdentity(record) ?? `plan-index:${record.metadata.session_num}`,
            );
          accumulator.addRecord(record);
          if (record.error) {
            summary.failed++;
            summary.failedByType[record.error.type] = (summary.failedByType[record.error.type] ?? 0) + 1;
          } else summary.succeeded++;
        }
        indices.set(
          shardId,
          held.sort((a, b) => a - b),
        );
      });
    }
    let missingShards = 0;
    for (const shard of shards) {
      if (present.has(shard.shardId)) continue;
      missingShards++;
      lost.push({ target: ti, shardId: shard.shardId, requests: shard.requests });
      dropped('lost', shard.requests);
    }
    gathered.push({ name: target, accumulator, summary, missingShards });
  }

  // Identities, now that every target's records are known.
  for (const d of drops) {
    (gathered[d.target] as Gathered).accumulator.addDropped(
      eventByIndex.get(d.index) ?? `plan-index:${d.index}`,
      d.reason,
      null,
      d.scheduledNs,
      d.index,
    );
  }
  const samePlan = (a: number, b: number) =>
    JSON.stringify(shardsOf(run, run.targets[a] as string)) === JSON.stringify(shardsOf(run, run.targets[b] as string));
  for (const l of lost) {
    const stand = shardIndices.findIndex(
      (m, other) => other !== l.target && samePlan(l.target, other) && m.get(l.shardId)?.length === l.requests,
    );
    const indices = stand >= 0 ? (shardIndices[stand]?.get(l.shardId) as number[]) : null;
    for (let k = 0; k < l.requests; k++) {
      const index = indices?.[k];
      const identity =
        index === undefined ? `lost:${l.shardId}:${k}` : (eventByIndex.get(index) ?? `plan-index:${index}`);
      (gathered[l.target] as Gathered).accumulator.addDropped(identity, 'lost', null, null, index);
    }
  }
  for (const g of gathered) g.summary.scheduled = g.summary.succeeded + g.summary.failed + g.summary.dropped;
  return gathered;
}
