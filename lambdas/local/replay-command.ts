/**
 * The local composition root: wires the file-system capture source, the undici target, the
 * system clock and a folder artifact store around the core's `runReplay`, and renders the
 * progress bar and the summary table.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { SingleBar } from 'cli-progress';
import { LineIndex, localPlanner, readCaptures } from '../adapters/local/capture-files';
import { FsArtifactStore } from '../adapters/local/fs-artifact-store';
import { parseSageMakerTargetSpec, type SageMakerTargetSpec } from '../adapters/sagemaker/target-spec';
import { createSystemClock, systemClock, type WaitMode } from '../adapters/system-clock';
import { DuplicateFilter } from '../core/capture/duplicates';
import { IngestReportBuilder } from '../core/capture/ingest-report';
import { replayInputConfig, type ExportInputConfig } from '../core/export/input-config';
import { renderSummaryTable } from '../core/export/summary-table';
import { validatePlanOptions, type PlanOptions } from '../core/plan/plan';
import { runReplay, type ReplayRunResult } from '../core/run/replay';
import { writeIngestReport } from '../core/export/artifacts';
import type { FireOutcome, IngestReport, RunManifest } from '../core/types';
import { analyse, TargetAccumulator, type Analysis } from '../core/compare/analysis';
import { DEFAULT_COMPARE_OPTIONS, type CompareOptions } from '../core/compare/types';
import { FAIL_ON_EXIT, hasVerdict, renderComparisonTable } from '../core/export/comparison-table';
import { RUN_FILES, writeRunAnalysis } from '../core/export/run-artifacts';
import { renderReportHtml } from '../core/report/report-page';
import type { ReportTargetSummary } from '../core/report/types';
import { BUNDLED_CHART_ASSETS } from '../adapters/bundled-chart-assets';
import { DEFAULT_REHEARSAL_REQUESTS, planProblemsAsFlags, usageMessage, USAGE_EXIT } from './cli-usage';
import { describePreflight, preflight } from './preflight';
import { installInterrupt } from './interrupt';
import { collectGarbage } from '../adapters/full-gc';
import { prepareFireWorkers, type FireWorkers } from './fire-workers';
import type { RehearsalResult } from './rehearsal';
import { createTargetClient, type TargetClientSpec } from './target-clients';
import { runVerdict } from './exit-policy';

export interface ReplayCommandOptions {
  capturesPath: string;
  /** One target: its base URL (named by `targetName`). Either this or `target`. */
  url?: string;
  /** Several targets: `NAME=URL` each, the first the baseline of the comparison. */
  target?: string[];
  dispatch?: 'parallel' | 'sequential';
  out: string;
  path: string;
  targetName: string;
  streaming: boolean;
  model?: string;
  apiKeyEnv?: string;
  startOffset?: number;
  endOffset?: number;
  timeScale: number;
  intraSecond: 'spread' | 'burst';
  limit?: number;
  sample?: number;
  seed: number;
  maxInFlight?: number;
  /**
   * Fire threads: `auto` (default) is this thread up to ~2,500 requests/s at the plan's peak,
   * else a worker thread per ~2,500/s up to the cores less one (fire-workers.ts); a number as given.
   */
  workers?: number | 'auto';
  /** `precise` (default): sub-millisecond; `coarse`: timers only, ~1 ms, less CPU (system-clock.ts). */
  wait?: WaitMode;
  /** Requests per target and firing thread sent to an in-process sink before schedule zero (rehearsal.ts); default DEFAULT_REHEARSAL_REQUESTS, 0: none. */
  rehearsal?: number;
  timeout: number;
  lead: number;
  lateTolerance?: number;
  latePolicy: 'fire' | 'drop';
  maxErrorRate?: number;
  runId?: string;
  /** Comparison settings (two targets or more). */
  minEffect?: number;
  resamples?: number;
  failOn?: string[];
  progress: boolean;
  /** Check that every target can be reached before the schedule starts (--no-preflight: false). Default true. */
  preflight?: boolean;
  /** Goodput SLOs (--goodput): metric tag -> threshold in the metric's unit. */
  goodput?: Record<string, number>;
  /** Keep excerpts of response text in error messages (--no-response-excerpts: false). Default true. */
  responseExcerpts?: boolean;
  /** After SIGINT/SIGTERM, how long requests in flight may finish before they are cancelled (ms; interrupt.ts). */
  cancelGrace?: number;
  /** Where to write human output (the summary table); errors go to stderr. */
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export async function replayCommand(options: ReplayCommandOptions): Promise<number> {
  const out = options.stdout ?? process.stdout;
  const err = options.stderr ?? process.stderr;
  const fail = (message: string): number => {
    err.write(`capture-replay: ${message}\n`);
    return 1;
  };
  const usage = (message: string): number => {
    err.write(usageMessage('replay', message));
    return USAGE_EXIT;
  };

  const runId = options.runId ?? newRunId();
  if (!RUN_ID_PATTERN.test(runId)) return usage(`--run-id must be letters, digits, '.', '_' or '-' (got "${runId}")`);
  const parsedTargets = targetsOf(options);
  if (typeof parsedTargets === 'string') return usage(parsedTargets);

  const planOptions: Omit<PlanOptions, 'runId' | 'targetKind'> = {
    timeScale: options.timeScale,
    intraSecond: options.intraSecond,
    forceStreaming: options.streaming,
    ...(options.startOffset !== undefined ? { startOffsetMs: options.startOffset } : {}),
    ...(options.endOffset !== undefined ? { endOffsetMs: options.endOffset } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(options.sample !== undefined ? { sampleRate: options.sample, seed: options.seed } : {}),
    ...(options.model !== undefined ? { modelOverride: options.model } : {}),
  };
  const problems = validatePlanOptions({ ...planOptions, runId, targetKind: 'openai-chat' });
  if (problems.length > 0) return usage(planProblemsAsFlags(problems));

  // Reachability of every target, checked while the captures are read; a failure stops the ingest.
  let unreachable = false;
  const checked = options.preflight === false ? null : preflight(parsedTargets).then((results) => ((unreachable = results.some((r) => !r.ok)), results));
  // Ingest: every bad line is counted in the report, never fatal.
  const report = new IngestReportBuilder();
  // Pass 1 of two: each record's time and line (file, byte span), not its body.
  const records = new LineIndex();
  try {
    for await (const record of readCaptures(options.capturesPath, report, new DuplicateFilter())) {
      if (unreachable) break;
      records.add(record);
    }
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  if (checked) {
    const { lines, failure } = describePreflight(await checked);
    err.write(lines);
    if (failure) return fail(failure);
  }
  const ingest = report.build();
  err.write(describeIngest(ingest, options.capturesPath));
  if (ingest.totals.files === 0 || records.length === 0) {
    // The report says why: written although the run cannot be done.
    const at = await writeIngestReport(new FsArtifactStore(options.out), `${runId}/`, ingest).then(
      (key) => join(options.out, key),
      (error: unknown) => `ingest_report.json, not written: ${error instanceof Error ? error.message : String(error)}`,
    );
    if (ingest.totals.files === 0) return fail(`no .jsonl capture files under ${options.capturesPath} could be read${ingest.skippedFiles.length > 0 ? ` (${ingest.skippedFiles.length} skipped, see ${at})` : ''}`);
    return fail(`no replayable capture records (see ${at} for the reasons)`);
  }

  const apiKey = options.apiKeyEnv ? process.env[options.apiKeyEnv] : undefined;
  if (options.apiKeyEnv && !apiKey) return fail(`--api-key-env ${options.apiKeyEnv}: that environment variable is not set`);
  // Plain data: fire workers build their own clients from the same specs (target-clients.ts).
  const specs = parsedTargets.map((target): TargetClientSpec => {
    const common = { name: target.name, timeoutMs: options.timeout, ...(options.responseExcerpts === false ? { responseExcerptChars: 0 } : {}) };
    return target.kind === 'sagemaker'
      ? { ...common, kind: 'sagemaker', sagemaker: target.sagemaker }
      : { ...common, kind: 'http', baseUrl: target.url.toString(), path: options.path, ...(apiKey ? { apiKey } : {}) };
  });
  const clock = options.wait === 'coarse' ? createSystemClock(undefined, 'coarse') : systemClock;
  const clients = specs.map((spec) => createTargetClient(spec, clock));
  let fireWorkers: FireWorkers | null = null;
  let workerFailed = false;

  const store = new FsArtifactStore(options.out);
  const progress = new Progress(options.progress && Boolean((err as NodeJS.WriteStream).isTTY), err);
  // SIGINT/SIGTERM: stop scheduling, cancel what is in flight after a grace, write everything.
  const interrupt = installInterrupt({ stderr: err, ...(options.cancelGrace !== undefined ? { graceMs: options.cancelGrace } : {}) });
  let analysis = null as Analysis | null;
  let result: ReplayRunResult;
  let planned = 0;
  try {
    result = await runReplay({
      runId,
      // Pass 2: only the selected records' lines are read back, for the plans.
      planner: localPlanner(records),
      ingestReport: ingest,
      plan: planOptions,
      targets: clients.map((client, i) => ({ client, kind: parsedTargets[i]?.kind === 'sagemaker' ? ('sagemaker' as const) : ('openai-chat' as const) })),
      clock,
      store,
      leadMs: options.lead,
      ...(options.goodput ? { goodputSlos: options.goodput } : {}),
      dispatch: options.dispatch ?? 'parallel',
      prepareFire: prepareFireWorkers(options.workers ?? 'auto', {
        wait: options.wait ?? 'precise',
        specs,
        ...(options.maxInFlight !== undefined ? { maxInFlight: options.maxInFlight } : {}),
        onError: (message) => {
          workerFailed = true;
          err.write(`capture-replay: ${message}\n`);
        },
        started: (workers, peak) => {
          fireWorkers = workers;
          err.write(`Firing from ${workers.size} worker threads (busiest second of the plan: ${peak} requests)\n`);
        },
        rehearsal: options.rehearsal ?? DEFAULT_REHEARSAL_REQUESTS,
        clock,
        rehearsed: (results, threads) => err.write(rehearsalLine(results, threads, clients.length) + '\n'),
      }),
      signal: interrupt.stop,
      cancelSignal: interrupt.cancel,
      // A full collection before the first due time (the rehearsal's garbage included).
      beforeFireStart: collectGarbage,
      // The comparison and the report before the manifests: the manifests are the last files written.
      beforeManifests: async (targets) => {
        analysis = analyseRun(targets, runId, {
          ...DEFAULT_COMPARE_OPTIONS,
          ...(options.minEffect !== undefined ? { minEffect: options.minEffect } : {}),
          ...(options.resamples !== undefined ? { resamples: options.resamples } : {}),
        });
        await writeRunAnalysis(store, `${runId}/`, analysis.comparison, renderReportHtml(analysis.report, BUNDLED_CHART_ASSETS));
      },
      inputConfig: (name) => inputConfigOf(options, runId, name, parsedTargets.find((t) => t.name === name) ?? null),
      ...(options.maxInFlight !== undefined ? { maxInFlight: options.maxInFlight } : {}),
      ...(options.lateTolerance !== undefined ? { latePolicy: { toleranceMs: options.lateTolerance, action: options.latePolicy } } : {}),
      onPlanned: (_target, plan) => {
        planned += plan.requests.length + plan.incompatible.length;
        progress.start(planned * clients.length);
      },
      onOutcome: (_target, outcome) => progress.tick(outcome),
    });
  } catch (error) {
    // E.g. a capture file rewritten between the two passes: said, not a stack trace.
    return fail(error instanceof Error ? error.message : String(error));
  } finally {
    progress.stop();
    interrupt.dispose();
    await Promise.all([...clients.map((client) => client.close()), (fireWorkers as FireWorkers | null)?.close()]);
  }

  for (const run of result.targets) {
    const columns = (out as NodeJS.WriteStream).isTTY ? (out as NodeJS.WriteStream).columns : undefined; // 80 when not a terminal
    out.write(renderSummaryTable(run.aggregates, run.manifest, { title: `capture-replay | ${runId} | ${run.target}`, ...(columns ? { width: columns } : {}) }) + '\n');
    out.write(`Results: ${join(options.out, runId, run.target)}/\n`);
  }
  // Per target, what failed and what only took none of the capture (exit-policy.ts).
  const verdict = runVerdict(result.targets.map((run) => run.manifest), options.maxErrorRate !== undefined ? { maxErrorRate: options.maxErrorRate } : {});
  for (const note of verdict.notes) err.write(`${note}\n`);
  let exitCode = 0;
  for (const failure of verdict.failures) exitCode = fail(failure);
  if (!analysis) return fail('the run ended without its analysis: this is a bug, please report it');
  if (analysis.comparison) {
    out.write('\n' + renderComparisonTable(analysis.comparison) + '\n');
    out.write(`Comparison: ${join(options.out, runId, RUN_FILES.comparison)}\n`);
  }
  out.write(`Report: ${join(options.out, runId, RUN_FILES.report)}\n`);
  // A fire worker that failed: its unreported requests are in the results as dropped (lost).
  if (workerFailed && exitCode === 0) exitCode = fail('a fire worker failed (above): its requests not reported are counted as dropped, reason lost');
  exitCode = interrupt.exitCode() ?? exitCode;
  if (exitCode === 0 && analysis.comparison && options.failOn && hasVerdict(analysis.comparison, options.failOn)) {
    err.write(`capture-replay: a verdict is ${options.failOn.join(' or ')} (--fail-on)\n`);
    exitCode = FAIL_ON_EXIT;
  }
  return exitCode;
}

/** What the rehearsal did, in one line for stderr. */
export function rehearsalLine(results: readonly RehearsalResult[], threads: number, targets: number): string {
  const sent = results.reduce((n, r) => n + r.requests, 0);
  const answered = results.reduce((n, r) => n + r.succeeded, 0);
  const seconds = Math.max(...results.map((r) => r.ms)) / 1000;
  const where = `${threads > 1 ? `${threads} threads x ` : ''}${targets > 1 ? `${targets} targets` : 'the target'}`;
  const failed = sent - answered;
  return `Rehearsal: ${sent} requests (${where}) to an in-process sink in ${seconds.toFixed(1)} s, nothing sent to the target${failed > 0 ? `; ${failed} failed at the sink, so the code they compiled is not all the run's` : ''} (--rehearsal 0 skips it)`;
}

/** The run's comparison and report from its targets' outcomes. */
function analyseRun(targets: readonly ReplayRunResult['targets'][number][], runId: string, compare: CompareOptions): Analysis {
  return analyse({
    title: `capture-replay | ${runId}`,
    runId,
    generatedAt: new Date().toISOString(),
    compare,
    targets: targets.map((run) => ({
      accumulator: TargetAccumulator.fromRun(run.target, run.outcomes, run.records),
      summary: summaryOf(run.target, run.manifest),
    })),
  });
}

const TARGET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** A target from the command line: an OpenAI-compatible base URL, or a SageMaker endpoint. */
export type CliTarget = { name: string; kind: 'http'; url: URL } | { name: string; kind: 'sagemaker'; sagemaker: SageMakerTargetSpec; spec: string };

/**
 * `--url` (one target) or `--target NAME=URL` / `--target NAME=sagemaker:<endpoint>[?...]`
 * (one or more): the targets, or what is wrong.
 */
export function targetsOf(options: Pick<ReplayCommandOptions, 'url' | 'target' | 'targetName'>): CliTarget[] | string {
  const specs = options.target ?? [];
  if (options.url !== undefined && specs.length > 0) return 'give either --url (one target) or --target NAME=URL (one or more), not both';
  const pairs: [string, string][] =
    options.url !== undefined
      ? [[options.targetName, options.url]]
      : specs.map((spec) => {
          const at = spec.indexOf('=');
          return at < 0 ? ['', spec] : [spec.slice(0, at), spec.slice(at + 1)];
        });
  if (pairs.length === 0) return 'give a target: --url <base-url>, or --target NAME=URL once per target';
  const out: CliTarget[] = [];
  for (const [name, raw] of pairs) {
    const flag = options.url !== undefined ? '--url' : `--target ${name || '?'}`;
    if (!TARGET_NAME.test(name)) return `target name "${name}" must be letters, digits, '.', '_' or '-' (as NAME=URL, e.g. --target A=http://localhost:8000)`;
    if (out.some((t) => t.name === name)) return `target name "${name}" is given twice`;
    if (raw.startsWith('sagemaker:')) {
      const sagemaker = parseSageMakerTargetSpec(raw);
      if (typeof sagemaker === 'string') return `${flag}: ${sagemaker}`;
      out.push({ name, kind: 'sagemaker', sagemaker, spec: raw });
      continue;
    }
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return `${flag}: not a URL: ${raw} (an OpenAI-compatible base URL, or sagemaker:<endpoint-name>)`;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return `${flag} must be an http:// or https:// URL or sagemaker:<endpoint-name> (got ${raw}${raw.includes('//') ? '' : `; did you mean http://${raw}?`})`;
    }
    out.push({ name, kind: 'http', url });
  }
  return out;
}

function summaryOf(name: string, manifest: RunManifest): ReportTargetSummary {
  return {
    name,
    scheduled: manifest.scheduled,
    succeeded: manifest.succeeded,
    failed: manifest.failed,
    dropped: manifest.dropped,
    droppedByReason: { ...manifest.droppedByReason } as Record<string, number>,
    failedByType: { ...manifest.failedByType },
  };
}

function describeIngest(ingest: IngestReport, path: string): string {
  const { totals } = ingest;
  const reasons = Object.entries(totals.rejectedByReason)
    .map(([reason, count]) => `${reason} ${count}`)
    .join(', ');
  return (
    `Read ${totals.files} capture file(s) under ${path}: ${totals.accepted} records accepted, ${totals.rejected} rejected` +
    (reasons ? ` (${reasons})` : '') +
    (ingest.skippedFiles.length > 0 ? `, ${ingest.skippedFiles.length} other file(s) skipped` : '') +
    '\n'
  );
}

/** One target's export configuration (AIPerf's `input_config` + our `capture_replay`): input-config.ts. */
function inputConfigOf(options: ReplayCommandOptions, runId: string, target: string, spec: CliTarget | null): ExportInputConfig {
  return replayInputConfig({
    target,
    url: spec?.kind === 'http' ? spec.url.toString() : null,
    path: spec?.kind === 'http' ? options.path : null,
    model: options.model ?? null,
    streaming: options.streaming ? true : null,
    timeoutMs: options.timeout,
    capture: options.capturesPath,
    limit: options.limit ?? null,
    maxInFlight: options.maxInFlight ?? null,
    extra: {
      run_id: runId,
      ...(options.goodput ? { goodput: options.goodput } : {}),
      ...(spec?.kind === 'sagemaker' ? { sagemaker: { spec: spec.spec, ...spec.sagemaker } } : {}),
      schedule: {
        start_offset_ms: options.startOffset ?? null,
        end_offset_ms: options.endOffset ?? null,
        time_scale: options.timeScale,
        intra_second: options.intraSecond,
        sample: options.sample ?? null,
        seed: options.seed,
        lead_ms: options.lead,
      },
      load: {
        late_tolerance_ms: options.lateTolerance ?? null,
        late_policy: options.latePolicy,
        workers: options.workers ?? 'auto',
        wait: options.wait ?? 'precise',
        rehearsal: options.rehearsal ?? DEFAULT_REHEARSAL_REQUESTS,
      },
    },
  });
}

/** A progress bar on a terminal; nothing otherwise (logs stay clean in CI). */
class Progress {
  private bar: SingleBar | null = null;
  private done = 0;
  private errors = 0;
  private dropped = 0;

  constructor(
    private readonly enabled: boolean,
    private readonly stream: NodeJS.WritableStream,
  ) {}

  start(total: number): void {
    if (!this.enabled || this.bar) return;
    this.bar = new SingleBar({
      stream: this.stream as NodeJS.WriteStream,
      format: 'replay |{bar}| {value}/{total} requests | {errors} failed | {dropped} dropped | ETA {eta_formatted}',
      hideCursor: true,
      etaBuffer: 50,
    });
    this.bar.start(total, 0, { errors: 0, dropped: 0 });
  }

  tick(outcome: FireOutcome): void {
    this.done++;
    if (outcome.dropReason) this.dropped++;
    else if (outcome.result?.error) this.errors++;
    this.bar?.update(this.done, { errors: this.errors, dropped: this.dropped });
  }

  stop(): void {
    this.bar?.stop();
    this.bar = null;
  }
}
