import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseCaptureStream, type DuplicateFilter, type IngestReportBuilder } from '../../core/capture/parse';
import type { CaptureRecord } from '../../core/types';

/**
 * The capture files under a path: a single file, or a folder searched recursively
 * (SageMaker's yyyy/mm/dd/hh partitions). `.jsonl` files sorted by path (so capture order is
 * partition order); anything else is reported as skipped, never silently ignored.
 */
export async function listCaptureFiles(path: string): Promise<{ files: string[]; skipped: { file: string; reason: string }[] }> {
  const root = resolve(path);
  const info = await stat(root).catch(() => null);
  if (!info) throw new Error(`captures path not found: ${path}`);
  if (info.isFile()) {
    return root.endsWith('.jsonl') ? { files: [root], skipped: [] } : { files: [], skipped: [{ file: root, reason: 'not a .jsonl file' }] };
  }
  const files: string[] = [];
  const skipped: { file: string; reason: string }[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile() && entry.name.endsWith('.jsonl')) files.push(full);
      else skipped.push({ file: full, reason: entry.isFile() ? 'not a .jsonl file' : 'not a regular file' });
    }
  };
  await walk(root);
  return { files, skipped };
}

export function readFileChunks(path: string): AsyncIterable<Uint8Array> {
  return createReadStream(path, { highWaterMark: 1 << 20 });
}

/** Every capture record under a path, in file order; bad lines and other files go to the report. */
export async function* readCaptures(path: string, report: IngestReportBuilder, duplicates: DuplicateFilter): AsyncGenerator<CaptureRecord> {
  const { files, skipped } = await listCaptureFiles(path);
  for (const s of skipped) report.skipFile(s.file, s.reason);
  for (const file of files) yield* parseCaptureStream(readFileChunks(file), file, report, duplicates);
}
