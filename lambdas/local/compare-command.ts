/**
 * `capture-replay compare <dir-A> <dir-B> [...]`: the A/B verdict for runs made apart. Each
 * folder is a target's results (`profile_export.jsonl`, ours or AIPerf's), or a run folder of
 * ours whose target subfolders all take part. Lines are streamed, never held as text; a line
 * that is not a record is counted and reported, never fatal.
 */
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { BUNDLED_CHART_ASSETS } from '../adapters/bundled-chart-assets';
import { FsArtifactStore } from '../adapters/local/fs-artifact-store';
import { analyse, TargetAccumulator } from '../core/compare/analysis';
import { DEFAULT_COMPARE_OPTIONS, type CompareOptions } from '../core/compare/types';
import { ARTIFACT_FILES } from '../core/export/artifacts';
import { FAIL_ON_EXIT, hasVerdict, renderComparisonTable } from '../core/export/comparison-table';
import { RUN_FILES, writeRunAnalysis } from '../core/export/run-artifacts';
import { renderReportHtml } from '../core/report/report-page';
import type { ReportTargetSummary } from '../core/report/types';
import { usageMessage, USAGE_EXIT } from './cli-usage';

export interface CompareCommandOptions {
  dirs: string[];
  out?: string;
  pairing: 'auto' | 'paired' | 'unpaired';
  names?: string;
  minEffect?: number;
  resamples?: number;
  failOn?: string[];
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

interface TargetFolder {
  name: string;
  dir: string;
}

const isFile = async (path: string): Promise<boolean> => (await stat(path).catch(() => null))?.isFile() ?? false;

/** A results folder is one target; a run folder (no records of its own) is each of its target subfolders. */
async function expand(dir: string): Promise<TargetFolder[] | string> {
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) return `${dir}: not a folder`;
  if (await isFile(join(dir, ARTIFACT_FILES.records))) return [{ name: basename(resolve(dir)), dir }];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const found: TargetFolder[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory() && (await isFile(join(dir, entry.name, ARTIFACT_FILES.records)))) found.push({ name: entry.name, dir: join(dir, entry.name) });
  }
  return found.length > 0 ? found : `${dir}: no ${ARTIFACT_FILES.records} in it or in its subfolders`;
}

interface ReadResult {
  accumulator: TargetAccumulator;
  summary: ReportTargetSummary;
  badLines: number;
  firstBadLine: number | null;
}

async function readTarget(folder: TargetFolder): Promise<ReadResult> {
  const accumulator = new TargetAccumulator(folder.name);
  let succeeded = 0;
  let failed = 0;
  let badLines = 0;
  let firstBadLine: number | null = null;
  const failedByType: Record<string, number> = {};
  const lines = createInterface({ input: createReadStream(join(folder.dir, ARTIFACT_FILES.records)), crlfDelay: Infinity });
  let lineNo = 0;
  for await (const line of lines) {
    lineNo++;
    if (line.trim() === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      record = null;
    }
    if (!record || typeof record !== 'object' || !('metadata' in record) || typeof (record as { metadata: unknown }).metadata !== 'object') {
      badLines++;
      firstBadLine ??= lineNo;
      continue;
    }
    const r = record as Parameters<TargetAccumulator['addRecord']>[0];
    accumulator.addRecord(r);
    if (r.error) {
      failed++;
      const type = (r.error as { type?: unknown }).type;
      const key = typeof type === 'string' ? type : 'Error';
      failedByType[key] = (failedByType[key] ?? 0) + 1;
    } else succeeded++;
  }
  // Our manifest knows what was scheduled and dropped; AIPerf's folders have none.
  let summary: ReportTargetSummary = { name: folder.name, scheduled: succeeded + failed, succeeded, failed, dropped: 0, droppedByReason: {}, failedByType };
  const manifestText = await readFile(join(folder.dir, ARTIFACT_FILES.manifest), 'utf8').catch(() => null);
  if (manifestText !== null) {
    try {
      const m = JSON.parse(manifestText) as Partial<ReportTargetSummary>;
      if (typeof m.scheduled === 'number' && typeof m.dropped === 'number') {
        summary = { ...summary, scheduled: m.scheduled, dropped: m.dropped, droppedByReason: m.droppedByReason ?? {} };
      }
    } catch {
      // A manifest that does not parse: the records speak for themselves.
    }
  }
  return { accumulator, summary, badLines, firstBadLine };
}

export async function compareCommand(options: CompareCommandOptions): Promise<number> {
  const out = options.stdout ?? process.stdout;
  const err = options.stderr ?? process.stderr;
  const fail = (message: string): number => {
    err.write(`capture-replay compare: ${message}\n`);
    return 1;
  };
  const folders: TargetFolder[] = [];
  for (const dir of options.dirs) {
    const found = await expand(dir);
    if (typeof found === 'string') return fail(found);
    folders.push(...found);
  }
  if (options.names !== undefined) {
    const names = options.names.split(',').map((s) => s.trim());
    if (names.length !== folders.length || names.some((n) => n === '')) {
      err.write(usageMessage('compare', `--names gives ${names.length} name(s) for ${folders.length} results folder(s)`));
      return USAGE_EXIT;
    }
    names.forEach((name, i) => ((folders[i] as TargetFolder).name = name));
  }
  const seen = new Set<string>();
  for (const f of folders) {
    // Two folders called the same (A/ of two runs): tell them apart by position.
    let name = f.name;
    for (let k = 2; seen.has(name); k++) name = `${f.name}-${k}`;
    f.name = name;
    seen.add(name);
  }
  if (folders.length < 2) return fail(`need two results folders or more to compare, got ${folders.length} (${folders.map((f) => f.dir).join(', ')})`);

  const read = await Promise.all(folders.map(readTarget));
  for (const [i, r] of read.entries()) {
    if (r.badLines > 0) err.write(`capture-replay compare: ${folders[i]?.dir}: ${r.badLines} line(s) not a record, left out (first at line ${r.firstBadLine})\n`);
    if (r.accumulator.columns.size === 0) return fail(`${folders[i]?.dir}: no records`);
  }
  const compare: CompareOptions = {
    ...DEFAULT_COMPARE_OPTIONS,
    mode: options.pairing,
    ...(options.minEffect !== undefined ? { minEffect: options.minEffect } : {}),
    ...(options.resamples !== undefined ? { resamples: options.resamples } : {}),
  };
  const analysis = analyse({
    title: `capture-replay compare | ${folders.map((f) => f.name).join(' vs ')}`,
    runId: folders.map((f) => f.name).join('-vs-'),
    generatedAt: new Date().toISOString(),
    compare,
    targets: read.map((r) => ({ accumulator: r.accumulator, summary: r.summary })),
  });
  const comparison = analysis.comparison;
  if (!comparison) return fail('nothing to compare');
  out.write(renderComparisonTable(comparison) + '\n');
  if (options.out !== undefined) {
    await writeRunAnalysis(new FsArtifactStore(options.out), '', comparison, renderReportHtml(analysis.report, BUNDLED_CHART_ASSETS));
    out.write(`Comparison: ${join(options.out, RUN_FILES.comparison)}\nReport: ${join(options.out, RUN_FILES.report)}\n`);
  }
  if (options.failOn && hasVerdict(comparison, options.failOn)) {
    err.write(`capture-replay compare: a verdict is ${options.failOn.join(' or ')} (--fail-on)\n`);
    return FAIL_ON_EXIT;
  }
  return 0;
}
