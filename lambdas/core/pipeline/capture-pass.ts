/**
 * Pass 1 of every pipeline run (a capture file's, a scheduled window's): each file streamed
 * once into the one columnar index (capture-index.ts, no bodies), planned like any capture
 * (plan.ts rules 1-6, across files as the local CLI does); then each target kind's plan of
 * the same entries, whose bodies are read back by byte range when their shards are sent.
 */
import { DuplicateFilter } from '../capture/duplicates';
import { IngestReportBuilder } from '../capture/ingest-report';
import { parseCaptureStream } from '../capture/stream';
import type { IndexedEntry, IndexedPlan, PlanOptions } from '../plan/plan';
import { readBackRequests, type RangeReader } from '../plan/read-back';
import type { IngestReport, ReplayPlan, ScheduledRequest, TargetKind } from '../types';
import { CaptureIndex, type CaptureRef } from './capture-index';
import type { DispatchablePlan, PlanItem } from './dispatch';

/** One version of a capture object: streamed once, then read back by byte range (the same version). */
export interface CaptureFile {
  chunks: AsyncIterable<Uint8Array>;
  readRange: RangeReader;
}

/** A file the pass reads: `open` gives null when it is gone or replaced, and the file is skipped for `goneReason`. */
export interface CaptureSource {
  /** How the report and the requests name the file (`s3://bucket/key`). */
  name: string;
  open(): Promise<CaptureFile | null>;
  goneReason: string;
}

export interface PassOptions extends PlanOptions {
  /** Every target kind of the run: each record keeps each kind's verdict. */
  kinds: readonly TargetKind[];
  /** The parser's "now" (a record from the future is rejected); default the machine's clock. */
  nowMs?: number;
  /**
   * A window [start, end): records outside it are counted, not indexed, and copies are told
   * apart inside it only. Without it every record is the run's: copies are the parser's
   * rejections (reported, with examples, as any capture file's).
   */
  range?: { startMs: number; endMs: number };
}

export interface CapturePass {
  plan: IndexedPlan<CaptureRef>;
  /** The ingest report of the files read, with the plan's timing. */
  report: IngestReport;
  counts: {
    /** Accepted records in the range (every accepted record without one). */
    inRange: number;
    outsideRange: number;
    /** Copies left out (the earliest by inferenceTime is replayed: duplicates.ts). */
    duplicates: number;
  };
  /** What the run's manifests count as not scheduled: the plan's exclusions and the copies. */
  notScheduled: ReplayPlan['excluded'] & { duplicate?: number };
  /** Display names of the files read, in the order read. */
  filesRead: string[];
  /** A range reader per file read, by display name. */
  readers: Map<string, RangeReader>;
}

/**
 * Pass 1 over `sources`, each streamed once in the order given; accepted records (in the
 * range, when there is one) are indexed but for copies of one record (one filter across every
 * file keeps the earliest by inferenceTime, ties to file order), then the index is planned
 * with `options`.
 */
export async function readCapturePass(sources: readonly CaptureSource[], options: PassOptions): Promise<CapturePass> {
  const report = new IngestReportBuilder();
  const index = new CaptureIndex(options.kinds);
  const duplicates = new DuplicateFilter();
  const { range } = options;
  const counts = { inRange: 0, outsideRange: 0, duplicates: 0 };
  const filesRead: string[] = [];
  const readers = new Map<string, RangeReader>();
  const streamOptions = options.nowMs !== undefined ? { nowMs: options.nowMs } : {};
  for (const source of sources) {
    const file = await source.open();
    if (!file) {
      report.skipFile(source.name, source.goneReason);
      continue;
    }
    filesRead.push(source.name);
    readers.set(source.name, file.readRange);
    // In a window, a duplicate is only this run's business inside it: no filter in the parser.
    for await (const record of parseCaptureStream(
      file.chunks,
      source.name,
      report,
      range ? undefined : duplicates,
      streamOptions,
    )) {
      if (range && (record.inferenceTimeMs < range.startMs || record.inferenceTimeMs >= range.endMs)) {
        counts.outsideRange++;
        continue;
      }
      counts.inRange++;
      if (range) {
        // The earliest copy is kept (duplicates.ts): a later-seen earlier one supersedes the row indexed before.
        const admission = duplicates.admit(record);
        if (admission.duplicate || admission.replaced) counts.duplicates++;
        if (admission.duplicate) continue;
      }
      index.add(record, options);
    }
  }
  const built = report.build();
  if (!range) counts.duplicates = built.totals.rejectedByReason.duplicate ?? 0;
  const plan = index.planOnce(options);
  return {
    plan,
    report: { ...built, timing: plan.timing },
    counts,
    notScheduled: { ...plan.excluded, ...(counts.duplicates ? { duplicate: counts.duplicates } : {}) },
    filesRead,
    readers,
  };
}

/** The requests of some entries, each read back from its own file (ranges of one file at once), in the entries' order. */
async function loadEntries(
  entries: readonly IndexedEntry<CaptureRef>[],
  readers: ReadonlyMap<string, RangeReader>,
  options: PlanOptions,
): Promise<ScheduledRequest[]> {
  const byFile = new Map<string, number[]>();
  entries.forEach((e, k) => {
    const list = byFile.get(e.record.source.file);
    if (list) list.push(k);
    else byFile.set(e.record.source.file, [k]);
  });
  const out = new Array<ScheduledRequest>(entries.length);
  await Promise.all(
    [...byFile].map(async ([file, positions]) => {
      const read = readers.get(file);
      if (!read) throw new Error(`no reader for ${file}`);
      const requests = await readBackRequests(
        positions.map((k) => entries[k] as IndexedEntry<CaptureRef>),
        read,
        options,
      );
      requests.forEach((r, j) => (out[positions[j] as number] = r));
    }),
  );
  return out;
}

/**
 * Each target kind's schedulable plan of the same entries (plan.ts rule 6: a CSV record goes
 * to a SageMaker endpoint, a chat target counts it as dropped): the kind's requests as items,
 * the rest incompatible with their reason; bodies read back when dispatchRun loads a window
 * of shards.
 */
export function capturePlans(
  pass: Pick<CapturePass, 'plan' | 'readers'>,
  kinds: readonly TargetKind[],
  options: PlanOptions,
): Map<TargetKind, DispatchablePlan> {
  const { entries } = pass.plan;
  const plans = new Map<TargetKind, DispatchablePlan>();
  for (const kind of kinds) {
    const kindOptions: PlanOptions = { ...options, targetKind: kind };
    const items: PlanItem[] = [];
    const incompatible: DispatchablePlan['incompatible'] = [];
    for (const e of entries) {
      const verdict = e.record.verdicts[kind];
      if (verdict === undefined) throw new Error(`entry ${e.index} was not indexed for target kind ${kind}`);
      if (verdict) incompatible.push({ index: e.index, offsetMs: e.offsetMs, reason: verdict.reason });
      else
        items.push({
          index: e.index,
          offsetMs: e.offsetMs,
          bodyBytes: e.record.bodyBytes,
          sourceFile: e.record.source.file,
        });
    }
    plans.set(kind, {
      items,
      incompatible,
      durationMs: pass.plan.durationMs,
      // Entry i has index i (plan order), so the entries are found by position.
      load: (loadItems) =>
        loadEntries(
          loadItems.map((i) => entries[i.index] as IndexedEntry<CaptureRef>),
          pass.readers,
          kindOptions,
        ),
    });
  }
  return plans;
}
