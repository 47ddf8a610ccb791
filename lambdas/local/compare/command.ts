/**
 * `capture-replay compare <dir-A> <dir-B> [...]`: the A/B verdict for runs made apart. The
 * folders named and found (results-folders.ts), their records compared, the table printed and
 * the comparison and report written (--out), with --cloudwatch the metrics of the folders and
 * of the comparison (cloudwatch-output.ts), then the exit code (--fail-on: 3).
 */
import { join } from 'node:path';
import { BUNDLED_CHART_ASSETS } from '../../adapters/bundled-chart-assets';
import { FsArtifactStore } from '../../adapters/local/fs-artifact-store';
import { analyse } from '../../core/compare/analysis';
import type { ComparisonDocument } from '../../core/compare/types';
import { FAIL_ON_EXIT, renderComparisonTable } from '../../core/export/comparison-table';
import { RUN_FILES, writeRunAnalysis } from '../../core/export/run-artifacts';
import { renderReportHtml } from '../../core/report/report-page';
import { runEndedAtMs, runMetricSets } from '../../core/metrics/cloudwatch';
import { usageMessage, USAGE_EXIT } from '../cli-usage';
import {
  cloudWatchOutputOf,
  readTargetFigures,
  writeCloudWatch,
  type CloudWatchFlags,
  type CloudWatchOutput,
} from '../cloudwatch-output';
import { compareOptionsOf, failOnMatch, type ComparisonFlags } from '../comparison-flags';
import { comparisonOutProblem, createOutputFolder } from '../output-folder';
import { terminalLine, terminalText } from '../terminal-text';
import { expand, readTarget, unfinishedRun, type ReadResult, type TargetFolder } from './results-folders';

/** `capture-replay compare`'s arguments and flags, as commander hands them over. */
export interface CompareCommandOptions extends ComparisonFlags, CloudWatchFlags {
  dirs: string[];
  out?: string;
  pairing: 'auto' | 'paired' | 'unpaired';
  names?: string;
  /** Replace the comparison.json and report.html already in --out. */
  overwrite?: boolean;
  /** Compare a cancelled or unfinished run's results (said on stderr) instead of refusing. */
  allowPartial?: boolean;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

/** The folders to compare, named (--names, else their folder names, told apart by position), or what is wrong. */
async function targetFolders(
  options: CompareCommandOptions,
): Promise<TargetFolder[] | { fail: string } | { usage: string }> {
  const folders: TargetFolder[] = [];
  for (const dir of options.dirs) {
    const found = await expand(dir);
    if (typeof found === 'string') return { fail: found };
    folders.push(...found);
  }
  if (options.names !== undefined) {
    const names = options.names.split(',').map((s) => s.trim());
    if (names.length !== folders.length || names.some((n) => n === ''))
      return { usage: `--names gives ${names.length} name(s) for ${folders.length} results folder(s)` };
    names.forEach((name, i) => ((folders[i] as TargetFolder).name = name));
  }
  // A name is printed, and written to comparison.json: a control character in it is shown escaped.
  for (const f of folders) f.name = terminalLine(f.name);
  const seen = new Set<string>();
  for (const f of folders) {
    // Two folders called the same (A/ of two runs): tell them apart by position.
    let name = f.name;
    for (let k = 2; seen.has(name); k++) name = `${f.name}-${k}`;
    f.name = name;
    seen.add(name);
  }
  if (folders.length < 2)
    return {
      fail: `need two results folders or more to compare, got ${folders.length} (${folders.map((f) => f.dir).join(', ')})`,
    };
  return folders;
}

export async function compareCommand(options: CompareCommandOptions): Promise<number> {
  const out = options.stdout ?? process.stdout;
  const err = options.stderr ?? process.stderr;
  const fail = (message: string): number => {
    err.write(`capture-replay compare: ${terminalLine(message)}\n`);
    return 1;
  };
  const usage = (message: string): number => {
    err.write(usageMessage('compare', terminalLine(message)));
    return USAGE_EXIT;
  };
  const outProblem =
    options.out === undefined ? null : await comparisonOutProblem(options.out, options.overwrite === true);
  if (outProblem) return usage(outProblem);
  const cloudwatch = cloudWatchOutputOf(options);
  if (typeof cloudwatch === 'string') return usage(cloudwatch);
  if (cloudwatch && options.out === undefined)
    return usage('--cloudwatch writes cloudwatch-emf.jsonl beside the comparison: give --out');
  const folders = await targetFolders(options);
  if ('usage' in folders) return usage(folders.usage);
  if ('fail' in folders) return fail(folders.fail);
  const partial = await partialRuns(folders, options.allowPartial === true, err);
  if (partial) return fail(partial);
  if (options.out !== undefined) {
    const unwritable = await createOutputFolder(options.out);
    if (unwritable) return fail(`--out ${options.out}: ${unwritable}`);
  }

  const read = await Promise.all(folders.map(readTarget));
  for (const [i, r] of read.entries()) {
    const dir = folders[i]?.dir;
    if (r.badLines > 0)
      err.write(
        `capture-replay compare: ` +
          `${terminalLine(`${dir}: ${r.badLines} line(s) not a record, left out (first at line ${r.firstBadLine})`)}\n`,
      );
    for (const [reason, n] of r.rejected)
      err.write(`capture-replay compare: ${terminalLine(`${dir}: ${n} record(s) left out: ${reason}`)}\n`);
    if (r.accumulator.columns.size === 0) return fail(`${dir}: no records`);
  }
  const analysis = analyse({
    title: `capture-replay compare | ${folders.map((f) => f.name).join(' vs ')}`,
    runId: folders.map((f) => f.name).join('-vs-'),
    generatedAt: new Date().toISOString(),
    compare: compareOptionsOf(options, { mode: options.pairing }),
    targets: read.map((r) => ({ accumulator: r.accumulator, summary: r.summary })),
  });
  const comparison = analysis.comparison;
  if (!comparison) return fail('nothing to compare');
  out.write(terminalText(renderComparisonTable(comparison)) + '\n');
  if (options.out !== undefined) {
    await writeRunAnalysis(
      new FsArtifactStore(options.out),
      '',
      comparison,
      renderReportHtml(analysis.report, BUNDLED_CHART_ASSETS),
    );
    out.write(
      `Comparison: ${terminalLine(join(options.out, RUN_FILES.comparison))}\nReport: ` +
        `${terminalLine(join(options.out, RUN_FILES.report))}\n`,
    );
    if (cloudwatch) {
      const failed = await compareCloudWatch(
        cloudwatch,
        folders,
        read.map((r) => r.summary),
        comparison,
        options.out,
        { out, err },
      );
      if (failed) return fail(failed);
    }
  }
  const failOn = failOnMatch(comparison, options.failOn);
  if (failOn) {
    err.write(`capture-replay compare: ${failOn}\n`);
    return FAIL_ON_EXIT;
  }
  return 0;
}

/**
 * The folders' metrics (each named as compared: its counts as read, from its manifest or, for
 * AIPerf's folders, its records; its statistics from its profile_export_aiperf.json) and the
 * comparison's, at the latest run's end; null, or what failed.
 */
async function compareCloudWatch(
  output: CloudWatchOutput,
  folders: readonly TargetFolder[],
  summaries: readonly ReadResult['summary'][],
  comparison: ComparisonDocument,
  dir: string,
  io: { out: NodeJS.WritableStream; err: NodeJS.WritableStream },
): Promise<string | null> {
  const read = await Promise.all(folders.map((f) => readTargetFigures(f.dir, f.name)));
  const targets = read.map((r, i) => ({
    ...r.figures,
    manifest: { ...r.figures.manifest, ...(summaries[i] ? countsOf(summaries[i]) : {}) },
  }));
  const sets = runMetricSets(output.stack, { schedule: null, targets, comparison });
  return writeCloudWatch(output, {
    dir,
    sets,
    timestampMs: runEndedAtMs(read.map((r) => r.manifest)) ?? Date.now(),
    ...io,
  });
}

const countsOf = (s: ReadResult['summary']) => ({
  scheduled: s.scheduled,
  succeeded: s.succeeded,
  failed: s.failed,
  dropped: s.dropped,
  droppedByReason: { ...s.droppedByReason },
});

/**
 * Folders whose run was cancelled or has not finished: a verdict on what such a run sent is
 * not the run's verdict (a run stopped after 75 of 400 requests compared as BETTER, exit 0),
 * and a CI gate on it would pass on a fraction of the traffic. So compare refuses them (exit
 * 1, what it found and how to go on), unless --allow-partial, which says it on stderr.
 */
async function partialRuns(
  folders: readonly TargetFolder[],
  allow: boolean,
  err: NodeJS.WritableStream,
): Promise<string | null> {
  const found: string[] = [];
  for (const folder of folders) {
    const why = await unfinishedRun(folder);
    if (why) found.push(`${folder.dir}: ${why}`);
  }
  if (found.length === 0) return null;
  if (!allow)
    return `${found.join('; ')}: its verdict would be on part of the run only; compare it anyway with --allow-partial`;
  for (const line of found)
    err.write(
      `capture-replay compare: ${terminalLine(`${line}: compared anyway (--allow-partial), the verdict is on what it sent only`)}\n`,
    );
  return null;
}
