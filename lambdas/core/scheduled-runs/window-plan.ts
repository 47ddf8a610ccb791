/**
 * Planning a scheduled window run, without AWS: which Data Capture folders and
 * files can hold the window's records, and those records read in the pipeline's one first pass
 * (core/pipeline/capture-pass.ts) with the window's range.
 *
 * Data Capture writes `<prefix><endpoint>/<variant>/yyyy/mm/dd/hh/<file>.jsonl`
 * (https://docs.aws.amazon.com/sagemaker/latest/dg/model-monitor-data-capture-endpoint.html);
 * the deployment's capture prefix may already point inside an endpoint's or a variant's
 * folder, so the levels are discovered, not assumed.
 */
import { readCapturePass, type CaptureFile, type CapturePass, type PassOptions } from '../pipeline/capture-pass';
import type { WindowRange } from './window';

export type { CaptureFile };

/** A listed capture object. */
export interface CaptureObjectInfo {
  key: string;
  /** Without quotes: every later read names this version. */
  etag: string;
  size: number;
}

/** The capture bucket as the plan function reads it (S3 in AWS: capture-listing.ts; memory in tests). */
export interface CaptureObjects {
  /** How the report and the requests name a key (`s3://bucket/key`). */
  describe(key: string): string;
  /** The child folders of a prefix (ListObjectsV2 with Delimiter `/`), each a full prefix ending in `/`. */
  listFolders(prefix: string): Promise<string[]>;
  /** Every object under a prefix, sorted by key. */
  listObjects(prefix: string): Promise<CaptureObjectInfo[]>;
  /** That version of the object, or null when it is gone or was replaced since it was listed. */
  open(key: string, etag: string): Promise<CaptureFile | null>;
}

/** A variant folder of Data Capture: its year folders hold the hour partitions. */
export interface CaptureFolder {
  prefix: string;
  endpoint: string | null;
  variant: string | null;
}

const YEAR_FOLDER = /(^|\/)\d{4}\/$/;
/** A folder's own name: `a/b/c/` -> `c`. */
const nameOf = (prefix: string): string | null => prefix.replace(/\/$/, '').split('/').pop() || null;

/**
 * The variant folders under the capture prefix: the prefix itself when its children are
 * years, else its children (variants) or grandchildren (endpoint / variant) whose children
 * are years. At most two levels down; folders at the last level that hold no years are
 * returned in `ignored`, so a wrong prefix is visible in the log rather than silent.
 */
export async function discoverCaptureFolders(
  objects: Pick<CaptureObjects, 'listFolders'>,
  capturePrefix: string,
  filter: { endpoints?: readonly string[]; variants?: readonly string[] },
): Promise<{ folders: CaptureFolder[]; ignored: string[] }> {
  // A prefix not ending at a folder boundary (`datacapture`) names one: the keys are `datacapture/...`.
  const root = capturePrefix === '' || capturePrefix.endsWith('/') ? capturePrefix : `${capturePrefix}/`;
  const hasYears = (children: readonly string[]) => children.some((c) => YEAR_FOLDER.test(c));
  const parentName = (prefix: string) => nameOf(prefix.slice(0, prefix.replace(/\/$/, '').lastIndexOf('/') + 1));
  const wanted = (list: readonly string[] | undefined, name: string | null) =>
    !list || (name !== null && list.includes(name));
  const folders: CaptureFolder[] = [];
  const ignored: string[] = [];
  const take = (folder: CaptureFolder) =>
    wanted(filter.endpoints, folder.endpoint) && wanted(filter.variants, folder.variant)
      ? folders.push(folder)
      : ignored.push(folder.prefix);
  const level0 = await objects.listFolders(root);
  if (hasYears(level0)) {
    // The prefix is a variant's folder.
    take({ prefix: root, endpoint: root ? parentName(root) : null, variant: nameOf(root) });
    return { folders, ignored };
  }
  for (const child of level0) {
    const level1 = await objects.listFolders(child);
    if (hasYears(level1)) {
      // The prefix is an endpoint's folder: its children are variants.
      take({ prefix: child, endpoint: root ? nameOf(root) : null, variant: nameOf(child) });
      continue;
    }
    // The prefix holds endpoints: the child is one, its children are variants.
    const endpoint = nameOf(child);
    if (!wanted(filter.endpoints, endpoint)) {
      ignored.push(child);
      continue;
    }
    for (const grandchild of level1) {
      const folder = { prefix: grandchild, endpoint, variant: nameOf(grandchild) };
      if (!wanted(filter.variants, folder.variant)) ignored.push(grandchild);
      else if (hasYears(await objects.listFolders(grandchild))) folders.push(folder);
      else ignored.push(grandchild);
    }
  }
  return { folders, ignored };
}

/**
 * The capture files of the window's hour partitions (`yyyy/mm/dd/hh`, from hourPartitions)
 * in every folder, in key order (partition order, then Data Capture's file names, which
 * start with the time). Anything but `.jsonl` is returned as skipped, with its reason.
 */
export async function listWindowFiles(
  objects: Pick<CaptureObjects, 'listObjects'>,
  folders: readonly CaptureFolder[],
  partitions: readonly string[],
): Promise<{ files: CaptureObjectInfo[]; skipped: { key: string; reason: string }[] }> {
  const files: CaptureObjectInfo[] = [];
  const skipped: { key: string; reason: string }[] = [];
  for (const folder of folders) {
    for (const hour of partitions) {
      for (const object of await objects.listObjects(`${folder.prefix}${hour}/`)) {
        if (object.key.endsWith('.jsonl')) files.push(object);
        else if (!object.key.endsWith('/')) skipped.push({ key: object.key, reason: 'not a .jsonl file' });
      }
    }
  }
  const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  files.sort((a, b) => byKey(a.key, b.key));
  return { files, skipped };
}

/** What pass 1 found in and around the window (the ingest report's `window` section). */
export interface WindowCounts {
  start: string;
  end: string;
  /** Accepted records of the files read whose inferenceTime is in [start, end). */
  inWindow: number;
  /** Accepted records of the files read outside the window: not rejected, just not this run's. */
  outsideWindow: number;
  /** Copies of a record of the window (same eventId and body), in any file: the earliest by inferenceTime is replayed, these are not. */
  duplicates: number;
  /** Records of the window that `sample` left out (the plan's excluded.sample). */
  sampledOut: number;
}

export type WindowPass = Omit<CapturePass, 'counts'> & { counts: WindowCounts };

/**
 * Pass 1 over the window's files (capture-pass.ts readCapturePass with the window's range):
 * each streamed once, in key order; the index is planned with `options` (the schedule's
 * `sample` as its sampleRate, and its `limit`). A file gone or replaced since it was listed
 * is skipped with its reason.
 */
export async function readWindow(
  objects: CaptureObjects,
  files: readonly CaptureObjectInfo[],
  range: WindowRange,
  options: Omit<PassOptions, 'range'>,
): Promise<WindowPass> {
  const sources = files.map((info) => ({
    name: objects.describe(info.key),
    open: () => objects.open(info.key, info.etag),
    goneReason: `changed or deleted since it was listed (ETag ${info.etag})`,
  }));
  const pass = await readCapturePass(sources, { ...options, range });
  const counts: WindowCounts = {
    start: new Date(range.startMs).toISOString(),
    end: new Date(range.endMs).toISOString(),
    inWindow: pass.counts.inRange,
    outsideWindow: pass.counts.outsideRange,
    duplicates: pass.counts.duplicates,
    sampledOut: pass.plan.excluded.sample ?? 0,
  };
  return { ...pass, counts };
}

/**
 * Sequential dispatch: target k starts after target k-1's last due time plus the request
 * timeout (its last request may stream that long), so one target's traffic never overlaps
 * the next's. Parallel: every target at offset 0.
 */
export function dispatchOffsetsMs(
  targets: readonly string[],
  dispatch: 'parallel' | 'sequential',
  durationMs: number,
  requestTimeoutMs: number,
): Record<string, number> {
  return Object.fromEntries(
    targets.map((t, k) => [t, dispatch === 'sequential' ? k * (durationMs + requestTimeoutMs) : 0]),
  );
}
