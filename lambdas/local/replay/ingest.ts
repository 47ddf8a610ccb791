/**
 * The replay's first pass over the captures (a local folder or an s3:// prefix:
 * captures-source.ts): each record's time and line (file, byte span), not its body, with every
 * bad line counted in the ingest report, never fatal. With --from/--to, a record outside the
 * window is counted (the report's `window` section), not indexed. Every target's reachability
 * is checked meanwhile (preflight.ts); a failure stops the ingest.
 */
import { join } from 'node:path';
import { LineIndex } from '../../adapters/local/capture-files';
import { FsArtifactStore } from '../../adapters/local/fs-artifact-store';
import { commonestRejection, IngestReportBuilder } from '../../core/capture/ingest-report';
import { writeIngestReport } from '../../core/export/artifacts';
import { twoPassPlanner, type Planner, type RangeReader } from '../../core/plan/read-back';
import type { IngestReport } from '../../core/types';
import { inWindow, openCaptures } from '../captures-source';
import { terminalText } from '../terminal-text';
import { describePreflight, preflight, type MeasuredConnect } from '../preflight';
import type { ReplayConfig } from './config';
import { fail, messageOf, type CommandIo } from './io';

/** The records to replay, found by pass 1, and the ingest report. */
export interface CaptureIndex {
  records: LineIndex;
  ingest: IngestReport;
  /** Pass 2's reads: byte ranges of a file read in pass 1, by its name in the records. */
  readerFor: (file: string) => RangeReader;
  /** Per target (the config's order): the preflight's connect time, null where none was measured. */
  connects?: (MeasuredConnect | null)[];
}

/** The window's part of the ingest report (as the plan function's window runs write it). */
export interface WindowCounts {
  start: string | null;
  end: string | null;
  /** Accepted records whose inferenceTime is in [start, end). */
  inWindow: number;
  /** Accepted records outside it: not rejected, not this run's. */
  outsideWindow: number;
}

/** Pass 2 over an index: the selected lines read back, four ranges at a time, for each target kind's plan. */
export function capturesPlanner(captures: CaptureIndex): Planner {
  return twoPassPlanner(captures.records, captures.readerFor, { concurrency: 4 });
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The captures' index, or the exit code of a run that cannot be done (said on stderr). */
export async function indexCaptures(config: ReplayConfig, io: CommandIo): Promise<CaptureIndex | number> {
  let unreachable = false;
  const checked = config.preflight
    ? preflight(config.targets).then((results) => ((unreachable = results.some((r) => !r.ok)), results))
    : null;
  const report = new IngestReportBuilder();
  const records = new LineIndex();
  const { window } = config;
  const counts: WindowCounts | null = window
    ? { start: iso(window.startMs), end: iso(window.endMs), inWindow: 0, outsideWindow: 0 }
    : null;
  let readerFor: CaptureIndex['readerFor'];
  try {
    const captures = openCaptures(
      {
        capturesPath: config.capturesPath,
        window,
        offsets: { startMs: config.plan.startOffsetMs ?? 0, endMs: config.plan.endOffsetMs ?? null },
        region: config.region,
      },
      report,
    );
    readerFor = captures.readerFor;
    for await (const record of captures.records) {
      if (unreachable) break;
      if (window && counts) {
        if (!inWindow(window, record.inferenceTimeMs)) {
          counts.outsideWindow++;
          continue;
        }
        counts.inWindow++;
      }
      records.add(record);
    }
  } catch (error) {
    return fail(io, error);
  }
  let connects: (MeasuredConnect | null)[] | undefined;
  if (checked) {
    const results = await checked;
    const { lines, failure } = describePreflight(results);
    io.err.write(lines);
    if (failure) return fail(io, failure);
    connects = results.map((r) => r.connect ?? null);
  }
  const ingest: IngestReport = { ...report.build(), ...(counts ? { window: counts } : {}) };
  // The captures' path as typed: an escape code in it is shown, not run.
  io.err.write(terminalText(describeIngest(ingest, config.capturesPath, counts)));
  if (ingest.totals.files === 0 || records.length === 0) return nothingToReplay(config, io, ingest, counts);
  return { records, ingest, readerFor, ...(connects ? { connects } : {}) };
}

/** No file read, or no record to replay: the report says why, written although the run cannot be done. */
async function nothingToReplay(
  config: ReplayConfig,
  io: CommandIo,
  ingest: IngestReport,
  counts: WindowCounts | null,
): Promise<number> {
  const at = await writeIngestReport(new FsArtifactStore(config.out), `${config.runId}/`, ingest).then(
    (key) => join(config.out, key),
    (error: unknown) => `ingest_report.json, not written: ${messageOf(error)}`,
  );
  const where = counts ? ` for ${describeWindow(counts)}` : '';
  if (ingest.totals.files === 0)
    return fail(
      io,
      `no .jsonl capture files under ${config.capturesPath}${where} could be read ` +
        `(${ingest.skippedFiles.length > 0 ? `${ingest.skippedFiles.length} skipped, ` : ''}see ${at})`,
    );
  if (counts && counts.inWindow === 0)
    return fail(io, `no capture record in ${describeWindow(counts)} (${counts.outsideWindow} outside it; see ${at})`);
  const example = commonestRejection(ingest);
  return fail(io, `no replayable capture records (see ${at} for the reasons)${example ? `; ${example}` : ''}`);
}

function describeWindow(counts: WindowCounts): string {
  return counts.start && counts.end
    ? `the window ${counts.start} to ${counts.end}`
    : counts.start
      ? `the window from ${counts.start}`
      : `the window until ${counts.end}`;
}

function describeIngest(ingest: IngestReport, path: string, counts: WindowCounts | null): string {
  const { totals } = ingest;
  const reasons = Object.entries(totals.rejectedByReason)
    .map(([reason, count]) => `${reason} ${count}`)
    .join(', ');
  return (
    `Read ${totals.files} capture file(s) under ${path}: ${totals.accepted} records accepted, ${totals.rejected} rejected` +
    (reasons ? ` (${reasons})` : '') +
    (ingest.skippedFiles.length > 0 ? `, ${ingest.skippedFiles.length} other file(s) skipped` : '') +
    '\n' +
    (counts
      ? `In ${describeWindow(counts)}: ${counts.inWindow} record(s); ${counts.outsideWindow} outside it, not replayed\n`
      : '')
  );
}
