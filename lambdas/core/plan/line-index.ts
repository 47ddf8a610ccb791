/**
 * Pass 1 of the local CLI's two-pass planning, in columns: per accepted record its time,
 * whether the time was written with a fraction, its file and line, its byte span and a
 * 32-bit hash of its eventId (to check the line read back), in typed arrays: ~37 bytes a
 * record (~19 MB for the 480,000 records of a 1 GB capture), where an object per record
 * (a LineRef) took ~230. No body, no string per record. Planning turns only the selected
 * rows into LineRefs (planRows), after which the columns are released.
 */
import type { CaptureRecord } from '../types';
import { eventIdHash, planRows, type IndexedPlan, type LineRef, type PlanOptions } from './plan';
import type { PlannableIndex } from './read-back';

export class LineIndex implements PlannableIndex {
  private readonly files: string[] = [];
  private readonly fileIds = new Map<string, number>();
  private count = 0;
  private timeMs = new Float64Array(1024);
  private spanStart = new Float64Array(1024);
  private spanEnd = new Float64Array(1024);
  private file = new Uint32Array(1024);
  private line = new Uint32Array(1024);
  private idHash = new Uint32Array(1024);
  private subSecond = new Uint8Array(1024);
  private released = false;

  get length(): number {
    return this.count;
  }

  /** Adds a record parsed from a byte stream (it has a span); its body is not kept. */
  add(record: CaptureRecord): void {
    if (this.released) throw new Error('this index was planned and released');
    if (!record.span) throw new Error(`record ${record.source.file}:${record.source.line} has no byte span (parse it from a byte stream)`);
    if (this.count === this.timeMs.length) this.grow();
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
    this.spanStart[i] = record.span.start;
    this.spanEnd[i] = record.span.end;
    this.idHash[i] = eventIdHash(record.eventId);
  }

  private grow(): void {
    const size = this.timeMs.length * 2;
    const grown = <A extends Float64Array | Uint32Array | Uint8Array>(old: A, make: (n: number) => A): A => {
      const next = make(size);
      next.set(old);
      return next;
    };
    this.timeMs = grown(this.timeMs, (n) => new Float64Array(n));
    this.spanStart = grown(this.spanStart, (n) => new Float64Array(n));
    this.spanEnd = grown(this.spanEnd, (n) => new Float64Array(n));
    this.file = grown(this.file, (n) => new Uint32Array(n));
    this.line = grown(this.line, (n) => new Uint32Array(n));
    this.idHash = grown(this.idHash, (n) => new Uint32Array(n));
    this.subSecond = grown(this.subSecond, (n) => new Uint8Array(n));
  }

  /** Row i as the LineRef read-back needs. */
  private ref(i: number): LineRef {
    return {
      inferenceTimeMs: this.timeMs[i] as number,
      hasSubSecondTime: this.subSecond[i] === 1,
      source: { file: this.files[this.file[i] as number] as string, line: this.line[i] as number },
      span: { start: this.spanStart[i] as number, end: this.spanEnd[i] as number },
      eventIdHash: this.idHash[i] as number,
    };
  }

  /** planIndexed's rules over the rows, in capture order (the order they were added); then the columns are released. */
  planOnce(options: PlanOptions): IndexedPlan<LineRef> {
    if (this.released) throw new Error('this index was planned and released');
    const { timeMs, subSecond } = this;
    const plan = planRows(this.count, (i) => timeMs[i] as number, (i) => subSecond[i] === 1, options, (i) => this.ref(i));
    this.released = true;
    this.timeMs = this.spanStart = this.spanEnd = new Float64Array(0);
    this.file = this.line = this.idHash = new Uint32Array(0);
    this.subSecond = new Uint8Array(0);
    return plan;
  }
}
