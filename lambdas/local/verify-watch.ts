/**
 * Following the run a verification sample starts, through the pipeline's own milestones in
 * the results bucket, each one object (no listing needed):
 *   1. ingested   runs/<run>/ingest_report.json  (the ingest read the file)
 *   2. scheduled  work/<run>/_run.json           (every shard is on the replay queue; it
 *                                                 names the run's targets and its deadline)
 *   3. per target runs/<run>/<target>/run_manifest.json (the collector's last write)
 *   4. reported   runs/<run>/report.html         (written once every target is final)
 * and, when time runs out, what is missing and where to look.
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { z } from 'zod';
import { ARTIFACT_FILES } from '../core/export/artifacts';
import { runRecordSchema } from '../core/pipeline/common';
import { runPrefix, runRecordKey, targetPrefix } from '../core/pipeline/keys';
import { isNotFound } from './aws-problem';
import { objectExists, reportKey, s3Uri } from './s3-links';

export type Phase = 'ingest' | 'schedule' | 'targets' | 'report' | 'done';

const ingestTotalsSchema = z.object({
  totals: z.object({
    accepted: z.number(),
    rejected: z.number(),
    blankLines: z.number().optional(),
    rejectedByReason: z.record(z.string(), z.number()).optional(),
  }),
});
export type IngestTotals = z.infer<typeof ingestTotalsSchema>['totals'];

const manifestSchema = z.object({
  scheduled: z.number(),
  succeeded: z.number(),
  failed: z.number(),
  dropped: z.number(),
  balanced: z.boolean(),
  droppedByReason: z.record(z.string(), z.number()).optional(),
  failedByType: z.record(z.string(), z.number()).optional(),
});
export type TargetCounts = z.infer<typeof manifestSchema>;

/** What the watch knows so far. */
export interface RunState {
  phase: Phase;
  runId: string | null;
  ingest: IngestTotals | null;
  targets: string[];
  /** Targets whose run_manifest.json is there. */
  finished: string[];
  /** When the run is finalised at the latest (its last due time + grace), epoch ms. */
  deadlineMs: number | null;
  /** When its first request is due, epoch ms. */
  firstDueMs: number | null;
  mode: string | null;
  /** Mirror mode's lag (inferenceTime + lag is each request's due time), ms. */
  lagMs: number | null;
}

async function getJson(s3: S3Client, bucket: string, key: string): Promise<unknown> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return JSON.parse(await (out.Body as { transformToString(): Promise<string> }).transformToString());
}

/** The run's progress, one look at a time. */
export class RunWatch {
  readonly state: RunState = {
    phase: 'ingest',
    runId: null,
    ingest: null,
    targets: [],
    finished: [],
    deadlineMs: null,
    firstDueMs: null,
    mode: null,
    lagMs: null,
  };

  constructor(
    private readonly s3: S3Client,
    readonly bucket: string,
    /** The ids the run may have (one per ingest mode). */
    readonly candidates: readonly string[],
  ) {}

  /** Looks once for the next milestones; returns true when the run's report is there. */
  async poll(): Promise<boolean> {
    const s = this.state;
    if (s.phase === 'ingest') {
      for (const id of this.candidates) {
        if (await objectExists(this.s3, { bucket: this.bucket, key: runPrefix(id) + ARTIFACT_FILES.ingestReport })) {
          s.runId = id;
          s.ingest =
            ingestTotalsSchema.safeParse(
              await getJson(this.s3, this.bucket, runPrefix(id) + ARTIFACT_FILES.ingestReport),
            ).data?.totals ?? null;
          s.phase = 'schedule';
          break;
        }
      }
    }
    const runId = s.runId;
    if (runId === null) return false;
    if (s.phase === 'schedule') {
      const record = await this.runRecord(runId);
      if (record) {
        s.targets = record.targets;
        s.deadlineMs = Number(BigInt(record.deadlineNs) / 1_000_000n);
        s.firstDueMs = Number(BigInt(record.startNs) / 1_000_000n);
        const input = record.inputConfig as { mode?: unknown; lag_ms?: unknown } | null;
        s.mode = typeof input?.mode === 'string' ? input.mode : null;
        s.lagMs = typeof input?.lag_ms === 'number' ? input.lag_ms : null;
        s.phase = 'targets';
      }
    }
    if (s.phase === 'targets') {
      for (const t of s.targets.filter((t) => !s.finished.includes(t))) {
        if (await objectExists(this.s3, { bucket: this.bucket, key: targetPrefix(runId, t) + ARTIFACT_FILES.manifest }))
          s.finished.push(t);
      }
      if (s.finished.length === s.targets.length) s.phase = 'report';
    }
    if (s.phase === 'report' && (await objectExists(this.s3, { bucket: this.bucket, key: reportKey(runId) })))
      s.phase = 'done';
    return s.phase === 'done';
  }

  private async runRecord(runId: string) {
    try {
      return runRecordSchema.parse(await getJson(this.s3, this.bucket, runRecordKey(runId)));
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /** Each target's counts, from its run_manifest.json. */
  async counts(): Promise<Map<string, TargetCounts>> {
    const runId = this.state.runId as string;
    const out = new Map<string, TargetCounts>();
    for (const t of this.state.targets)
      out.set(
        t,
        manifestSchema.parse(await getJson(this.s3, this.bucket, targetPrefix(runId, t) + ARTIFACT_FILES.manifest)),
      );
    return out;
  }
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 19);

/** The progress line: where the run is now. */
export function progressText(s: RunState): string {
  switch (s.phase) {
    case 'ingest':
      return 'waiting for the ingest to read the sample (S3 notification -> ingest queue -> ingest function)';
    case 'schedule':
      return `ingested (${s.ingest ? `${s.ingest.accepted} records accepted` : 'report read'}), scheduling run ${s.runId}`;
    case 'targets': {
      const pending = s.targets.filter((t) => !s.finished.includes(t));
      const first =
        s.firstDueMs !== null && s.firstDueMs > Date.now() ? `; first request due ${clock(s.firstDueMs)} UTC` : '';
      const due = s.deadlineMs !== null ? `${first}; finalised by ${clock(s.deadlineMs)} UTC at the latest` : first;
      return `run ${s.runId} replaying: ${s.finished.length}/${s.targets.length} targets done (waiting for ${pending.join(', ')})${due}`;
    }
    case 'report':
    case 'done':
      return `run ${s.runId}: every target done, waiting for report.html`;
  }
}

type Fn = 'ingest' | 'fire' | 'collect';

/** Where to look when something does not happen: the places a stack's operator can open. */
export interface Whereabouts {
  results: string;
  sampleUri: string;
  capturePrefix: string;
  ingestQueueUrl?: string | undefined;
  replayDlqUrl?: string | undefined;
  collectQueueUrl?: string | undefined;
  /** Log group names by function (ingest, fire, collect), or a command that lists them. */
  logGroups: Partial<Record<Fn, string>> | string;
  /** The command that gives a link to the run's report later (stack-outputs.ts relinkCommand). */
  relink: (runId: string) => string;
}

/** The functions' log groups by name, or, when they could not be looked up, the command that lists them (once). */
function logs(w: Whereabouts, fns: readonly Fn[]): string {
  const whose =
    fns.length === 1
      ? `the ${fns[0]} function's log group`
      : `the ${fns.slice(0, -1).join(', ')} and ${fns[fns.length - 1]} functions' log groups`;
  if (typeof w.logGroups === 'string') return `${whose} (list them with: ${w.logGroups})`;
  const groups = w.logGroups;
  const named = fns.map((fn) => groups[fn]).filter((g): g is string => g !== undefined);
  return named.length > 0 ? `${whose}: ${named.join(', ')}` : whose;
}

/** Lines saying what did not happen in time, what is there, and where to look. */
export function missingText(s: RunState, w: Whereabouts, candidates: readonly string[], waitedS: number): string[] {
  const at = (key: string) => s3Uri({ bucket: w.results, key });
  switch (s.phase) {
    case 'ingest':
      return [
        `no run started within ${waitedS} s: the ingest wrote no ` +
          `${candidates.map((id) => at(runPrefix(id) + ARTIFACT_FILES.ingestReport)).join(' nor ')}.`,
        `  The sample is at ${w.sampleUri}. Where to look:`,
        `  - the ingest queue${w.ingestQueueUrl ? ` ${w.ingestQueueUrl}` : ''}: messages waiting there mean ` +
          `the ingest function is not taking them; none means no S3 event reached it (is the capture prefix ` +
          `"${w.capturePrefix}" right, and is the stack in the capture bucket's region?)`,
        `  - ${logs(w, ['ingest'])}`,
      ];
    case 'schedule':
      return [
        `the ingest read the sample (${at(runPrefix(s.runId as string) + ARTIFACT_FILES.ingestReport)}) but ` +
          `did not finish scheduling run ${s.runId} within ${waitedS} s (no ` +
          `${at(runRecordKey(s.runId as string))}).`,
        `  Where to look: ${logs(w, ['ingest'])}; a message that failed three times is in the ingest queue's dead-letter queue.`,
      ];
    case 'targets': {
      const pending = s.targets.filter((t) => !s.finished.includes(t));
      const late =
        s.deadlineMs !== null && s.deadlineMs > Date.now()
          ? ` The run may still finish: it is finalised by ${new Date(s.deadlineMs).toISOString()} at the ` +
            `latest` +
            `${s.mode === 'mirror' ? ' (mirror mode: each request is due at its inferenceTime + lag)' : ''}.`
          : '';
      return [
        `run ${s.runId} was scheduled (targets ${s.targets.join(', ')}) but ` +
          `${pending.map((t) => at(targetPrefix(s.runId as string, t) + ARTIFACT_FILES.manifest)).join(', ')} ` +
          `${pending.length === 1 ? 'is' : 'are'} not there after ${waitedS} s.${late}`,
        `  Where to look: shard messages that failed three times are in the replay dead-letter ` +
          `queue${w.replayDlqUrl ? ` ${w.replayDlqUrl}` : ''}; ${logs(w, ['fire', 'collect'])}.`,
        `  When it finishes: ${w.relink(s.runId as string)}`,
      ];
    }
    case 'report':
    case 'done':
      return [
        `every target of run ${s.runId} finished, but ${at(reportKey(s.runId as string))} is not there after ${waitedS} s.`,
        `  Where to look: ${logs(w, ['collect'])}${w.collectQueueUrl ? ` (collect queue ${w.collectQueueUrl})` : ''}.`,
      ];
  }
}

/** Lines saying that the run cannot start before the timeout ends (a mirror run's lag), and what to do. */
export function laterText(s: RunState, timeoutS: number, relink: (runId: string) => string): string[] {
  const first = s.firstDueMs as number;
  const why =
    s.mode === 'mirror'
      ? ` (mirror mode: each request is due at its inferenceTime + ${s.lagMs !== null ? `${Math.round(s.lagMs / 1000)} s` : 'the lag'})`
      : '';
  const enough = Math.ceil((first - Date.now()) / 1000) + 120;
  return [
    `run ${s.runId} is scheduled, but its first request is due at ${new Date(first).toISOString()}${why}, ` +
      `after --timeout ${timeoutS} s: it cannot finish in time.`,
    `  Next time give it longer (--timeout ${enough}), or open its report once it is done: ${relink(s.runId as string)}`,
  ];
}
