/**
 * A schedule's history lines from run folders on disk: the CLI's own runs (`<out>/<run-id>/`)
 * or the pipeline's, downloaded (`aws s3 sync s3://<results>/runs/ runs/`). Each line is built
 * by the pipeline's own function (core/scheduled-runs/history.ts historyLineOf) from what a run
 * folder holds: each target's run_manifest.json (the accounting), its
 * profile_export_aiperf.json (p50, p90, p99 and mean of the compared metrics over the
 * succeeded requests, as the pipeline's run analysis computes them) and the run's
 * comparison.json. The scheduled time is the pipeline's when the run carries its schedule
 * (input_config), else the run's start; the window is the schedule's, else --from/--to, else
 * the first and last capture times replayed.
 *
 * A folder that is not a finished run (no manifest, a comparison that does not read) is
 * skipped with its reason, never silently.
 */
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { COMPARED_METRICS, type ComparisonDocument } from '../core/compare/types';
import { ARTIFACT_FILES } from '../core/export/artifacts';
import { RUN_FILES } from '../core/export/run-artifacts';
import { scheduledRunInfoSchema, type ScheduledRunInfo } from '../core/scheduled-runs/contract';
import { historyLineOf, historyLineSchema, type HistoryLine, type TargetOutcome } from '../core/scheduled-runs/history';

export interface SkippedRun {
  folder: string;
  reason: string;
}

type Json = Record<string, unknown>;

async function readJson(path: string): Promise<Json | null> {
  const text = await readFile(path, 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

const isFile = async (path: string) => (await stat(path).catch(() => null))?.isFile() ?? false;
const count = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);

/** The subfolders of a run folder that hold a target's results (records or a manifest). */
async function targetFolders(runDir: string): Promise<string[]> {
  const entries = await readdir(runDir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const dir = join(runDir, e.name);
    if ((await isFile(join(dir, ARTIFACT_FILES.manifest))) || (await isFile(join(dir, ARTIFACT_FILES.records))))
      out.push(e.name);
  }
  return out.sort();
}

/** Whether a folder is one run (targets in it) rather than a folder of runs. */
export async function isRunFolder(dir: string): Promise<boolean> {
  return (await targetFolders(dir)).length > 0;
}

/** p50, p90, p99 and mean of each compared metric, from the target's aggregate export. */
function metricsOf(aggregate: Json | null): TargetOutcome['metrics'] {
  const out: TargetOutcome['metrics'] = {};
  for (const { tag } of COMPARED_METRICS) {
    const m = aggregate?.[tag] as Json | undefined;
    const num = (k: string) => (typeof m?.[k] === 'number' && Number.isFinite(m[k]) ? (m[k] as number) : null);
    if (m && typeof m === 'object' && num('p50') !== null)
      out[tag] = { p50: num('p50'), p90: num('p90'), p99: num('p99'), mean: num('avg') };
  }
  return out;
}

/** The first and last capture times a target replayed (its records' capture_time_ms), ISO; null without records. */
async function capturedSpan(targetDir: string): Promise<{ start: string; end: string } | null> {
  const path = join(targetDir, ARTIFACT_FILES.records);
  if (!(await isFile(path))) return null;
  let min = Infinity;
  let max = -Infinity;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) {
    // A look at one field, not a parse of every record: the records can be a gigabyte.
    const m = /"capture_time_ms":(\d+(?:\.\d+)?)/.exec(line);
    if (!m) continue;
    const t = Number(m[1]);
    if (t < min) min = t;
    if (t > max) max = t;
  }
  return Number.isFinite(min) ? { start: new Date(min).toISOString(), end: new Date(max).toISOString() } : null;
}

interface TargetRead {
  outcome: TargetOutcome;
  startedAt: string | null;
  inputConfig: Json | null;
  aborted: number;
}

async function readTarget(runDir: string, name: string): Promise<TargetRead | string> {
  const dir = join(runDir, name);
  const manifest = await readJson(join(dir, ARTIFACT_FILES.manifest));
  if (!manifest) return `${name}/${ARTIFACT_FILES.manifest} is missing or not JSON: the run has not finished`;
  const scheduled = count(manifest.scheduled);
  const succeeded = count(manifest.succeeded);
  const failed = count(manifest.failed);
  const dropped = count(manifest.dropped);
  if (scheduled === null || succeeded === null || failed === null || dropped === null)
    return `${name}/${ARTIFACT_FILES.manifest} has no request counts`;
  const aggregate = await readJson(join(dir, ARTIFACT_FILES.aiperfJson));
  const inputConfig = aggregate?.capture_replay;
  return {
    outcome: { name, scheduled, succeeded, failed, dropped, metrics: metricsOf(aggregate) },
    startedAt: typeof manifest.startedAt === 'string' ? manifest.startedAt : null,
    inputConfig: inputConfig && typeof inputConfig === 'object' ? (inputConfig as Json) : null,
    aborted: count((manifest.droppedByReason as Json | undefined)?.aborted) ?? 0,
  };
}

/** The run's schedule as the pipeline recorded it, when it was a scheduled run. */
function pipelineInfo(inputConfig: Json | null): ScheduledRunInfo | null {
  const parsed = scheduledRunInfoSchema.safeParse(inputConfig?.schedule);
  return parsed.success ? parsed.data : null;
}

/** --from/--to as recorded (replay/config.ts capture_window). */
function localWindow(inputConfig: Json | null): { start: string | null; end: string | null } | null {
  const w = (inputConfig?.schedule as Json | undefined)?.capture_window as Json | undefined;
  return w && typeof w === 'object'
    ? { start: typeof w.start === 'string' ? w.start : null, end: typeof w.end === 'string' ? w.end : null }
    : null;
}

/** Targets in the comparison's order (the baseline first), then any other. */
function ordered(names: string[], comparison: Json | null): string[] {
  const listed = Array.isArray(comparison?.targets)
    ? (comparison.targets as unknown[]).filter((t): t is string => typeof t === 'string' && names.includes(t))
    : [];
  return [...listed, ...names.filter((n) => !listed.includes(n))];
}

/**
 * The history line of one run folder, or why there is none. `reportKey` places the run's
 * report.html for the page's link (null: no link).
 */
export async function runHistoryLine(
  runDir: string,
  schedule: string,
  reportKey: (reportPath: string) => string | null,
): Promise<HistoryLine | string> {
  const comparisonJson = await readJson(join(runDir, RUN_FILES.comparison));
  const names = ordered(await targetFolders(runDir), comparisonJson);
  if (names.length === 0) return 'no target folders (<target>/run_manifest.json)';
  const targets: TargetRead[] = [];
  for (const name of names) {
    const t = await readTarget(runDir, name);
    if (typeof t === 'string') return t;
    targets.push(t);
  }
  const recorded = pipelineInfo(targets[0]?.inputConfig ?? null);
  const starts = targets
    .map((t) => t.startedAt)
    .filter((s): s is string => s !== null && Number.isFinite(Date.parse(s)));
  const scheduledTime = recorded?.scheduledTime ?? [...starts].sort()[0] ?? '';
  const window = recorded?.window ?? (await windowOf(runDir, names[0] as string, targets[0]?.inputConfig ?? null));
  const aborted = targets.reduce((n, t) => n + t.aborted, 0);
  const info: ScheduledRunInfo = {
    name: schedule,
    scheduledTime,
    timezone: recorded?.timezone ?? 'UTC',
    window,
    targets: names,
    dispatch: recorded?.dispatch ?? 'parallel',
  };
  const reportPath = join(runDir, RUN_FILES.report);
  let line: HistoryLine;
  try {
    line = historyLineOf({
      runId: basename(runDir),
      info,
      status: 'complete',
      ...(aborted > 0 ? { reason: `stopped before its end: ${aborted} request(s) dropped as aborted` } : {}),
      reportKey: (await isFile(reportPath)) ? reportKey(reportPath) : null,
      targets: targets.map((t) => t.outcome),
      comparison: names.length >= 2 && comparisonJson ? (comparisonJson as unknown as ComparisonDocument) : null,
    });
  } catch (error) {
    return `${RUN_FILES.comparison} is not a comparison this version reads (${error instanceof Error ? error.message : String(error)})`;
  }
  const valid = historyLineSchema.safeParse(line);
  if (!valid.success)
    return (
      `its results do not make a history line (${valid.error.issues[0]?.path.join('.') ?? ''}: ` +
      `${valid.error.issues[0]?.message ?? 'invalid'})`
    );
  return valid.data;
}

async function windowOf(
  runDir: string,
  baseline: string,
  inputConfig: Json | null,
): Promise<{ start: string; end: string }> {
  const local = localWindow(inputConfig);
  const span = local?.start && local.end ? null : await capturedSpan(join(runDir, baseline));
  return { start: local?.start ?? span?.start ?? '', end: local?.end ?? span?.end ?? '' };
}

/**
 * A line per run under `dir` (or for `dir` itself when it is a run folder), sorted by
 * scheduled time (runs without one first, as the page sorts them), and the folders skipped.
 */
export async function runsFolderLines(
  dir: string,
  schedule: string,
  reportKey: (reportPath: string) => string | null,
): Promise<{ lines: HistoryLine[]; skipped: SkippedRun[] }> {
  const folders = (await isRunFolder(dir)) ? [dir] : await childFolders(dir);
  const lines: HistoryLine[] = [];
  const skipped: SkippedRun[] = [];
  for (const folder of folders) {
    const line = await runHistoryLine(folder, schedule, reportKey);
    if (typeof line === 'string') skipped.push({ folder, reason: line });
    else lines.push(line);
  }
  const timeOf = (l: HistoryLine) => {
    const ms = Date.parse(l.scheduled_time);
    return Number.isFinite(ms) ? ms : -Infinity;
  };
  lines.sort((a, b) => timeOf(a) - timeOf(b) || (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0));
  return { lines, skipped };
}

/** The subfolders that look like runs: any folder but the capture files a demo leaves beside them. */
async function childFolders(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const out: string[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (!e.isDirectory()) continue;
    const path = join(dir, e.name);
    // A folder with none of a run's files (e.g. demo-captures/) is not a run: not worth a line.
    if (
      (await isRunFolder(path)) ||
      (await isFile(join(path, RUN_FILES.report))) ||
      (await isFile(join(path, ARTIFACT_FILES.ingestReport)))
    )
      out.push(path);
  }
  return out;
}
