/**
 * The one index of a pipeline run's first pass (a capture file's run and a scheduled
 * window's alike), in columns (~50 bytes a record: 180,000 requests in ~9 MB): the CLI's
 * LineIndex columns (line-columns.ts) plus the body size and each target kind's verdict
 * (interned: a handful of distinct ones). Only the selected rows become objects, when planned.
 */
import { grownColumn, INITIAL_ROWS, LineColumns } from '../plan/line-columns';
import { incompatibleAs, indexRecord, type LineRef, type PlanOptions } from '../plan/plan';
import type { CaptureRecord, DropReason, TargetKind } from '../types';

type Verdict = { reason: DropReason; detail: string };

/** A record without its body: a LineRef with what sharding and every target kind need. */
export interface CaptureRef extends LineRef {
  bodyBytes: number;
  verdicts: Partial<Record<TargetKind, Verdict | null>>;
}

export class CaptureIndex extends LineColumns<CaptureRef> {
  private readonly verdictTable: (Verdict | null)[] = [null];
  private readonly verdictIds = new Map<string, number>();
  private bodyBytes = new Float64Array(INITIAL_ROWS);
  private verdict: Uint16Array;

  constructor(private readonly kinds: readonly TargetKind[]) {
    super();
    if (kinds.length === 0) throw new Error('a capture index needs at least one target kind');
    this.verdict = new Uint16Array(INITIAL_ROWS * kinds.length);
  }

  private verdictId(v: Verdict | null): number {
    if (v === null) return 0;
    const key = `${v.reason}\u0000${v.detail}`;
    let id = this.verdictIds.get(key);
    if (id === undefined) {
      id = this.verdictTable.push(v) - 1;
      if (id > 0xffff) throw new Error('more than 65,535 distinct drop verdicts');
      this.verdictIds.set(key, id);
    }
    return id;
  }

  /** Adds a record parsed from a byte stream; its body is measured and judged (every kind), not kept. */
  add(record: CaptureRecord, options: PlanOptions): void {
    this.checkOpen();
    const indexed = indexRecord(record, options, this.kinds);
    const i = this.addRow(record, indexed.span);
    this.bodyBytes[i] = indexed.bodyBytes;
    this.kinds.forEach(
      (kind, k) => (this.verdict[i * this.kinds.length + k] = this.verdictId(incompatibleAs(indexed, kind))),
    );
  }

  protected override growColumns(rows: number): void {
    this.bodyBytes = grownColumn(this.bodyBytes, (n) => new Float64Array(n), rows);
    this.verdict = grownColumn(this.verdict, (n) => new Uint16Array(n), rows * this.kinds.length);
  }

  protected override releaseColumns(): void {
    this.bodyBytes = new Float64Array(0);
    this.verdict = new Uint16Array(0);
  }

  protected ref(i: number): CaptureRef {
    return {
      ...this.lineRef(i),
      bodyBytes: this.bodyBytes[i] as number,
      verdicts: Object.fromEntries(
        this.kinds.map((kind, k) => [
          kind,
          this.verdictTable[this.verdict[i * this.kinds.length + k] as number] ?? null,
        ]),
      ),
    };
  }
}
