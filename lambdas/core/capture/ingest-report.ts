/**
 * The ingest report: per capture file, every line accounted for (blank, accepted, or rejected
 * under one reason with the first few examples), the accepted records whose content type was
 * inferred, and the files skipped with their reason; totals over the files.
 */
import type { CaptureRecord, IngestFileReport, IngestReport, RejectReason } from '../types';

const MAX_EXAMPLES_PER_REASON = 5;

export class IngestFileCounter {
  readonly report: IngestFileReport;

  constructor(file: string) {
    this.report = {
      file,
      bytesRead: 0,
      linesRead: 0,
      blankLines: 0,
      accepted: 0,
      rejected: 0,
      contentTypeInferred: 0,
      rejectedByReason: {},
      examples: {},
    };
  }

  accept(record: CaptureRecord): void {
    this.report.accepted++;
    if (record.input.contentTypeInferred) this.report.contentTypeInferred++;
  }

  reject(reason: RejectReason, line: number, detail: string): void {
    const r = this.report;
    r.rejected++;
    r.rejectedByReason[reason] = (r.rejectedByReason[reason] ?? 0) + 1;
    const examples = (r.examples[reason] ??= []);
    if (examples.length < MAX_EXAMPLES_PER_REASON) examples.push({ file: r.file, line, detail });
  }

  /** A line accepted before is rejected after all (an earlier copy of its record came later: duplicates.ts). */
  withdraw(line: number, contentTypeInferred: boolean, reason: RejectReason, detail: string): void {
    this.report.accepted--;
    if (contentTypeInferred) this.report.contentTypeInferred--;
    this.reject(reason, line, detail);
  }
}

export class IngestReportBuilder {
  private readonly files: IngestFileCounter[] = [];
  private readonly skipped: { file: string; reason: string }[] = [];

  startFile(file: string): IngestFileCounter {
    const counter = new IngestFileCounter(file);
    this.files.push(counter);
    return counter;
  }

  /** The counter of a file entered in this report (the last one of that name). */
  fileCounter(file: string): IngestFileCounter | undefined {
    for (let i = this.files.length - 1; i >= 0; i--) if (this.files[i]?.report.file === file) return this.files[i];
    return undefined;
  }

  skipFile(file: string, reason: string): void {
    this.skipped.push({ file, reason });
  }

  build(): IngestReport {
    const files = this.files.map((f) => structuredClone(f.report));
    const totals: IngestReport['totals'] = {
      files: files.length,
      linesRead: 0,
      blankLines: 0,
      accepted: 0,
      rejected: 0,
      contentTypeInferred: 0,
      rejectedByReason: {},
    };
    for (const f of files) {
      totals.linesRead += f.linesRead;
      totals.blankLines += f.blankLines;
      totals.accepted += f.accepted;
      totals.rejected += f.rejected;
      totals.contentTypeInferred += f.contentTypeInferred;
      for (const [reason, count] of Object.entries(f.rejectedByReason) as [RejectReason, number][]) {
        totals.rejectedByReason[reason] = (totals.rejectedByReason[reason] ?? 0) + count;
      }
    }
    return { files, skippedFiles: [...this.skipped], totals };
  }
}

/**
 * The first example of the most common reject reason, as "<file> line <n>: <detail>", for a
 * one-line error when nothing was accepted (the report has every reason); null: no rejection.
 */
export function commonestRejection(report: IngestReport): string | null {
  const [reason] =
    (Object.entries(report.totals.rejectedByReason) as [RejectReason, number][]).sort((a, b) => b[1] - a[1])[0] ?? [];
  if (!reason) return null;
  const example = report.files.flatMap((f) => f.examples[reason] ?? [])[0];
  return example ? `${example.file} line ${example.line}: ${example.detail}` : null;
}
