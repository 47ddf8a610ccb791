/**
 * One replay run, start to finish, through ports only: plan the captured records for each
 * target, fire them on the original timing, turn outcomes into AIPerf records and
 * aggregates, and write every artifact. The local CLI drives this directly; the Lambda
 * pipeline runs the same pieces split across its stages.
 *
 * Order of the writes: the ingest report first; each target's results as it finishes; then
 * the run's own files (`beforeManifests`: comparison, report); the targets' manifests last.
 * A run cut short at any point has no manifest, so none can claim a complete run.
 */
import type { ArtifactStore, Clock, TargetClient } from '../../ports';
import { writeIngestReport, writeTargetData, writeTargetManifest, type ManifestWithLag } from '../export/artifacts';
import { buildManifest, runSpan } from '../export/manifest';
import { runFireLoop, type FireLoopOptions, type LatePolicy } from '../fire/fire-loop';
import { deterministicUuid } from '../ids';
import { aggregate, type Aggregates } from '../metrics/aggregate';
import { computeProfileRecord } from '../metrics/record-metrics';
import { buildPlan, type PlanOptions } from '../plan/plan';
import type { Planner } from '../plan/read-back';
import type {
  CaptureRecord,
  FireOutcome,
  IngestReport,
  ProfileRecord,
  ReplayPlan,
  RunManifest,
  ScheduledRequest,
  TargetKind,
} from '../types';

export interface ReplayTarget {
  client: TargetClient;
  kind: TargetKind;
}

/**
 * Where the targets' plans come from: the captured records in memory (buildPlan), or a
 * planner (two-pass: an index of the records, the selected ones read back; see
 * `twoPassPlanner`), which gives the same plans without holding every body.
 */
export type PlanSource = { records: readonly CaptureRecord[]; planner?: never } | { planner: Planner; records?: never };

export type ReplayRunOptions = ReplayRunSettings & PlanSource;

/**
 * Fires one target's scheduled requests. The contract is runFireLoop's: exactly one outcome
 * per request, returned in plan order, each also given to `options.onOutcome` as it comes.
 * `target.index` is the target's position in `ReplayRunSettings.targets`.
 */
export type FireRunner = (
  requests: readonly ScheduledRequest[],
  options: FireLoopOptions,
  target: { index: number; name: string },
) => Promise<FireOutcome[]>;

export interface ReplayRunSettings {
  runId: string;
  /** Written as the run's ingest_report.json, with the plan's `timing` added. */
  ingestReport: IngestReport;
  plan: Omit<PlanOptions, 'runId' | 'targetKind'>;
  targets: readonly ReplayTarget[];
  clock: Clock;
  store: ArtifactStore;
  /** Delay between planning and schedule zero, so the first requests are not already late. */
  leadMs: number;
  /**
   * `parallel` (default): every target gets each request at the same instant, from one
   * schedule zero. `sequential`: the whole schedule to the first target, then to the next,
   * each from its own schedule zero (targets that cannot share the machine or the network).
   */
  dispatch?: 'parallel' | 'sequential';
  maxInFlight?: number;
  latePolicy?: LatePolicy;
  goodputSlos?: Record<string, number>;
  /** Stops scheduling: requests not yet sent are dropped as `aborted` (fire-loop.ts). */
  signal?: AbortSignal;
  /** Cancels requests in flight: each is recorded as cancelled (CancelledError, 499, was_cancelled). */
  cancelSignal?: AbortSignal;
  /**
   * Runs once every target's results are written and before any manifest is: the run-level
   * files (comparison, report) go here, so that the manifests are the last files written.
   */
  beforeManifests?: (targets: readonly TargetRunResult[]) => Promise<void>;
  /** What the user asked for, per target, recorded as `input_config` in its profile_export_aiperf.json. */
  inputConfig: (target: string) => unknown;
  /**
   * Another way to fire than runFireLoop in this thread (the CLI's worker threads,
   * lambdas/local/fire-workers.ts), chosen from every target's plan. Awaited after planning
   * and before any schedule zero is taken, so that whatever it starts is ready before the
   * first request is due. Null: this thread.
   */
  prepareFire?: (plans: readonly ReplayPlan[], dispatch: 'parallel' | 'sequential') => Promise<FireRunner | null>;
  onPlanned?: (target: string, plan: ReplayPlan, startNs: bigint) => void;
  onOutcome?: (target: string, outcome: FireOutcome) => void;
  /** Passed to each target's fire loop in this thread (FireLoopOptions.beforeStart). */
  beforeFireStart?: () => void;
}

export interface TargetRunResult {
  target: string;
  plan: ReplayPlan;
  manifest: ManifestWithLag;
  aggregates: Aggregates;
  files: string[];
  /** This target's schedule zero, epoch ns. */
  startNs: bigint;
  /** Every scheduled request's outcome, in plan order. */
  outcomes: FireOutcome[];
  /** The records written to profile_export.jsonl, in plan order. */
  records: ProfileRecord[];
}

export interface ReplayRunResult {
  runId: string;
  ingestReportKey: string;
  targets: TargetRunResult[];
}

const WORKER_ID = 'worker_local';
const RECORD_PROCESSOR_ID = 'record_processor_local';

export async function runReplay(options: ReplayRunOptions): Promise<ReplayRunResult> {
  const runPrefix = `${options.runId}/`;
  const { plans, ingestReportKey } = await planTargets(options, runPrefix);
  const leadNs = BigInt(Math.round(options.leadMs * 1e6));
  const fire: FireRunner =
    (await options.prepareFire?.(plans, options.dispatch ?? 'parallel')) ??
    ((requests, loopOptions) => runFireLoop(requests, loopOptions));
  const run: TargetRun = {
    options,
    runPrefix,
    fire,
    duplicates: options.ingestReport.totals.rejectedByReason.duplicate ?? 0,
  };

  const targets: TargetRunResult[] = [];
  if (options.dispatch === 'sequential') {
    for (const [i, target] of options.targets.entries()) {
      targets.push(await runTarget(run, target, i, plans[i] as ReplayPlan, options.clock.nowNs() + leadNs));
    }
  } else {
    // One schedule zero for every target: A and B see each request at the same instant.
    const startNs = options.clock.nowNs() + leadNs;
    targets.push(
      ...(await Promise.all(
        options.targets.map((target, i) => runTarget(run, target, i, plans[i] as ReplayPlan, startNs)),
      )),
    );
  }
  await options.beforeManifests?.(targets);
  for (const target of targets) {
    target.files.push(await writeTargetManifest(options.store, `${runPrefix}${target.target}/`, target));
  }
  return { runId: options.runId, ingestReportKey, targets };
}

/** Every target's plan, and the run's ingest report written whether or not planning succeeds. */
async function planTargets(
  options: ReplayRunOptions,
  runPrefix: string,
): Promise<{ plans: ReplayPlan[]; ingestReportKey: string }> {
  // One target after the other: a planner reads the records back once, at the first.
  const plans: ReplayPlan[] = [];
  let ingestReportKey: string;
  try {
    for (const target of options.targets) {
      const planOptions: PlanOptions = { ...options.plan, runId: options.runId, targetKind: target.kind };
      plans.push(options.planner ? await options.planner(planOptions) : buildPlan(options.records, planOptions));
    }
  } finally {
    // Written even when planning fails (a capture file changed under a planner).
    const timing = plans[0]?.timing;
    ingestReportKey = await writeIngestReport(
      options.store,
      runPrefix,
      timing ? { ...options.ingestReport, timing } : options.ingestReport,
    );
  }
  return { plans, ingestReportKey };
}

/** What every target of one run shares. */
interface TargetRun {
  options: ReplayRunOptions;
  runPrefix: string;
  fire: FireRunner;
  /** Records rejected as duplicates at ingest, reported in each target's manifest. */
  duplicates: number;
}

/** One target's requests fired from `startNs`, its outcomes turned into records, aggregates and files (the manifest aside). */
async function runTarget(
  run: TargetRun,
  target: ReplayTarget,
  index: number,
  plan: ReplayPlan,
  startNs: bigint,
): Promise<TargetRunResult> {
  const { options } = run;
  const name = target.client.name;
  options.onPlanned?.(name, plan, startNs);
  const dropped = droppedOutcomes(options, name, plan, startNs);
  const fired = await run.fire(
    plan.requests,
    {
      runId: options.runId,
      target: target.client,
      clock: options.clock,
      startNs,
      workerId: WORKER_ID,
      ...(options.maxInFlight !== undefined ? { maxInFlight: options.maxInFlight } : {}),
      ...(options.latePolicy !== undefined ? { latePolicy: options.latePolicy } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.cancelSignal !== undefined ? { cancelSignal: options.cancelSignal } : {}),
      onOutcome: (outcome) => options.onOutcome?.(name, outcome),
      ...(options.beforeFireStart ? { beforeStart: options.beforeFireStart } : {}),
    },
    { index, name },
  );
  const outcomes = [...fired, ...dropped].sort((a, b) => a.request.index - b.request.index);
  const records = outcomes
    .filter((outcome) => outcome.result !== null)
    .map((outcome) => computeProfileRecord(outcome, RECORD_PROCESSOR_ID));
  const aggregates = aggregate(records, options.goodputSlos ? { goodputSlos: options.goodputSlos } : undefined);
  const { startedAt, endedAt } = runSpan(startNs, options.clock.nowNs());
  const notScheduledByReason: RunManifest['notScheduledByReason'] = { ...plan.excluded };
  if (run.duplicates > 0) notScheduledByReason.duplicate = run.duplicates;
  const manifest = buildManifest({
    runId: options.runId,
    target: name,
    outcomes,
    notScheduledByReason,
    startedAt,
    endedAt,
  });
  const files = await writeTargetData(options.store, `${run.runPrefix}${name}/`, {
    records,
    aggregates,
    manifest,
    inputConfig: options.inputConfig(name),
    wasCancelled: (options.signal?.aborted ?? false) || (options.cancelSignal?.aborted ?? false),
    startTime: startedAt,
    endTime: endedAt,
  });
  return { target: name, plan, manifest, aggregates, files, startNs, outcomes, records };
}

/** The plan's requests this target cannot take, each an outcome with its reason and no result. */
function droppedOutcomes(options: ReplayRunOptions, name: string, plan: ReplayPlan, startNs: bigint): FireOutcome[] {
  return plan.incompatible.map(({ request, reason }): FireOutcome => {
    const outcome: FireOutcome = {
      request,
      target: name,
      requestId: deterministicUuid(options.runId, name, request.index),
      scheduledNs: startNs + BigInt(Math.round(request.offsetMs * 1e6)),
      workerId: WORKER_ID,
      result: null,
      dropReason: reason,
    };
    options.onOutcome?.(name, outcome);
    return outcome;
  });
}
