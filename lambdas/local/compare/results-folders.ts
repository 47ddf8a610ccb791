/**
 * The results folders `compare` reads: each a target's results (`profile_export.jsonl`, ours
 * or AIPerf's), or a run folder of ours whose target subfolders all take part. Lines are
 * streamed, never held as text; a line that is not a record is counted, never fatal.
 */
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { TargetAccumulator } from '../../core/compare/analysis';
import { ARTIFACT_FILES } from '../../core/export/artifacts';
import type { ReportTargetSummary } from '../../core/report/types';

export interface TargetFolder {
  name: string;
  dir: string;
}

const isFile = async (path: string): Promise<boolean> => (await stat(path).catch(() => null))?.isFile() ?? false;

/** A results folder is one target; a run folder (no records of its own) is each of its target subfolders. */
export async function expand(dir: string): Promise<TargetFolder[] | string> {
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) return `${dir}: not a folder`;
  if (await isFile(join(dir, ARTIFACT_FILES.records))) return [{ name: basename(resolve(dir)), dir }];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const found: TargetFolder[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory() && (await isFile(join(dir, entry.name, ARTIFACT_FILES.records))))
      found.push({ name: entry.name, dir: join(dir, entry.name) });
  }
  return found.length > 0 ? found : `${dir}: no ${ARTIFACT_FILES.records} in it or in its subfolders`;
}

export interface ReadResult {
  accumulator: TargetAccumulator;
  summary: ReportTargetSummary;
  badLines: number;
  firstBadLine: number | null;
  /** Records left out by reason (columns.ts: a negative latency, say), counted, never compared. */
  rejected: Map<string, number>;
}

const readJson = async (path: string): Promise<Record<string, unknown> | null> => {
  const text = await readFile(path, 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};

/** The first record line of a folder, parsed (null when there is none or it is not JSON). */
async function firstRecord(dir: string): Promise<Record<string, unknown> | null> {
  const lines = createInterface({ input: createReadStream(join(dir, ARTIFACT_FILES.records)), crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (line.trim() === '') continue;
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return null;
      }
    }
    return null;
  } finally {
    lines.close();
  }
}

/**
 * Why a folder's results are not those of a finished run, or null. A run stopped by SIGINT
 * writes what it did, its undone requests dropped as `aborted` and `was_cancelled` set; a run
 * still going, or killed, has records of ours (`capture_replay`) and no run_manifest.json yet
 * (written last). AIPerf's folders have no manifest: its `was_cancelled` speaks for them.
 */
export async function unfinishedRun(folder: TargetFolder): Promise<string | null> {
  const [manifest, aggregate] = await Promise.all([
    readJson(join(folder.dir, ARTIFACT_FILES.manifest)),
    readJson(join(folder.dir, ARTIFACT_FILES.aiperfJson)),
  ]);
  const aborted = (manifest?.droppedByReason as Record<string, unknown> | undefined)?.aborted;
  if (typeof aborted === 'number' && aborted > 0)
    return `the run was stopped before its end (${aborted} of ${String(manifest?.scheduled)} requests dropped as aborted)`;
  if (aggregate?.was_cancelled === true) return 'the run was cancelled (was_cancelled in profile_export_aiperf.json)';
  if (manifest) return null;
  const first = await firstRecord(folder.dir);
  return first && typeof first.capture_replay === 'object'
    ? `no ${ARTIFACT_FILES.manifest}: the run has not finished (still running, or stopped before writing it)`
    : null;
}

export async function readTarget(folder: TargetFolder): Promise<ReadResult> {
  const accumulator = new TargetAccumulator(folder.name);
  let succeeded = 0;
  let failed = 0;
  let badLines = 0;
  let firstBadLine: number | null = null;
  const failedByType: Record<string, number> = {};
  const rejected = new Map<string, number>();
  const lines = createInterface({
    input: createReadStream(join(folder.dir, ARTIFACT_FILES.records)),
    crlfDelay: Infinity,
  });
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
    if (
      !record ||
      typeof record !== 'object' ||
      !('metadata' in record) ||
      typeof (record as { metadata: unknown }).metadata !== 'object'
    ) {
      badLines++;
      firstBadLine ??= lineNo;
      continue;
    }
    const r = record as Parameters<TargetAccumulator['addRecord']>[0];
    const why = accumulator.addRecord(r);
    if (why !== null) {
      rejected.set(why, (rejected.get(why) ?? 0) + 1);
      continue;
    }
    if (r.error) {
      failed++;
      const type = (r.error as { type?: unknown }).type;
      const key = typeof type === 'string' ? type : 'Error';
      failedByType[key] = (failedByType[key] ?? 0) + 1;
    } else succeeded++;
  }
  // Our manifest knows what was scheduled and dropped; AIPerf's folders have none.
  let summary: ReportTargetSummary = {
    name: folder.name,
    scheduled: succeeded + failed,
    succeeded,
    failed,
    dropped: 0,
    droppedByReason: {},
    failedByType,
  };
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
  return { accumulator, summary, badLines, firstBadLine, rejected };
}
