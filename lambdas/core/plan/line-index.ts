/**
 * Pass 1 of the local CLI's two-pass planning, in columns (line-columns.ts): per accepted
 * record its time, whether the time was written with a fraction, its file and line, its byte
 * span, a 32-bit hash of its eventId (to check the line read back) and the duplicate filter's
 * mark, in typed arrays: ~41
 * bytes a record (~19 MB for the 480,000 records of a 1 GB capture), where an object per
 * record (a LineRef) took ~230. No body, no string per record. Planning turns only the
 * selected rows into LineRefs (planRows), after which the columns are released.
 */
import type { CaptureRecord } from '../types';
import { LineColumns } from './line-columns';
import type { LineRef } from './plan';
import type { PlannableIndex } from './read-back';

export class LineIndex extends LineColumns<LineRef> implements PlannableIndex {
  /** Adds a record parsed from a byte stream (it has a span); its body is not kept. */
  add(record: CaptureRecord): void {
    this.checkOpen();
    if (!record.span)
      throw new Error(
        `record ${record.source.file}:${record.source.line} has no byte span (parse it from a byte stream)`,
      );
    this.addRow(record, record.span);
  }

  protected ref(i: number): LineRef {
    return this.lineRef(i);
  }
}
