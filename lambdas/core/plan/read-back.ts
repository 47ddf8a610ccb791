/**
 * Pass 2 of two-pass planning: read back the lines of some planned entries from their
 * capture file, by byte range, and make them requests with the plan's body rules. Lines
 * near each other are read in one range (a sorted capture file gives one read per shard);
 * lines far apart get reads of their own, so an unsorted file costs reads, never memory.
 */
import { parseCaptureLine } from '../capture/parse';
import type { ScheduledRequest } from '../types';
import { materializeRequest, type IndexedEntry, type PlanOptions } from './plan';

/** Reads bytes [start, end) of the capture file. */
export type RangeReader = (start: number, end: number) => Promise<Uint8Array>;

/** Two lines less than this apart are read in one range (the bytes between are discarded). */
export const MAX_GAP_BYTES = 256 * 1024;
/** A single read is at most this long (unless one line is longer). */
export const MAX_RANGE_BYTES = 16 * 1024 * 1024;

export interface ByteRange {
  start: number;
  end: number;
  entries: IndexedEntry[];
}

/** Groups entries into ranges to read, in file order. */
export function coalesceRanges(entries: readonly IndexedEntry[], maxGap = MAX_GAP_BYTES, maxRange = MAX_RANGE_BYTES): ByteRange[] {
  const sorted = [...entries].sort((a, b) => a.record.span.start - b.record.span.start);
  const ranges: ByteRange[] = [];
  let current: ByteRange | null = null;
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

export async function readBackRequests(entries: readonly IndexedEntry[], read: RangeReader, options: PlanOptions): Promise<ScheduledRequest[]> {
  const byIndex = new Map<number, ScheduledRequest>();
  await Promise.all(
    coalesceRanges(entries).map(async (range) => {
      const bytes = await read(range.start, range.end);
      if (bytes.byteLength !== range.end - range.start) throw new Error(`read ${bytes.byteLength} bytes of range [${range.start}, ${range.end}): the file changed`);
      const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (const entry of range.entries) {
        const { span, source } = entry.record;
        const verdict = parseCaptureLine(buf.toString('utf8', span.start - range.start, span.end - range.start), source);
        if (!verdict.ok) throw new Error(`${source.file}:${source.line} no longer parses (${verdict.reason}): the file changed`);
        byIndex.set(entry.index, materializeRequest(entry, verdict.record, options));
      }
    }),
  );
  return entries.map((e) => byIndex.get(e.index) as ScheduledRequest);
}
