/**
 * Capture files on the local disk (e.g. a folder synced with `aws s3 sync`): find them, read
 * them in large chunks, and parse them with the same core as the ingest Lambda. Nothing here
 * stops a run: a folder or file that cannot be read is listed as skipped with its reason.
 */
import { createReadStream } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type DuplicateFilter } from '../../core/capture/duplicates';
import { type IngestReportBuilder } from '../../core/capture/ingest-report';
import { MAX_LINE_BYTES, MIN_LINE_BYTES_LIMIT, parseCaptureStream } from '../../core/capture/stream';
import { LineIndex } from '../../core/plan/line-index';
import { twoPassPlanner, type Planner, type RangeReader } from '../../core/plan/read-back';
import type { CaptureRecord } from '../../core/types';

const NOT_JSONL = 'not a .jsonl file';

/** The environment variable that lowers the line cap (bytes); see MAX_LINE_BYTES. */
export const MAX_LINE_BYTES_ENV = 'CAPTURE_REPLAY_MAX_LINE_BYTES';

/** The line cap from the environment: MAX_LINE_BYTES when unset; an error message when invalid. */
export function maxLineBytesFrom(env: NodeJS.ProcessEnv = process.env): number | string {
  const raw = env[MAX_LINE_BYTES_ENV];
  if (raw === undefined || raw.trim() === '') return MAX_LINE_BYTES;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < MIN_LINE_BYTES_LIMIT || value > MAX_LINE_BYTES) {
    return `${MAX_LINE_BYTES_ENV} must be a whole number of bytes from ${MIN_LINE_BYTES_LIMIT} to ${MAX_LINE_BYTES} (got "${raw}")`;
  }
  return value;
}

/** `EACCES: permission denied`, without the path (the report names the file already). */
function why(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (typeof e?.code === 'string') {
    const text = typeof e.message === 'string' ? e.message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '') : '';
    return text ? `${e.code}: ${text}` : e.code;
  }
  return error instanceof Error ? error.message : String(error);
}

/** A system error (the file system's), as opposed to a bug: only those become a skipped file. */
function isSystemError(error: unknown): error is NodeJS.ErrnoException {
  return (
    typeof (error as NodeJS.ErrnoException)?.code === 'string' &&
    typeof (error as NodeJS.ErrnoException)?.syscall === 'string'
  );
}

/**
 * The capture files under a path: one file, or a folder searched recursively (SageMaker's
 * yyyy/mm/dd/hh partitions). `.jsonl` files come sorted by full path, so capture order is
 * partition order; anything else is reported as skipped, never silently ignored, and so is a
 * folder that cannot be listed (`EACCES`...). A missing path is an error.
 */
export async function listCaptureFiles(
  path: string,
): Promise<{ files: string[]; skipped: { file: string; reason: string }[] }> {
  const root = resolve(path);
  const info = await stat(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') throw new Error(`captures path not found: ${path}`);
    throw new Error(`cannot read captures path ${path}: ${why(error)}`);
  });
  if (info.isFile())
    return root.endsWith('.jsonl')
      ? { files: [root], skipped: [] }
      : { files: [], skipped: [{ file: root, reason: NOT_JSONL }] };
  if (!info.isDirectory()) return { files: [], skipped: [{ file: root, reason: 'not a regular file or folder' }] };
  const files: string[] = [];
  const skipped: { file: string; reason: string }[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if (!isSystemError(error)) throw error;
      skipped.push({ file: dir, reason: `folder not read: ${why(error)}` });
      return;
    }
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (!entry.isFile())
        skipped.push({
          file: full,
          reason: entry.isSymbolicLink() ? 'a symbolic link (not followed)' : 'not a regular file',
        });
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

export interface ReadCapturesOptions {
  /** The line cap; default from CAPTURE_REPLAY_MAX_LINE_BYTES, else MAX_LINE_BYTES. */
  maxLineBytes?: number;
}

/**
 * Every capture record under a path, in file order; bad lines and other files go to the
 * report. A file that cannot be opened is skipped with its reason; one whose reading fails
 * part-way keeps the lines read before (counted) and is listed as skipped from there.
 * Throws only for a missing captures path or an invalid CAPTURE_REPLAY_MAX_LINE_BYTES.
 */
export async function* readCaptures(
  path: string,
  report: IngestReportBuilder,
  duplicates: DuplicateFilter,
  options: ReadCapturesOptions = {},
): AsyncGenerator<CaptureRecord> {
  const maxLineBytes = options.maxLineBytes ?? maxLineBytesFrom();
  if (typeof maxLineBytes === 'string') throw new Error(maxLineBytes);
  const { files, skipped } = await listCaptureFiles(path);
  for (const s of skipped) report.skipFile(s.file, s.reason);
  const nowMs = Date.now();
  for (const file of files) {
    // Opened first, so an unreadable file is skipped before it is entered in the report.
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      if (!isSystemError(error)) throw error;
      report.skipFile(file, `not read: ${why(error)}`);
      continue;
    }
    let bytes = 0;
    const chunks = async function* (): AsyncGenerator<Uint8Array> {
      for await (const chunk of handle.createReadStream({
        highWaterMark: 1 << 20,
        autoClose: false,
      }) as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        yield chunk;
      }
    };
    try {
      yield* parseCaptureStream(chunks(), file, report, duplicates, { maxLineBytes, nowMs });
    } catch (error) {
      if (!isSystemError(error)) throw error;
      report.skipFile(file, `reading failed after ${bytes} bytes (${why(error)}); the lines before are counted`);
    } finally {
      await handle.close().catch(() => undefined);
    }
  }
}

/** Reads byte ranges of a local file (opened for each read: a plan reads few ranges). */
export function fileRangeReader(file: string): RangeReader {
  return async (start, end) => {
    const handle = await open(file, 'r');
    try {
      const buf = Buffer.allocUnsafe(end - start);
      let filled = 0;
      while (filled < buf.length) {
        const { bytesRead } = await handle.read(buf, filled, buf.length - filled, start + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return buf.subarray(0, filled);
    } finally {
      await handle.close();
    }
  };
}

/**
 * Pass 2: the planner `runReplay` takes, over the index of pass 1 (a LineIndex filled with
 * the records of readCaptures). It plans the index once (which releases it), reads back only
 * the selected records' lines from their files, four ranges at a time, and makes each target
 * kind's plan from them.
 */
export function localPlanner(index: LineIndex): Planner {
  return twoPassPlanner(index, fileRangeReader, { concurrency: 4 });
}

export { LineIndex };
