/**
 * The local composition root: wires the file-system capture source, the undici target, the
 * system clock and a folder artifact store around the core's `runReplay`, and renders the
 * progress bar and the summary table.
 */
import { randomBytes } from 'node:crypto';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SingleBar } from 'cli-progress';
import { readCaptures } from '../adapters/local/capture-files';
import { FsArtifactStore } from '../adapters/local/fs-artifact-store';
import { createOpenAITarget } from '../adapters/http/openai-target';
import { systemClock } from '../adapters/system-clock';
import { DuplicateFilter, IngestReportBuilder } from '../core/capture/parse';
import { replayInputConfig, type ExportInputConfig } from '../core/export/input-config';
import { renderSummaryTable } from '../core/export/summary-table';
import { validatePlanOptions, type PlanOptions } from '../core/plan/plan';
import { runReplay, type ReplayRunResult } from '../core/run/replay';
import type { CaptureRecord, FireOutcome, IngestReport } from '../core/types';
import { startMockServer } from './mock-server';

export interface ReplayCommandOptions {
  capturesPath: string;
  url: string;
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
  timeout: number;
  lead: number;
  lateTolerance?: number;
  latePolicy: 'fire' | 'drop';
  maxErrorRate?: number;
  runId?: string;
  progress: boolean;
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

  const runId = options.runId ?? newRunId();
  if (!RUN_ID_PATTERN.test(runId)) return fail(`--run-id must be letters, digits, '.', '_' or '-' (got "${runId}")`);
  let baseUrl: URL;
  try {
    baseUrl = new URL(options.url);
  } catch {
    return fail(`--url is not a URL: ${options.url}`);
  }
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') return fail(`--url must be http(s): ${options.url}`);

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
  if (problems.length > 0) return fail(problems.join('; '));

  // Ingest: every bad line is counted in the report, never fatal.
  const report = new IngestReportBuilder();
  const records: CaptureRecord[] = [];
  try {
    for await (const record of readCaptures(options.capturesPath, report, new DuplicateFilter())) records.push(record);
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  const ingest = report.build();
  err.write(describeIngest(ingest, options.capturesPath));
  if (ingest.totals.files === 0) return fail(`no .jsonl capture files under ${options.capturesPath}`);
  if (records.length === 0) return fail('no replayable capture records (see ingest_report.json for the reasons)');

  const apiKey = options.apiKeyEnv ? process.env[options.apiKeyEnv] : undefined;
  if (options.apiKeyEnv && !apiKey) return fail(`--api-key-env ${options.apiKeyEnv}: that environment variable is not set`);
  const target = createOpenAITarget({
    name: options.targetName,
    baseUrl: baseUrl.toString(),
    path: options.path,
    timeoutMs: options.timeout,
    clock: systemClock,
    ...(apiKey ? { apiKey } : {}),
  });

  const store = new FsArtifactStore(options.out);
  const progress = new Progress(options.progress && Boolean((err as NodeJS.WriteStream).isTTY), err);
  const abort = new AbortController();
  const onSignal = () => {
    err.write('\ncapture-replay: interrupted; requests not yet sent are counted as aborted\n');
    abort.abort();
  };
  process.once('SIGINT', onSignal);
  let result: ReplayRunResult;
  try {
    result = await runReplay({
      runId,
      records,
      ingestReport: ingest,
      plan: planOptions,
      targets: [{ client: target, kind: 'openai-chat' }],
      clock: systemClock,
      store,
      leadMs: options.lead,
      signal: abort.signal,
      inputConfig: inputConfigOf(options, runId),
      ...(options.maxInFlight !== undefined ? { maxInFlight: options.maxInFlight } : {}),
      ...(options.lateTolerance !== undefined ? { latePolicy: { toleranceMs: options.lateTolerance, action: options.latePolicy } } : {}),
      onPlanned: (_target, plan) => progress.start(plan.requests.length + plan.incompatible.length),
      onOutcome: (_target, outcome) => progress.tick(outcome),
    });
  } finally {
    progress.stop();
    process.removeListener('SIGINT', onSignal);
    await target.close();
  }

  let exitCode = 0;
  for (const run of result.targets) {
    out.write(renderSummaryTable(run.aggregates, run.manifest, { title: `capture-replay | ${runId} | ${run.target}` }) + '\n');
    out.write(`Results: ${join(options.out, runId, run.target)}/\n`);
    const { manifest } = run;
    if (!manifest.balanced) exitCode = fail(`accounting does not balance for ${run.target}: this is a bug, please report it`);
    else if (manifest.scheduled > 0 && manifest.succeeded === 0) exitCode = fail(`no request to ${run.target} succeeded`);
    else if (options.maxErrorRate !== undefined && manifest.fired > 0 && manifest.failed / manifest.fired > options.maxErrorRate) {
      exitCode = fail(`error rate ${(manifest.failed / manifest.fired).toFixed(3)} is above --max-error-rate ${options.maxErrorRate}`);
    }
  }
  if (abort.signal.aborted) exitCode = 1;
  return exitCode;
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

/** The run's export configuration (AIPerf's `input_config` + our `capture_replay`): input-config.ts. */
function inputConfigOf(options: ReplayCommandOptions, runId: string): ExportInputConfig {
  return replayInputConfig({
    target: options.targetName,
    url: options.url,
    path: options.path,
    model: options.model ?? null,
    streaming: options.streaming ? true : null,
    timeoutMs: options.timeout,
    capture: options.capturesPath,
    limit: options.limit ?? null,
    maxInFlight: options.maxInFlight ?? null,
    extra: {
      run_id: runId,
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

const SAMPLE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'samples', 'datacapture');

/** `npm start`: the bundled sample against the bundled mock server, no network, no AWS. */
export async function demoCommand(options: { out: string; progress: boolean }): Promise<number> {
  const server = await startMockServer({ ttftMs: 40, itlMs: 12, outputTokens: 24, seed: 42, recordRequests: false });
  process.stderr.write(
    `Demo: replaying the bundled capture sample (${relative(process.cwd(), SAMPLE_DIR).startsWith('..') ? SAMPLE_DIR : relative(process.cwd(), SAMPLE_DIR)}) against the bundled mock server at ${server.url}\n`,
  );
  try {
    return await replayCommand({
      capturesPath: SAMPLE_DIR,
      url: server.url,
      out: options.out,
      path: '/v1/chat/completions',
      targetName: 'mock',
      streaming: true,
      timeScale: 1,
      intraSecond: 'spread',
      seed: 1,
      timeout: 30_000,
      lead: 500,
      latePolicy: 'fire',
      progress: options.progress,
    });
  } finally {
    await server.close();
  }
}
