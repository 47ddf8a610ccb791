/**
 * Pass 2 of two-pass planning: read back the lines of some planned entries from their
 * capture file, by byte range, and make them requests with the plan's body rules. Lines
 * near each other are read in one range (a sorted capture file gives one read per shard);
 * lines far apart get reads of their own, so an unsorted file costs reads, never memory.
 */
import { parseCaptureLine } from '../capture/line';
import type { CaptureRecord, ReplayPlan, ScheduledRequest } from '../types';
import {
  materializePlan,
  materializeRequest,
  readBackMismatch,
  type IndexedEntry,
  type IndexedPlan,
  type LineRef,
  type PlanOptions,
} from './plan';

/** Reads bytes [start, end) of the capture file. */
export type RangeReader = (start: number, end: number) => Promise<Uint8Array>;

/** Two lines less than this apart are read in one range (the bytes between are discarded). */
export const MAX_GAP_BYTES = 256 * 1024;
/** A single read is at most this long (unless one line is longer). */
export const MAX_RANGE_BYTES = 16 * 1024 * 1024;

export interface ByteRange<E extends IndexedEntry<LineRef> = IndexedEntry> {
  start: number;
  end: number;
  entries: E[];
}

/** Groups entries into ranges to read, in file order. */
export function coalesceRanges<E extends IndexedEntry<LineRef>>(
  entries: readonly E[],
  maxGap = MAX_GAP_BYTES,
  maxRange = MAX_RANGE_BYTES,
): ByteRange<E>[] {
  const sorted = [...entries].sort((a, b) => a.record.span.start - b.record.span.start);
  const ranges: ByteRange<E>[] = [];
  let current: ByteRange<E> | null = null;
  for (const e of sorted) {
    const { start, end } = e.record.span;
    if (current && start - current.end <= maxGap && end - current.start <= maxRange) {
      current.end = Math.max(current.end, end);
      current.entries.push(e);
    } else {
      current = { start, end, entries: [e] };
      ranges.push(current);
    }
  }
  return ranges;
}

export interface ReadBackOptions {
  /** Ranges read at once (default: all). A bound keeps memory to that many ranges' bytes. */
  concurrency?: number;
}

/**
 * The capture records of entries of one file, in the entries' order, parsed again from their
 * lines. A line that no longer parses, or parses as another eventId, means the file changed.
 */
export async function readBackRecords(
  entries: readonly IndexedEntry<LineRef>[],
  read: RangeReader,
  options: ReadBackOptions = {},
): Promise<CaptureRecord[]> {
  const byIndex = new Map<number, CaptureRecord>();
  const ranges = coalesceRanges(entries);
  const readRange = async (range: ByteRange<IndexedEntry<LineRef>>): Promise<void> => {
    const bytes = await read(range.start, range.end);
    if (bytes.byteLength !== range.end - range.start)
      throw new Error(`read ${bytes.byteLength} bytes of range [${range.start}, ${range.end}): the file changed`);
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (const entry of range.entries) {
      const { span, source } = entry.record;
      const verdict = parseCaptureLine(buf.toString('utf8', span.start - range.start, span.end - range.start), source);
      if (!verdict.ok)
        throw new Error(`${source.file}:${source.line} no longer parses (${verdict.reason}): the file changed`);
      const mismatch = readBackMismatch(entry.record, verdict.record);
      if (mismatch) throw new Error(mismatch);
      verdict.record.span = span;
      byIndex.set(entry.index, verdict.record);
    }
  };
  const concurrency = Math.max(1, Math.min(options.concurrency ?? ranges.length, ranges.length));
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ranges.length) await readRange(ranges[next++] as ByteRange<IndexedEntry<LineRef>>);
    }),
  );
  return entries.map((e) => byIndex.get(e.index) as CaptureRecord);
}

export async function readBackRequests(
  entries: readonly IndexedEntry<LineRef>[],
  read: RangeReader,
  options: PlanOptions,
): Promise<ScheduledRequest[]> {
  const records = await readBackRecords(entries, read);
  return entries.map((entry, i) => materializeRequest(entry, records[i] as CaptureRecord, options));
}

/** A target's plan for the given options (its kind among them): what `runReplay` asks for each target. */
export type Planner = (options: PlanOptions) => Promise<ReplayPlan>;

/** Pass 1's product as twoPassPlanner takes it: plans once with the run's options, then lets go of itself. */
export interface PlannableIndex {
  readonly length: number;
  /** The selected entries (planIndexed's rules); the index releases what it held. */
  planOnce(options: PlanOptions): IndexedPlan<LineRef>;
}

/**
 * Plans the index once with `options` (which releases it) and reads back the selected
 * records, file by file: `records[i]` is `plan.entries[i]`'s record.
 */
export async function planAndReadBack(
  index: PlannableIndex,
  options: PlanOptions,
  readerFor: (file: string) => RangeReader,
  readOptions: ReadBackOptions = {},
): Promise<{ plan: IndexedPlan<LineRef>; records: CaptureRecord[] }> {
  const plan = index.planOnce(options);
  const byFile = new Map<string, IndexedEntry<LineRef>[]>();
  for (const entry of plan.entries) {
    const list = byFile.get(entry.record.source.file);
    if (list) list.push(entry);
    else byFile.set(entry.record.source.file, [entry]);
  }
  const byIndex = new Map<number, CaptureRecord>();
  for (const [file, entries] of byFile) {
    const records = await readBackRecords(entries, readerFor(file), readOptions);
    entries.forEach((entry, i) => byIndex.set(entry.index, records[i] as CaptureRecord));
  }
  return { plan, records: plan.entries.map((e) => byIndex.get(e.index) as CaptureRecord) };
}

/**
 * Two-pass planning for a run that fires from one process (the local CLI): the first call
 * schedules the index with its options (the timing and selection rules, which every target
 * shares; the index is released then, only the selected entries stay) and reads back the
 * selected records, file by file. Every call, one per target, then makes that target kind's
 * plan from the same records: buildPlan's result for the same captures, with only the
 * selected bodies ever in memory.
 */
export function twoPassPlanner(
  index: PlannableIndex,
  readerFor: (file: string) => RangeReader,
  readOptions: ReadBackOptions = {},
): Planner {
  let loaded: Promise<{ plan: IndexedPlan<LineRef>; records: CaptureRecord[] }> | null = null;
  return async (options) => {
    loaded ??= planAndReadBack(index, options, readerFor, readOptions);
    const { plan, records } = await loaded;
    return materializePlan(plan, records, options);
  };
}
