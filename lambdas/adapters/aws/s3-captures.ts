/**
 * Data Capture read in place from S3 by the command line (`replay s3://bucket/prefix`): only
 * the hour partitions a window needs are listed and read. The pieces are the plan function's
 * (one engine, two drivers): the variant folders under the prefix (discoverCaptureFolders),
 * a window's partitions with the hour after it, where a file written late lands
 * (hourPartitions), their .jsonl objects (listWindowFiles), each object streamed once for pass
 * 1 and read back by byte range, at the version listed, for pass 2 (capture-listing.ts).
 * Which partitions a window reads, and the permissions it needs: docs/timing.md#captures-straight-from-s3.
 */
import type { DuplicateFilter } from '../../core/capture/duplicates';
import { CaptureLocationError } from '../../core/errors';
import type { IngestReportBuilder } from '../../core/capture/ingest-report';
import { parseCaptureStream, type StreamOptions } from '../../core/capture/stream';
import type { RangeReader } from '../../core/plan/read-back';
import { hourPartitions } from '../../core/scheduled-runs/window';
import {
  discoverCaptureFolders,
  listWindowFiles,
  type CaptureFolder,
  type CaptureObjectInfo,
  type CaptureObjects,
} from '../../core/scheduled-runs/window-plan';
import type { CaptureRecord } from '../../core/types';

const HOUR_MS = 3_600_000;

/** Which captures a run reads: a time range (epoch ms, end exclusive; null: open), or offsets from the first record (ms, end inclusive). */
export type CaptureSelection =
  | { by: 'time'; startMs: number | null; endMs: number | null }
  | { by: 'offsets'; startOffsetMs: number; endOffsetMs: number | null };

/** `yyyy/mm/dd/hh` of the UTC hour that holds `ms`. */
export const partitionOf = (ms: number): string => hourPartitions({ startMs: ms, endMs: ms + 1 })[0] as string;

/** The UTC hour a partition stands for, in epoch ms. */
export function partitionMs(partition: string): number {
  const [y, m, d, h] = partition.split('/').map(Number) as [number, number, number, number];
  return Date.UTC(y, m - 1, d, h);
}

const nextHour = (partition: string) => partitionOf(partitionMs(partition) + HOUR_MS);

/** Digits of the length of its level: a year folder `2026`, else `04`. */
const PARTITION_LEVEL = [/^\d{4}$/, /^\d{2}$/, /^\d{2}$/, /^\d{2}$/];

/**
 * The hour partitions under a variant folder between `lo` and `hi` (inclusive, `yyyy/mm/dd/hh`;
 * null: open), ascending: its year, month, day and hour folders listed (ListObjectsV2 with a
 * delimiter), descending only into those that can hold a partition in range.
 */
export async function* partitionsIn(
  objects: Pick<CaptureObjects, 'listFolders'>,
  folder: CaptureFolder,
  lo: string | null,
  hi: string | null,
  path = '',
): AsyncGenerator<string> {
  const depth = path === '' ? 0 : path.split('/').length;
  const inRange = (p: string) =>
    (lo === null || p >= lo.slice(0, p.length)) && (hi === null || p <= hi.slice(0, p.length));
  for (const child of await objects.listFolders(folder.prefix + (path ? `${path}/` : ''))) {
    const name = child.slice(0, -1).split('/').pop() ?? '';
    const next = path ? `${path}/${name}` : name;
    if (!(PARTITION_LEVEL[depth] as RegExp).test(name) || !inRange(next)) continue;
    if (depth === 3) yield next;
    else yield* partitionsIn(objects, folder, lo, hi, next);
  }
}

/** The partitions in range of every folder, sorted, each once. */
async function existingPartitions(
  objects: Pick<CaptureObjects, 'listFolders'>,
  folders: readonly CaptureFolder[],
  lo: string | null,
  hi: string | null,
): Promise<string[]> {
  const found = new Set<string>();
  for (const folder of folders) for await (const p of partitionsIn(objects, folder, lo, hi)) found.add(p);
  return [...found].sort();
}

/** The earliest partition from `lo` on in any folder, or null. */
async function firstPartition(
  objects: Pick<CaptureObjects, 'listFolders'>,
  folders: readonly CaptureFolder[],
  lo: string | null,
): Promise<string | null> {
  let first: string | null = null;
  for (const folder of folders) {
    const next = await partitionsIn(objects, folder, lo, first).next();
    if (!next.done && (first === null || next.value < first)) first = next.value;
  }
  return first;
}

export interface S3CaptureRead {
  /** Pass 1: the records of the files read, in file order; bad lines, skipped files and duplicates go to the report. */
  records: AsyncGenerator<CaptureRecord>;
  /** Pass 2: byte ranges of a file read in pass 1, by its name (`s3://bucket/key`), at the version read. */
  readerFor(file: string): RangeReader;
}

export interface S3CaptureOptions extends Pick<StreamOptions, 'maxLineBytes' | 'nowMs'> {
  report: IngestReportBuilder;
  duplicates: DuplicateFilter;
}

/**
 * Reads the capture objects of a selection under `prefix` (a Data Capture prefix, an endpoint's or a variant's folder,
 * or one `.jsonl` object).
 */
export function readS3Captures(
  objects: CaptureObjects,
  prefix: string,
  selection: CaptureSelection,
  options: S3CaptureOptions,
): S3CaptureRead {
  const readers = new Map<string, RangeReader>();
  const reader = new ObjectReader(objects, options, readers);
  return {
    records: prefix.endsWith('.jsonl') ? reader.one(prefix) : selected(objects, prefix, selection, reader),
    readerFor(file) {
      const read = readers.get(file);
      if (!read) throw new Error(`${file} was not read in pass 1`);
      return read;
    },
  };
}

/**
 * The records of the selection's partitions. With both times, the partitions are computed, as the plan function does;
 * with a side open, the yyyy/mm/dd/hh folders that exist are listed, descending only into those in range. By offsets,
 * the first record's time is needed before the partitions are known: the first partition is read first with the hour
 * after it, then the partitions from first + start offset to first + end offset. Every record read is handed on (the
 * caller applies the window to them, as for a local folder); only the files outside the window are never read.
 */
async function* selected(
  objects: CaptureObjects,
  prefix: string,
  selection: CaptureSelection,
  reader: ObjectReader,
): AsyncGenerator<CaptureRecord> {
  const { folders, ignored } = await discoverCaptureFolders(objects, prefix, {});
  if (folders.length === 0) {
    throw new CaptureLocationError(
      `no Data Capture hour folders (yyyy/mm/dd/hh/) under ${objects.describe(prefix)}: ` +
        `give the endpoints' capture prefix, an endpoint's folder or a variant's${
          ignored.length > 0
            ? ` (found ${ignored
                .slice(0, 3)
                .map((f) => objects.describe(f))
                .join(', ')}${ignored.length > 3 ? ', ...' : ''}, with no year folders)`
            : ''
        }`,
    );
  }
  for (const f of ignored)
    reader.report.skipFile(objects.describe(f), 'a folder without Data Capture year folders (yyyy/): not read');
  if (selection.by === 'time') {
    const { startMs, endMs } = selection;
    const partitions =
      startMs !== null && endMs !== null
        ? hourPartitions({ startMs, endMs })
        : await existingPartitions(
            objects,
            folders,
            startMs === null ? null : partitionOf(startMs),
            endMs === null ? null : nextHour(partitionOf(endMs - 1)),
          );
    yield* reader.partitions(folders, partitions);
    return;
  }
  // By offsets: the first record first, then the partitions of its window.
  const done = new Set<string>();
  let cursor = await firstPartition(objects, folders, null);
  while (cursor !== null) {
    const head = [cursor, nextHour(cursor)];
    yield* reader.partitions(folders, head);
    head.forEach((p) => done.add(p));
    if (reader.earliestMs !== null) break;
    // Nothing accepted there (bad lines only): on to the next partition that exists.
    cursor = await firstPartition(objects, folders, nextHour(head[1] as string));
  }
  const first = reader.earliestMs;
  if (first === null) return;
  const lo = partitionOf(first + selection.startOffsetMs);
  const hi = selection.endOffsetMs === null ? null : nextHour(partitionOf(first + selection.endOffsetMs));
  const rest = (await existingPartitions(objects, folders, lo, hi)).filter((p) => !done.has(p));
  yield* reader.partitions(folders, rest);
}

/** Streams capture objects into the parser, keeping each one's range reader for pass 2. */
class ObjectReader {
  /** The earliest inferenceTime of the records handed on so far. */
  earliestMs: number | null = null;
  readonly report: IngestReportBuilder;

  constructor(
    private readonly objects: CaptureObjects,
    private readonly options: S3CaptureOptions,
    private readonly readers: Map<string, RangeReader>,
  ) {
    this.report = options.report;
  }

  /** Every `.jsonl` object of these partitions in every folder, in key order; other objects listed as skipped. */
  async *partitions(folders: readonly CaptureFolder[], partitions: readonly string[]): AsyncGenerator<CaptureRecord> {
    if (partitions.length === 0) return;
    const { files, skipped } = await listWindowFiles(this.objects, folders, partitions);
    for (const s of skipped) this.report.skipFile(this.objects.describe(s.key), s.reason);
    for (const info of files) yield* this.object(info);
  }

  /** The one object a `.jsonl` location names. */
  async *one(key: string): AsyncGenerator<CaptureRecord> {
    const info = (await this.objects.listObjects(key)).find((o) => o.key === key);
    if (!info) throw new CaptureLocationError(`no object ${this.objects.describe(key)}`);
    yield* this.object(info);
  }

  /**
   * One object: gone or replaced since it was listed, it is skipped with its reason; its body
   * failing part-way keeps the lines before (counted), as a local file's read error does.
   * Any other error (a refusal, a missing bucket) is the run's, and thrown.
   */
  private async *object(info: CaptureObjectInfo): AsyncGenerator<CaptureRecord> {
    const name = this.objects.describe(info.key);
    const file = await this.objects.open(info.key, info.etag);
    if (!file) {
      this.report.skipFile(name, `changed or deleted since it was listed (ETag ${info.etag})`);
      return;
    }
    this.readers.set(name, file.readRange);
    let bytes = 0;
    let failed = false;
    const chunks = async function* (): AsyncGenerator<Uint8Array> {
      try {
        for await (const chunk of file.chunks) {
          bytes += chunk.byteLength;
          yield chunk;
        }
      } catch (error) {
        failed = true;
        throw error;
      }
    };
    const { maxLineBytes, nowMs } = this.options;
    try {
      for await (const record of parseCaptureStream(chunks(), name, this.report, this.options.duplicates, {
        ...(maxLineBytes !== undefined ? { maxLineBytes } : {}),
        ...(nowMs !== undefined ? { nowMs } : {}),
      })) {
        if (this.earliestMs === null || record.inferenceTimeMs < this.earliestMs)
          this.earliestMs = record.inferenceTimeMs;
        yield record;
      }
    } catch (error) {
      if (!failed) throw error;
      this.report.skipFile(
        name,
        `reading failed after ${bytes} bytes (${error instanceof Error ? error.message : String(error)}); the lines before are counted`,
      );
    }
  }
}
