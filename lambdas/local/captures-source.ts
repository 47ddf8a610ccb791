/**
 * Where the command line reads captures (`replay`, and `capacity` through replay's ingest): a
 * local `.jsonl` file or folder (adapters/local/capture-files.ts), or an `s3://bucket/prefix`
 * read in place, only the hour partitions of the window listed and read
 * (adapters/aws/s3-captures.ts), with the credentials and region the AWS CLI would use (the
 * SDK's default chain: environment, shared config and credentials files, SSO, web identity,
 * container and instance roles,
 * https://docs.aws.amazon.com/sdk-for-javascript/v3/developer-guide/setting-credentials-node.html;
 * --region). Either way the same two passes: records streamed into the
 * index, then the selected lines read back by byte range.
 *
 * The window (--from/--to) applies to the records of both: a record outside it is counted, not
 * indexed, and only records inside it take part in the duplicate rule, as in the plan
 * function's window runs (core/scheduled-runs/window-plan.ts readWindow).
 */
import { fileRangeReader, maxLineBytesFrom, readCaptures } from '../adapters/local/capture-files';
import { readS3Captures, type CaptureSelection } from '../adapters/aws/s3-captures';
import { CaptureLocationError } from '../core/errors';
import { DuplicateFilter, type Admission } from '../core/capture/duplicates';
import type { IngestReportBuilder } from '../core/capture/ingest-report';
import type { RangeReader } from '../core/plan/read-back';
import type { CaptureObjects } from '../core/scheduled-runs/window-plan';
import type { CaptureRecord } from '../core/types';
import { describeAwsError } from './aws-problem';

export type CapturesLocation = { kind: 'local'; path: string } | { kind: 's3'; bucket: string; prefix: string };

/** The location a captures argument names, or what is wrong with it. */
export function capturesLocation(raw: string): CapturesLocation | string {
  if (!/^s3:\/\//i.test(raw)) return { kind: 'local', path: raw };
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/i.exec(raw);
  if (!m?.[1]) return `"${raw}" names no bucket: s3://<bucket>/<capture prefix>`;
  return { kind: 's3', bucket: m[1], prefix: m[2] ?? '' };
}

/** The captured window by inferenceTime: [startMs, endMs) in epoch ms, a side null when open. */
export interface CaptureWindow {
  startMs: number | null;
  endMs: number | null;
}

export const inWindow = (window: CaptureWindow, timeMs: number) =>
  (window.startMs === null || timeMs >= window.startMs) && (window.endMs === null || timeMs < window.endMs);

/** The duplicate rule over the window's records only: one outside it is neither kept nor a copy. */
class WindowDuplicateFilter extends DuplicateFilter {
  constructor(private readonly window: CaptureWindow) {
    super();
  }

  override admit(record: CaptureRecord): Admission {
    return inWindow(this.window, record.inferenceTimeMs) ? super.admit(record) : { duplicate: false, replaced: null };
  }
}

/** What `replay` reads, its window, and how. */
export interface CapturesSpec {
  capturesPath: string;
  /** null: the whole capture, or the plan's offsets. */
  window: CaptureWindow | null;
  /** The plan's offsets (ms from the first record): which S3 partitions are read when there is no window. */
  offsets: { startMs: number; endMs: number | null };
  /** The S3 client's region; null: the SDK's default chain. */
  region: string | null;
}

export interface CapturesRead {
  /** Pass 1: every record read, in file order (outside the window too: the caller counts those). */
  records: AsyncIterable<CaptureRecord>;
  /** Pass 2: byte ranges of a file read in pass 1. */
  readerFor(file: string): RangeReader;
}

/** The captures of `spec`, counted in `report`. Problems (a missing path, an AWS refusal) are thrown, each one line. */
export function openCaptures(spec: CapturesSpec, report: IngestReportBuilder): CapturesRead {
  const duplicates = spec.window ? new WindowDuplicateFilter(spec.window) : new DuplicateFilter();
  const location = capturesLocation(spec.capturesPath);
  if (typeof location === 'string') throw new Error(location);
  if (location.kind === 'local')
    return { records: readCaptures(location.path, report, duplicates), readerFor: fileRangeReader };
  const maxLineBytes = maxLineBytesFrom();
  if (typeof maxLineBytes === 'string') throw new Error(maxLineBytes);
  const objects = lazyS3CaptureObjects(location.bucket, spec.region);
  const selection: CaptureSelection = spec.window
    ? { by: 'time', startMs: spec.window.startMs, endMs: spec.window.endMs }
    : { by: 'offsets', startOffsetMs: spec.offsets.startMs, endOffsetMs: spec.offsets.endMs };
  const read = readS3Captures(objects, location.prefix, selection, {
    report,
    duplicates,
    maxLineBytes,
    nowMs: Date.now(),
  });
  const uri = `s3://${location.bucket}/${location.prefix}`;
  return {
    records: saidInOneLine(read.records, uri, location.bucket),
    readerFor: (file) => {
      const reader = read.readerFor(file);
      return (start, end) =>
        reader(start, end).catch((error: unknown) =>
          Promise.reject(new Error(describeS3CapturesError(error, file, location.bucket), { cause: error })),
        );
    },
  };
}

/**
 * The bucket's capture objects (adapters/aws/capture-listing.ts), the S3 client and the SDK
 * loaded at the first call: a replay of local captures starts without loading them.
 */
function lazyS3CaptureObjects(bucket: string, region: string | null): CaptureObjects {
  let loaded: Promise<CaptureObjects> | undefined;
  const objects = () =>
    (loaded ??= Promise.all([import('../adapters/aws/capture-listing'), import('./s3-links')]).then(
      ([listing, links]) => listing.s3CaptureObjects(links.cliS3Client(region), bucket),
    ));
  return {
    describe: (key) => `s3://${bucket}/${key}`,
    listFolders: async (prefix) => (await objects()).listFolders(prefix),
    listObjects: async (prefix) => (await objects()).listObjects(prefix),
    open: async (key, etag) => (await objects()).open(key, etag),
  };
}

/** An AWS error while reading the captures as one line: what AWS said and what to do. */
export function describeS3CapturesError(error: unknown, uri: string, bucket: string): string {
  if (error instanceof CaptureLocationError) return error.message;
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  if (e?.name === 'NoSuchBucket')
    return `could not read ${uri}: NoSuchBucket: there is no bucket named ${bucket} (or not in this account)`;
  if (e?.name === 'AccessDenied' || e?.$metadata?.httpStatusCode === 403) {
    return (
      `could not read ${uri}: AccessDenied: your identity may not read it (reading captures takes ` +
      `s3:ListBucket on the bucket and s3:GetObject on the objects under the prefix)`
    );
  }
  return describeAwsError(error, `read ${uri}`);
}

async function* saidInOneLine(
  records: AsyncIterable<CaptureRecord>,
  uri: string,
  bucket: string,
): AsyncGenerator<CaptureRecord> {
  try {
    yield* records;
  } catch (error) {
    throw new Error(describeS3CapturesError(error, uri, bucket), { cause: error });
  }
}
