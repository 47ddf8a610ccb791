/**
 * Capture files on the local disk (e.g. a folder synced with `aws s3 sync`): find them, read
 * them in large chunks, and parse them with the same core as the ingest Lambda.
 */
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseCaptureStream, type DuplicateFilter, type IngestReportBuilder } from '../../core/capture/parse';
import type { CaptureRecord } from '../../core/types';

const NOT_JSONL = 'not a .jsonl file';

/**
 * The capture files under a path: one file, or a folder searched recursively (SageMaker's
 * yyyy/mm/dd/hh partitions). `.jsonl` files come sorted by full path, so capture order is
 * partition order; anything else is reported as skipped, never silently ignored.
 */
export async function listCaptureFiles(path: string): Promise<{ files: string[]; skipped: { file: string; reason: string }[] }> {
  const root = resolve(path);
  const info = await stat(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') throw new Error(`captures path not found: ${path}`);
    throw new Error(`cannot read captures path ${path}: ${error.message}`);
  });
  if (info.isFile()) return root.endsWith('.jsonl') ? { files: [root], skipped: [] } : { files: [], skipped: [{ file: root, reason: NOT_JSONL }] };
  if (!info.isDirectory()) return { files: [], skipped: [{ file: root, reason: 'not a regular file or folder' }] };
  const files: string[] = [];
  const skipped: { file: string; reason: string }[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (!entry.isFile()) skipped.push({ file: full, reason: 'not a regular file' });
      else if (entry.name.endsWith('.jsonl')) files.push(full);
      else skipped.push({ file: full, reason: NOT_JSONL });
    }
  };
  await walk(root);
  // Whole paths, compared by code unit: a per-folder sort would put `a/` before `a.jsonl`.
  const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  files.sort(byPath);
  skipped.sort((a, b) => byPath(a.file, b.file));
  return { files, skipped };
}

/** A file as 1 MiB chunks: few enough reads to keep up with the parser, small enough to stay flat in memory. */
export function readFileChunks(path: string): AsyncIterable<Uint8Array> {
  return createReadStream(path, { highWaterMark: 1 << 20 });
}

/** Every capture record under a path, in file order; bad lines and other files go to the report. */
export async function* readCaptures(path: string, report: IngestReportBuilder, duplicates: DuplicateFilter): AsyncGenerator<CaptureRecord> {
  const { files, skipped } = await listCaptureFiles(path);
  for (const s of skipped) report.skipFile(s.file, s.reason);
  for (const file of files) yield* parseCaptureStream(readFileChunks(file), file, report, duplicates);
}
