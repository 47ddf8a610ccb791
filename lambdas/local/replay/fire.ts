/**
 * The replay's second pass and its firing: the local composition root around the core's
 * `runReplay` (the selected records read back for the plans, the targets' clients, the system
 * clock, a folder artifact store, fire worker threads when the rate asks for them), with the
 * progress bar and SIGINT/SIGTERM handling (interrupt.ts).
 */
import { FsArtifactStore } from '../../adapters/local/fs-artifact-store';
import { BUNDLED_CHART_ASSETS } from '../../adapters/bundled-chart-assets';
import { cliClock } from '../cli-clock';
import type { Analysis } from '../../core/compare/analysis';
import { writeRunAnalysis } from '../../core/export/run-artifacts';
import { renderReportHtml } from '../../core/report/report-page';
import { runReplay, type ReplayRunOptions, type ReplayRunResult } from '../../core/run/replay';
import type { Clock, TargetClient } from '../../ports';
import { prepareFireWorkers, type FireWorkers } from '../fire-workers';
import { installInterrupt, type RunInterrupt } from '../interrupt';
import { terminalLine } from '../terminal-text';
import { collectBeforeZero, type RehearsalResult } from '../rehearsal';
import { createTargetClient, type TargetClientSpec } from '../target-clients';
import { analyseRun } from './analysis';
import { inputConfigOf, type ReplayConfig } from './config';
import type { CaptureRecord, IngestReport } from '../../core/types';
import { capturesPlanner, type CaptureIndex } from './ingest';
import { fail, type CommandIo } from './io';
import { Progress } from './progress';

/**
 * What the plans are made of: pass 1's index (the selected lines read back then), or records
 * already in memory (a capacity search replays one window of them at every step).
 */
export type PlanInput = CaptureIndex | { inMemory: readonly CaptureRecord[]; ingest: IngestReport };

/** What the firing leaves for the outcome (outcome.ts). */
export interface Fired {
  result: ReplayRunResult;
  /** The comparison and the report, made before the manifests were written; null only by a bug. */
  analysis: Analysis | null;
  /** A fire worker thread failed: its requests not reported are in the results as dropped (lost). */
  workerFailed: boolean;
  interrupt: RunInterrupt;
}

/** Plain data: fire workers build their own clients from the same specs (target-clients.ts). */
function clientSpecs(config: ReplayConfig, apiKey: string | undefined): TargetClientSpec[] {
  return config.targets.map((target): TargetClientSpec => {
    const common = {
      name: target.name,
      timeoutMs: config.request.timeoutMs,
      ...(config.request.responseExcerpts ? {} : { responseExcerptChars: 0 }),
    };
    return target.kind === 'sagemaker'
      ? { ...common, kind: 'sagemaker', sagemaker: target.sagemaker }
      : {
          ...common,
          kind: 'http',
          baseUrl: target.url.toString(),
          path: config.request.path,
          ...(apiKey ? { apiKey } : {}),
        };
  });
}

/** What the run's callbacks learn while it runs. */
interface RunState {
  fireWorkers: FireWorkers | null;
  workerFailed: boolean;
  analysis: Analysis | null;
  planned: number;
}

/**
 * Fires the run; its results, or the exit code of a run that failed on the way (said on
 * stderr). The progress bar goes to `progressTo` (default: stderr): a capacity step keeps what
 * its replay says, and shows its bar on the terminal.
 */
export async function fireReplay(
  config: ReplayConfig,
  io: CommandIo,
  captures: PlanInput,
  apiKey: string | undefined,
  progressTo: NodeJS.WritableStream = io.err,
): Promise<Fired | number> {
  const specs = clientSpecs(config, apiKey);
  const clock = cliClock(config.fire.wait);
  const clients = specs.map((spec) => createTargetClient(spec, clock));
  const state: RunState = { fireWorkers: null, workerFailed: false, analysis: null, planned: 0 };
  const store = new FsArtifactStore(config.out);
  const progress = new Progress(config.progress && Boolean((progressTo as NodeJS.WriteStream).isTTY), progressTo);
  // SIGINT/SIGTERM: stop scheduling, cancel what is in flight after a grace, write everything.
  const interrupt = installInterrupt({
    stderr: io.err,
    ...(config.fire.cancelGraceMs !== null ? { graceMs: config.fire.cancelGraceMs } : {}),
  });
  try {
    const result = await runReplay({
      ...runSettings(config, io, { captures, clients, clock, specs, state, store }),
      signal: interrupt.stop,
      cancelSignal: interrupt.cancel,
      onPlanned: (_target, plan) => {
        state.planned += plan.requests.length + plan.incompatible.length;
        progress.start(state.planned * clients.length);
      },
      onOutcome: (_target, outcome) => progress.tick(outcome),
    });
    return { result, analysis: state.analysis, workerFailed: state.workerFailed, interrupt };
  } catch (error) {
    // E.g. a capture file rewritten between the two passes: said, not a stack trace.
    return fail(io, error);
  } finally {
    progress.stop();
    interrupt.dispose();
    await Promise.all([...clients.map((client) => client.close()), state.fireWorkers?.close()]);
  }
}

interface RunParts {
  captures: PlanInput;
  clients: TargetClient[];
  clock: Clock;
  specs: TargetClientSpec[];
  state: RunState;
  store: FsArtifactStore;
}

/** runReplay's settings from the config: planning, targets, firing, and the run's analysis. */
function runSettings(
  config: ReplayConfig,
  io: CommandIo,
  { captures, clients, clock, specs, state, store }: RunParts,
): ReplayRunOptions {
  const { fire } = config;
  return {
    runId: config.runId,
    // Pass 2: only the selected records' lines are read back, for the plans.
    ...('inMemory' in captures ? { records: captures.inMemory } : { planner: capturesPlanner(captures) }),
    ingestReport: captures.ingest,
    plan: config.plan,
    targets: clients.map((client, i) => ({
      client,
      kind: config.targets[i]?.kind === 'sagemaker' ? ('sagemaker' as const) : ('openai-chat' as const),
    })),
    clock,
    store,
    leadMs: fire.leadMs,
    ...(config.goodput ? { goodputSlos: config.goodput } : {}),
    dispatch: config.dispatch,
    prepareFire: prepareFireWorkers(fire.workers, {
      wait: fire.wait,
      specs,
      ...(fire.maxInFlight !== null ? { maxInFlight: fire.maxInFlight } : {}),
      onError: (message) => {
        state.workerFailed = true;
        io.err.write(`capture-replay: ${message}\n`);
      },
      started: (workers, peak) => {
        state.fireWorkers = workers;
        io.err.write(`Firing from ${workers.size} worker threads (busiest second of the plan: ${peak} requests)\n`);
      },
      rehearsal: fire.rehearsal,
      clock,
      rehearsed: (results, threads) => io.err.write(rehearsalLine(results, threads, clients.length) + '\n'),
      ...('connects' in captures && captures.connects ? { connects: captures.connects } : {}),
      openingAhead: (target, ahead) => io.err.write(openAheadLine(target, ahead, clients.length) + '\n'),
    }),
    // The collection before the first due time, once the connections opened ahead are made
    // (fire-workers.ts, open-ahead.ts): full, or scavenges after a second rehearsal pass (rehearsal.ts).
    beforeFireStart: collectBeforeZero,
    // The comparison and the report before the manifests: the manifests are the last files written.
    beforeManifests: async (targets) => {
      state.analysis = analyseRun(targets, config.runId, config.compare);
      await writeRunAnalysis(
        store,
        `${config.runId}/`,
        state.analysis.comparison,
        renderReportHtml(state.analysis.report, BUNDLED_CHART_ASSETS),
      );
    },
    inputConfig: (name) => inputConfigOf(config, name),
    ...(fire.maxInFlight !== null ? { maxInFlight: fire.maxInFlight } : {}),
    ...(fire.late.toleranceMs !== null
      ? { latePolicy: { toleranceMs: fire.late.toleranceMs, action: fire.late.action } }
      : {}),
  };
}

/** The connections opened ahead to one target, in one line for stderr. */
export function openAheadLine(
  target: string,
  ahead: { connections: number; threads: number; openBeforeMs: number },
  targets: number,
): string {
  const to = targets > 1 ? `target ${terminalLine(target)}` : 'the target';
  const by = ahead.threads > 1 ? ` by ${ahead.threads} threads` : '';
  return (
    `Connections: up to ${ahead.connections} to ${to} opened${by} from ${ahead.openBeforeMs} ms before the ` +
    `first request (its first second's requests, as many as are ready in time; any unused 4 s later are closed)`
  );
}

/** What the rehearsal did, in one line for stderr. */
export function rehearsalLine(results: readonly RehearsalResult[], threads: number, targets: number): string {
  const sent = results.reduce((n, r) => n + r.requests, 0);
  const answered = results.reduce((n, r) => n + r.succeeded, 0);
  const seconds = Math.max(...results.map((r) => r.ms)) / 1000;
  const where = `${threads > 1 ? `${threads} threads x ` : ''}${targets > 1 ? `${targets} targets` : 'the target'}`;
  const failed = sent - answered;
  return (
    `Rehearsal: ${sent} request${sent === 1 ? '' : 's'} (${where}) to an in-process sink in ` +
    `${seconds.toFixed(1)} s, nothing sent to the ` +
    `target` +
    `${failed > 0 ? `; ${failed} failed at the sink, so the code they compiled is not all the run's` : ''} ` +
    `(--rehearsal 0 skips it)`
  );
}
