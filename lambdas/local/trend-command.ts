/**
 * `capture-replay trend <history.jsonl | runs folder>`: the trend page the pipeline writes for
 * a schedule (core/report/trend.ts, the same renderer and chart code), from a schedule's
 * history.jsonl downloaded from the results bucket, or from a folder of runs made locally or
 * downloaded (trend-runs.ts builds their history lines with the pipeline's function).
 *
 * The page links each run's report.html relative to itself, as the pipeline's page does
 * (`../../<key>` from schedules/<name>/index.html): the keys are rewritten for where the page
 * is written, so the links work wherever --out puts it (for a downloaded history, when the
 * runs were downloaded beside it, as the bucket holds them).
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { BUNDLED_CHART_ASSETS } from '../adapters/bundled-chart-assets';
import { renderTrendHtml } from '../core/report/trend';
import { parseHistory, type HistoryLine } from '../core/scheduled-runs/history';
import { fail, messageOf, type CommandIo } from './replay/io';
import { terminalLine } from './terminal-text';
import { runsFolderLines, type SkippedRun } from './trend-runs';

export interface TrendCommandOptions {
  source: string;
  out?: string;
  schedule?: string;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

/** What a page's `../../<key>` link must say to reach `target` from a page written in `pageDir`. */
export function linkKeyFrom(pageDir: string, target: string): string {
  return relative(resolve(pageDir, '..', '..'), resolve(target))
    .split(sep)
    .join('/');
}

interface Lines {
  schedule: string;
  lines: HistoryLine[];
  /** History lines that did not read, or run folders that are not finished runs. */
  unreadable: number;
  skipped: SkippedRun[];
}

/** A downloaded history: its lines (of one schedule), their report keys placed for the page. */
async function fromHistory(file: string, pageDir: string, schedule: string | undefined): Promise<Lines | string> {
  const { lines, badLines } = parseHistory(await readFile(file, 'utf8'));
  const names = [...new Set(lines.map((l) => l.schedule))];
  const name = schedule ?? (names.length === 1 ? names[0] : undefined);
  if (name === undefined) {
    return names.length === 0
      ? `${file}: no history line could be read (${badLines} line(s) are not history lines)`
      : `${file} holds the lines of several schedules (${names.join(', ')}): pick one with --schedule`;
  }
  const own = lines.filter((l) => l.schedule === name);
  if (own.length === 0) return `${file} has no line of schedule ${name} (it holds: ${names.join(', ') || 'none'})`;
  // The bucket's keys, from the results root (two folders up from schedules/<name>/history.jsonl).
  const root = resolve(dirname(file), '..', '..');
  const placed = own.map((l) => ({
    ...l,
    report: l.report === null ? null : linkKeyFrom(pageDir, join(root, l.report)),
  }));
  return { schedule: name, lines: placed, unreadable: badLines, skipped: [] };
}

export async function trendCommand(options: TrendCommandOptions): Promise<number> {
  const io: CommandIo = { out: options.stdout ?? process.stdout, err: options.stderr ?? process.stderr };
  const info = await stat(options.source).catch(() => null);
  if (!info)
    return fail(io, `${options.source}: no such file or folder (give a schedule's history.jsonl or a folder of runs)`);
  const folder = info.isDirectory();
  const out = resolve(options.out ?? join(folder ? options.source : dirname(options.source), 'index.html'));
  const pageDir = dirname(out);
  let read: Lines | string;
  try {
    if (folder) {
      const name = options.schedule ?? basename(resolve(options.source));
      const { lines, skipped } = await runsFolderLines(options.source, name, (report) => linkKeyFrom(pageDir, report));
      read = { schedule: name, lines, unreadable: skipped.length, skipped };
    } else read = await fromHistory(options.source, pageDir, options.schedule);
  } catch (error) {
    return fail(io, `${options.source}: ${messageOf(error)}`);
  }
  if (typeof read === 'string') return fail(io, read);
  for (const s of read.skipped) io.err.write(`Skipped ${terminalLine(s.folder)}: ${terminalLine(s.reason)}\n`);
  if (folder && read.lines.length === 0)
    return fail(
      io,
      `no finished run under ` +
        `${options.source}` +
        (read.skipped.length > 0
          ? ` (${read.skipped.length} folder(s) skipped, said above)`
          : ' (a run folder holds <target>/run_manifest.json)'),
    );
  const html = renderTrendHtml(
    { schedule: read.schedule, generatedAt: new Date().toISOString(), runs: read.lines, badLines: read.unreadable },
    BUNDLED_CHART_ASSETS,
  );
  try {
    await mkdir(pageDir, { recursive: true });
    await writeFile(out, html);
  } catch (error) {
    return fail(io, `could not write ${out}: ${messageOf(error)}`);
  }
  const not = read.unreadable > 0 ? `, ${read.unreadable} ${folder ? 'folder(s)' : 'line(s)'} not shown` : '';
  io.out.write(
    `Trend page of ${terminalLine(read.schedule)}: ${terminalLine(out)} (${read.lines.length} run(s)${not})\n`,
  );
  return 0;
}
