/**
 * The replay's first pass over the captures: each record's time and line (file, byte span),
 * not its body, with every bad line counted in the ingest report, never fatal. Every target's
 * reachability is checked meanwhile (preflight.ts); a failure stops the ingest.
 */
import { join } from 'node:path';
import { LineIndex, readCaptures } from '../../adapters/local/capture-files';
import { FsArtifactStore } from '../../adapters/local/fs-artifact-store';
import { DuplicateFilter } from '../../core/capture/duplicates';
import { IngestReportBuilder } from '../../core/capture/ingest-report';
import { writeIngestReport } from '../../core/export/artifacts';
import type { IngestReport } from '../../core/types';
import { describePreflight, preflight } from '../preflight';
import type { ReplayConfig } from './config';
import { fail, messageOf, type CommandIo } from './io';

/** The records to replay, found by pass 1, and the ingest report. */
export interface CaptureIndex {
  records: LineIndex;
  ingest: IngestReport;
}

/** The captures' index, or the exit code of a run that cannot be done (said on stderr). */
export async function indexCaptures(config: ReplayConfig, io: CommandIo): Promise<CaptureIndex | number> {
  let unreachable = false;
  const checked = config.preflight ? preflight(config.targets).then((results) => ((unreachable = results.some((r) => !r.ok)), results)) : null;
  const report = new IngestReportBuilder();
  const records = new LineIndex();
  try {
    for await (const record of readCaptures(config.capturesPath, report, new DuplicateFilter())) {
      if (unreachable) break;
      records.add(record);
    }
  } catch (error) {
    return fail(io, messageOf(error));
  }
  if (checked) {
    const { lines, failure } = describePreflight(await checked);
    io.err.write(lines);
    if (failure) return fail(io, failure);
  }
  const ingest = report.build();
  io.err.write(describeIngest(ingest, config.capturesPath));
  if (ingest.totals.files === 0 || records.length === 0) return nothingToReplay(config, io, ingest);
  return { records, ingest };
}

/** No file read, or no record to replay: the report says why, written although the run cannot be done. */
async function nothingToReplay(config: ReplayConfig, io: CommandIo, ingest: IngestReport): Promise<number> {
  const at = await writeIngestReport(new FsArtifactStore(config.out), `${config.runId}/`, ingest).then(
    (key) => join(config.out, key),
    (error: unknown) => `ingest_report.json, not written: ${messageOf(error)}`,
  );
  if (ingest.totals.files === 0) return fail(io, `no .jsonl capture files under ${config.capturesPath} could be read${ingest.skippedFiles.length > 0 ? ` (${ingest.skippedFiles.length} skipped, see ${at})` : ''}`);
  return fail(io, `no replayable capture records (see ${at} for the reasons)`);
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
