/**
 * Duplicate records of a run: the same eventId and the same input body, seen twice (S3
 * redelivers an event, a file is uploaded again, a record lands in two hour partitions). One
 * copy is replayed: the EARLIEST by inferenceTime, ties going to the copy seen first (file
 * order, then line order), whatever order the files are read in, so the schedule's zero does
 * not depend on which copy came first. Every other copy is counted as `duplicate`.
 *
 * A copy that comes after the one kept but is earlier in time replaces it: the one kept so
 * far is marked superseded (its record carries a `dedupe` mark, which every index and plan
 * consults: plan.ts `isLive`) and becomes the counted duplicate instead.
 *
 * What it keeps per record, and why a digest: DuplicateFilter.
 */
import { createHash } from 'node:crypto';
import type { CaptureRecord, CaptureSource, KeptRecords } from '../types';

const INITIAL_ROWS = 1024;
const SUPERSEDED = 1;
const INFERRED = 2;

/** What the filter says of a record: kept (maybe replacing an earlier-seen, later-in-time copy), or a copy of one kept. */
export type Admission =
  | { duplicate: false; replaced: { source: CaptureSource; contentTypeInferred: boolean } | null }
  | { duplicate: true; keptAt: CaptureSource };

function grown<A extends Float64Array | Uint32Array | Uint8Array>(old: A, make: (n: number) => A): A {
  const next = make(old.length * 2);
  next.set(old);
  return next;
}

/**
 * Memory: a digest, not the body, per distinct record: the first 128 bits of SHA-256 over
 * the eventId (length-prefixed) and the body, as a 16-character string key, plus the kept
 * copy's time, file and line in typed columns (~17 bytes) to compare and report a
 * replacement. A false duplicate needs a 128-bit collision: about 1e-27 for a million
 * records. Hashing every body is the filter's main cost; comparing bodies only when an
 * eventId repeats would avoid it but keep every body alive for as long as the filter.
 */
export class DuplicateFilter implements KeptRecords {
  private readonly keys = new Map<string, number>();
  private readonly files: string[] = [];
  private readonly fileIds = new Map<string, number>();
  private count = 0;
  private timeMs = new Float64Array(INITIAL_ROWS);
  private file = new Uint32Array(INITIAL_ROWS);
  private line = new Uint32Array(INITIAL_ROWS);
  private flags = new Uint8Array(INITIAL_ROWS);

  /**
   * Decides on a record and remembers it. A kept record gets its `dedupe` mark; `replaced`
   * names the copy it supersedes (to be counted as the duplicate), if any.
   */
  admit(record: CaptureRecord): Admission {
    const { eventId } = record;
    const key = createHash('sha256')
      .update(`${eventId.length}:${eventId}`)
      .update(record.input.body)
      .digest()
      .toString('latin1', 0, 16);
    const at = this.keys.get(key);
    if (at !== undefined && !(record.inferenceTimeMs < (this.timeMs[at] as number)))
      return { duplicate: true, keptAt: this.sourceOf(at) };
    const replaced =
      at === undefined
        ? null
        : { source: this.sourceOf(at), contentTypeInferred: ((this.flags[at] as number) & INFERRED) !== 0 };
    if (at !== undefined) this.flags[at] = (this.flags[at] as number) | SUPERSEDED;
    const row = this.addRow(record);
    this.keys.set(key, row);
    record.dedupe = { keptBy: this, keptAs: row };
    return { duplicate: false, replaced };
  }

  superseded(keptAs: number): boolean {
    return ((this.flags[keptAs] as number) & SUPERSEDED) !== 0;
  }

  /** Distinct records seen (one per eventId and body). */
  get size(): number {
    return this.keys.size;
  }

  private sourceOf(row: number): CaptureSource {
    return { file: this.files[this.file[row] as number] as string, line: this.line[row] as number };
  }

  private addRow(record: CaptureRecord): number {
    if (this.count === this.timeMs.length) {
      this.timeMs = grown(this.timeMs, (n) => new Float64Array(n));
      this.file = grown(this.file, (n) => new Uint32Array(n));
      this.line = grown(this.line, (n) => new Uint32Array(n));
      this.flags = grown(this.flags, (n) => new Uint8Array(n));
    }
    let fileId = this.fileIds.get(record.source.file);
    if (fileId === undefined) {
      fileId = this.files.push(record.source.file) - 1;
      this.fileIds.set(record.source.file, fileId);
    }
    const row = this.count++;
    this.timeMs[row] = record.inferenceTimeMs;
    this.file[row] = fileId;
    this.line[row] = record.source.line;
    this.flags[row] = record.input.contentTypeInferred ? INFERRED : 0;
    return row;
  }
}

/** False for a record a duplicate filter kept and an earlier copy replaced since; true otherwise. */
export function isLive(record: { dedupe?: CaptureRecord['dedupe'] }): boolean {
  return record.dedupe === undefined || !record.dedupe.keptBy.superseded(record.dedupe.keptAs);
}
