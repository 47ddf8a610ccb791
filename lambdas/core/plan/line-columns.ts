/**
 * The columns a pass-1 index keeps per record, shared by the local CLI's LineIndex and a
 * pipeline run's CaptureIndex (core/pipeline/capture-index.ts): its time, whether the time
 * was written with a fraction, its file (an id into a table of names) and line, its byte span and a 32-bit hash of its
 * eventId (to check the line read back), and the duplicate filter's mark (to leave out a copy an
 * earlier one superseded), in typed arrays doubled as they fill: ~41 bytes a
 * record, no object and no string per record. A subclass adds its own columns (grown and
 * released with these) and says what a selected row becomes; planOnce turns only the
 * selected rows into objects (planRows), after which every column is released.
 */
import type { CaptureRecord, KeptRecords } from '../types';
import { eventIdHash, planRows, type IndexedPlan, type LineRef, type PlanOptions } from './plan';

/** The rows a new index has room for before it first grows. */
export const INITIAL_ROWS = 1024;

/** `old`'s values in a new array of `n` (n >= old.length) made by `make`. */
export function grownColumn<A extends Float64Array | Int32Array | Uint32Array | Uint16Array | Uint8Array>(
  old: A,
  make: (n: number) => A,
  n: number,
): A {
  const next = make(n);
  next.set(old);
  return next;
}

export abstract class LineColumns<Ref extends LineRef> {
  private readonly files: string[] = [];
  private readonly fileIds = new Map<string, number>();
  private count = 0;
  private timeMs = new Float64Array(INITIAL_ROWS);
  private spanStart = new Float64Array(INITIAL_ROWS);
  private spanEnd = new Float64Array(INITIAL_ROWS);
  private file = new Uint32Array(INITIAL_ROWS);
  private line = new Uint32Array(INITIAL_ROWS);
  private idHash = new Uint32Array(INITIAL_ROWS);
  private subSecond = new Uint8Array(INITIAL_ROWS);
  // The duplicate filter's marks (duplicates.ts): its row of each record, -1 for none.
  private keptAs = new Int32Array(INITIAL_ROWS);
  private keptBy: KeptRecords | null = null;
  private released = false;

  get length(): number {
    return this.count;
  }

  /** Throws once the index was planned: its columns are gone. */
  protected checkOpen(): void {
    if (this.released) throw new Error('this index was planned and released');
  }

  /** Appends the record's row (`span`: its bytes in its file) and returns its number, for the subclass's columns. */
  protected addRow(record: CaptureRecord, span: { start: number; end: number }): number {
    this.checkOpen();
    if (this.count === this.timeMs.length) this.grow(this.timeMs.length * 2);
    let fileId = this.fileIds.get(record.source.file);
    if (fileId === undefined) {
      fileId = this.files.push(record.source.file) - 1;
      this.fileIds.set(record.source.file, fileId);
    }
    const i = this.count++;
    this.timeMs[i] = record.inferenceTimeMs;
    this.subSecond[i] = record.hasSubSecondTime ? 1 : 0;
    this.file[i] = fileId;
    this.line[i] = record.source.line;
    this.spanStart[i] = span.start;
    this.spanEnd[i] = span.end;
    this.idHash[i] = eventIdHash(record.eventId);
    this.keptAs[i] = this.markOf(record);
    return i;
  }

  private markOf(record: CaptureRecord): number {
    if (!record.dedupe) return -1;
    this.keptBy ??= record.dedupe.keptBy;
    if (record.dedupe.keptBy !== this.keptBy)
      throw new Error('the records of one index must come through one duplicate filter');
    return record.dedupe.keptAs;
  }

  /** The rows a duplicate filter has not superseded since, ascending; null when that is every row. */
  private liveRows(): Uint32Array | null {
    const { keptBy, keptAs, count } = this;
    if (!keptBy) return null;
    const live = new Uint32Array(count);
    let n = 0;
    for (let i = 0; i < count; i++) {
      const mark = keptAs[i] as number;
      if (mark < 0 || !keptBy.superseded(mark)) live[n++] = i;
    }
    return n === count ? null : live.subarray(0, n);
  }

  private grow(rows: number): void {
    this.timeMs = grownColumn(this.timeMs, (n) => new Float64Array(n), rows);
    this.spanStart = grownColumn(this.spanStart, (n) => new Float64Array(n), rows);
    this.spanEnd = grownColumn(this.spanEnd, (n) => new Float64Array(n), rows);
    this.file = grownColumn(this.file, (n) => new Uint32Array(n), rows);
    this.line = grownColumn(this.line, (n) => new Uint32Array(n), rows);
    this.idHash = grownColumn(this.idHash, (n) => new Uint32Array(n), rows);
    this.subSecond = grownColumn(this.subSecond, (n) => new Uint8Array(n), rows);
    this.keptAs = grownColumn(this.keptAs, (n) => new Int32Array(n), rows);
    this.growColumns(rows);
  }

  /** The subclass's own columns, grown to room for `rows` rows (grownColumn). */
  protected growColumns(_rows: number): void {}

  /** The subclass's own columns, released (planOnce is done with them). */
  protected releaseColumns(): void {}

  /** Row i as the LineRef read-back needs. */
  protected lineRef(i: number): LineRef {
    return {
      inferenceTimeMs: this.timeMs[i] as number,
      hasSubSecondTime: this.subSecond[i] === 1,
      source: { file: this.files[this.file[i] as number] as string, line: this.line[i] as number },
      span: { start: this.spanStart[i] as number, end: this.spanEnd[i] as number },
      eventIdHash: this.idHash[i] as number,
    };
  }

  /** What a selected row becomes in the plan. */
  protected abstract ref(i: number): Ref;

  /**
   * planIndexed's rules over the rows, in the order they were added, but for the copies a
   * duplicate filter superseded since; then the columns are released.
   */
  planOnce(options: PlanOptions): IndexedPlan<Ref> {
    this.checkOpen();
    const { timeMs, subSecond, idHash } = this;
    const live = this.liveRows();
    const row = live ? (k: number) => live[k] as number : (k: number) => k;
    const plan = planRows(
      live ? live.length : this.count,
      (k) => timeMs[row(k)] as number,
      (k) => subSecond[row(k)] === 1,
      (k) => idHash[row(k)] as number,
      options,
      (k) => this.ref(row(k)),
    );
    this.released = true;
    this.timeMs = this.spanStart = this.spanEnd = new Float64Array(0);
    this.file = this.line = this.idHash = new Uint32Array(0);
    this.subSecond = new Uint8Array(0);
    this.keptAs = new Int32Array(0);
    this.keptBy = null;
    this.releaseColumns();
    return plan;
  }
}
