/**
 * Planning a scheduled window run, without AWS: which Data Capture folders and
 * files can hold the window's records, the records of the window read in one streamed pass
 * into a columnar index (no bodies), then planned like any capture
 * (plan.ts rules 1-6, across files as the local CLI does), each target kind getting its own
 * plan whose bodies are read back by byte range when their shards are sent.
 *
 * Data Capture writes `<prefix><endpoint>/<variant>/yyyy/mm/dd/hh/<file>.jsonl`
 * (https://docs.aws.amazon.com/sagemaker/latest/dg/model-monitor-data-capture-endpoint.html);
 * the deployment's capture prefix may already point inside an endpoint's or a variant's
 * folder, so the levels are discovered, not assumed.
 */
import { DuplicateFilter } from '../capture/duplicates';
import { IngestReportBuilder } from '../capture/ingest-report';
import { parseCaptureStream } from '../capture/stream';
import type { DispatchablePlan, PlanItem } from '../pipeline/dispatch';
import { grownColumn, INITIAL_ROWS, LineColumns } from '../plan/line-columns';
import {
  incompatibleAs,
  indexRecord,
  type IndexedEntry,
  type IndexedPlan,
  type LineRef,
  type PlanOptions,
} from '../plan/plan';
import { readBackRequests, type RangeReader } from '../plan/read-back';
import type { CaptureRecord, DropReason, IngestReport, ReplayPlan, ScheduledRequest, TargetKind } from '../types';
import type { WindowRange } from './window';

/** One version of a capture object: streamed once, then read back by byte range (the same version). */
export interface CaptureFile {
  chunks: AsyncIterable<Uint8Array>;
  readRange: RangeReader;
}

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

type Verdict = { reason: DropReason; detail: string };

/** A window record without its body: a LineRef with what sharding and every target kind need. */
export interface WindowRef extends LineRef {
  bodyBytes: number;
  verdicts: Partial<Record<TargetKind, Verdict | null>>;
}

/**
 * Pass 1's index of the window's records, in columns (~50 bytes a record: 180,000 requests
 * in ~9 MB): the CLI's LineIndex columns (line-columns.ts) plus the body size and each
 * target kind's verdict (interned: a handful of distinct ones). Only the selected rows
 * become objects, when planned.
 */
export class WindowIndex extends LineColumns<WindowRef> {
  private readonly verdictTable: (Verdict | null)[] = [null];
  private readonly verdictIds = new Map<string, number>();
  private bodyBytes = new Float64Array(INITIAL_ROWS);
  private verdict: Uint16Array;

  constructor(private readonly kinds: readonly TargetKind[]) {
    super();
    if (kinds.length === 0) throw new Error('a window index needs at least one target kind');
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

  protected ref(i: number): WindowRef {
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

export interface WindowPass {
  plan: IndexedPlan<WindowRef>;
  report: IngestReport;
  counts: WindowCounts;
  /** Display names of the files read, in the order read. */
  filesRead: string[];
  /** A range reader per file read, by display name. */
  readers: Map<string, RangeReader>;
}

/**
 * Pass 1 over the window's files: each streamed once, in key order; accepted records in
 * [start, end) are indexed but for copies of one record (one filter across every file keeps
 * the earliest by inferenceTime, ties to key order: duplicates.ts); the index
 * is planned with `options` (the schedule's `sample` as its sampleRate, and its `limit`).
 * A file gone or replaced since it was listed is skipped with its reason.
 */
export async function readWindow(
  objects: CaptureObjects,
  files: readonly CaptureObjectInfo[],
  range: WindowRange,
  options: PlanOptions & { kinds: readonly TargetKind[]; nowMs?: number },
): Promise<WindowPass> {
  const report = new IngestReportBuilder();
  const index = new WindowIndex(options.kinds);
  const duplicates = new DuplicateFilter();
  const counts: WindowCounts = {
    start: new Date(range.startMs).toISOString(),
    end: new Date(range.endMs).toISOString(),
    inWindow: 0,
    outsideWindow: 0,
    duplicates: 0,
    sampledOut: 0,
  };
  const filesRead: string[] = [];
  const readers = new Map<string, RangeReader>();
  for (const info of files) {
    const name = objects.describe(info.key);
    const file = await objects.open(info.key, info.etag);
    if (!file) {
      report.skipFile(name, `changed or deleted since it was listed (ETag ${info.etag})`);
      continue;
    }
    filesRead.push(name);
    readers.set(name, file.readRange);
    // No duplicate filter in the parser: a duplicate is only this run's business inside the window.
    for await (const record of parseCaptureStream(file.chunks, name, report, undefined, {
      ...(options.nowMs !== undefined ? { nowMs: options.nowMs } : {}),
    })) {
      if (record.inferenceTimeMs < range.startMs || record.inferenceTimeMs >= range.endMs) {
        counts.outsideWindow++;
        continue;
      }
      counts.inWindow++;
      // The earliest copy is kept (duplicates.ts): a later-seen earlier one supersedes the row indexed before.
      const admission = duplicates.admit(record);
      if (admission.duplicate || admission.replaced) counts.duplicates++;
      if (!admission.duplicate) index.add(record, options);
    }
  }
  const plan = index.planOnce(options);
  counts.sampledOut = plan.excluded.sample ?? 0;
  return { plan, report: { ...report.build(), timing: plan.timing }, counts, filesRead, readers };
}

/** The requests of some entries, each read back from its own file (ranges of one file at once), in the entries' order. */
async function loadEntries(
  entries: readonly IndexedEntry<WindowRef>[],
  readers: ReadonlyMap<string, RangeReader>,
  options: PlanOptions,
): Promise<ScheduledRequest[]> {
  const byFile = new Map<string, number[]>();
  entries.forEach((e, k) => {
    const list = byFile.get(e.record.source.file);
    if (list) list.push(k);
    else byFile.set(e.record.source.file, [k]);
  });
  const out = new Array<ScheduledRequest>(entries.length);
  await Promise.all(
    [...byFile].map(async ([file, positions]) => {
      const read = readers.get(file);
      if (!read) throw new Error(`no reader for ${file}`);
      const requests = await readBackRequests(
        positions.map((k) => entries[k] as IndexedEntry<WindowRef>),
        read,
        options,
      );
      requests.forEach((r, j) => (out[positions[j] as number] = r));
    }),
  );
  return out;
}

/**
 * Each target kind's schedulable plan of the same entries (what ingest does per kind): the
 * kind's requests as items, the rest incompatible with their reason; bodies read back when
 * dispatchRun loads a window of shards.
 */
export function windowPlans(
  pass: Pick<WindowPass, 'plan' | 'readers'>,
  kinds: readonly TargetKind[],
  options: PlanOptions,
): Map<TargetKind, DispatchablePlan> {
  const { entries } = pass.plan;
  const plans = new Map<TargetKind, DispatchablePlan>();
  for (const kind of kinds) {
    const kindOptions: PlanOptions = { ...options, targetKind: kind };
    const items: PlanItem[] = [];
    const incompatible: DispatchablePlan['incompatible'] = [];
    for (const e of entries) {
      const verdict = e.record.verdicts[kind];
      if (verdict === undefined) throw new Error(`entry ${e.index} was not indexed for target kind ${kind}`);
      if (verdict) incompatible.push({ index: e.index, offsetMs: e.offsetMs, reason: verdict.reason });
      else
        items.push({
          index: e.index,
          offsetMs: e.offsetMs,
          bodyBytes: e.record.bodyBytes,
          sourceFile: e.record.source.file,
        });
    }
    plans.set(kind, {
      items,
      incompatible,
      durationMs: pass.plan.durationMs,
      // Entry i has index i (plan order), so the entries are found by position.
      load: (loadItems) =>
        loadEntries(
          loadItems.map((i) => entries[i.index] as IndexedEntry<WindowRef>),
          pass.readers,
          kindOptions,
        ),
    });
  }
  return plans;
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

/** The plan's exclusions (sample and limit among them) and the window's duplicates: what the run's manifests count as not scheduled. */
export function notScheduledOf(
  plan: Pick<IndexedPlan<WindowRef>, 'excluded'>,
  counts: WindowCounts,
): ReplayPlan['excluded'] & { duplicate?: number } {
  return { ...plan.excluded, ...(counts.duplicates ? { duplicate: counts.duplicates } : {}) };
}
