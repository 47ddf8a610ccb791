/**
 * A schedule's history, its trend page, and the summary people are told.
 *
 * schedules/<name>/history.jsonl holds one line per scheduled run (historyLineSchema). A run
 * joins by a conditional append: read the object with its ETag, add the line, write it back
 * only if nobody wrote it since (S3 `If-Match`, or `If-None-Match: *` to create); a writer
 * that lost the race re-reads and tries again, with backoff, like the hour roll-up. A run
 * already in the history adds nothing, so a finalisation repeated (two targets finalising at
 * once, a redelivered collect message) appends one line, and only the writer whose append
 * succeeded publishes the summary: nobody is told twice.
 *
 * Lines that cannot be read are kept in the object as they are (never rewritten away), skipped
 * and counted: the trend page says how many.
 */
import { z } from 'zod';
import type { Clock, Notifier, ObjectStore } from '../../ports';
import {
  COMPARED_METRICS,
  type ComparedMetricTag,
  type ComparisonDocument,
  type TargetComparison,
  type Verdict,
} from '../compare/types';
import { CONFLICT, CONFLICT_ATTEMPTS, retryOnConflict, withRetries, type ConflictRetry } from '../pipeline/common';
import type { ChartAssets } from '../report/page';
import { renderTrendHtml } from '../report/trend';
import { scheduleHistoryKey, scheduleIndexKey, type ScheduledRunInfo } from './contract';

// ---------------------------------------------------------------------------------------------
// The line

const nullableNumber = z.number().nullable();
const intervalSchema = z.object({ estimate: nullableNumber, ci_low: nullableNumber, ci_high: nullableNumber });
const verdictSchema = z.enum(['better', 'worse', 'no_difference', 'inconclusive', 'changed']);
const statsSchema = z.object({ p50: nullableNumber, p90: nullableNumber, p99: nullableNumber, mean: nullableNumber });

const targetSchema = z.object({
  /** Requests scheduled (= succeeded + errors + dropped). */
  requests: z.number().int().nonnegative(),
  succeeded: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
  dropped: z.number().int().nonnegative(),
  /** Per AIPerf tag of the compared metrics, over the target's succeeded requests. */
  metrics: z.record(z.string(), statsSchema),
});

const comparisonSchema = z.object({
  baseline: z.string(),
  candidate: z.string(),
  mode: z.enum(['paired', 'unpaired']),
  /** As comparison.json's `pairs`. */
  pairs: z.object({ used: z.number().int().nonnegative(), excluded: z.record(z.string(), z.number()) }),
  metrics: z.array(
    z.object({
      tag: z.string(),
      unit: z.string(),
      verdict: verdictSchema,
      verdict_reason: z.string(),
      n: z.number().int().nonnegative(),
      /** B - A of the p50s, in the metric's unit (comparison.json's `difference.p50`). */
      difference_p50: intervalSchema,
      /** Paired only: the median per-request difference B - A (comparison.json's `paired_shift.difference`). */
      paired_shift: intervalSchema.nullable(),
      /** The relative effect the verdict is judged on, in % of A's p50: the paired shift's, else the p50 difference's. */
      relative_pct: intervalSchema,
      p_value_adjusted: nullableNumber,
    }),
  ),
  errors: z.object({
    verdict: verdictSchema,
    baseline_rate: nullableNumber,
    candidate_rate: nullableNumber,
    /** Candidate rate - baseline rate (fraction), as comparison.json's `errors.difference`. */
    difference: intervalSchema,
  }),
});

export const historyLineSchema = z.object({
  v: z.literal(1),
  run_id: z.string().min(1),
  schedule: z.string(),
  scheduled_time: z.string(),
  window: z.object({ start: z.string(), end: z.string() }),
  status: z.enum(['complete', 'deadline', 'empty']),
  reason: z.string().optional(),
  /** Key of the run's report.html in the results bucket; null for an empty run. */
  report: z.string().nullable(),
  targets: z.record(z.string(), targetSchema),
  comparisons: z.array(comparisonSchema),
});
export type HistoryLine = z.infer<typeof historyLineSchema>;
export type HistoryTarget = z.infer<typeof targetSchema>;

/** One target's part of a line: its accounting and its metrics' statistics. */
export interface TargetOutcome {
  name: string;
  scheduled: number;
  succeeded: number;
  failed: number;
  dropped: number;
  metrics: Partial<
    Record<ComparedMetricTag, { p50: number | null; p90: number | null; p99: number | null; mean: number | null }>
  >;
}

function comparisonLine(c: TargetComparison): HistoryLine['comparisons'][number] {
  return {
    baseline: c.baseline,
    candidate: c.candidate,
    mode: c.mode,
    pairs: { used: c.pairs.used, excluded: { ...c.pairs.excluded } },
    metrics: c.metrics.map((m) => ({
      tag: m.tag,
      unit: m.unit,
      verdict: m.verdict,
      verdict_reason: m.verdict_reason,
      n: m.n,
      difference_p50: m.difference.p50,
      paired_shift: m.paired_shift?.difference ?? null,
      relative_pct: m.paired_shift?.relative_pct ?? m.relative_pct.p50,
      p_value_adjusted: m.p_value_adjusted,
    })),
    errors: {
      verdict: c.errors.verdict,
      baseline_rate: c.errors.baseline.rate,
      candidate_rate: c.errors.candidate.rate,
      difference: c.errors.difference,
    },
  };
}

/** A run's history line from its outcome (comparison null: fewer than two targets had results). */
export function historyLineOf(args: {
  runId: string;
  info: ScheduledRunInfo;
  status: HistoryLine['status'];
  reason?: string;
  reportKey: string | null;
  targets: readonly TargetOutcome[];
  comparison: ComparisonDocument | null;
}): HistoryLine {
  const comparisons = args.comparison
    ? args.comparison.comparisons.length > 0
      ? args.comparison.comparisons
      : [args.comparison]
    : [];
  return {
    v: 1,
    run_id: args.runId,
    schedule: args.info.name,
    scheduled_time: args.info.scheduledTime,
    window: { start: args.info.window.start, end: args.info.window.end },
    status: args.status,
    ...(args.reason !== undefined ? { reason: args.reason } : {}),
    report: args.reportKey,
    targets: Object.fromEntries(
      args.targets.map((t) => [
        t.name,
        {
          requests: t.scheduled,
          succeeded: t.succeeded,
          errors: t.failed,
          dropped: t.dropped,
          metrics: Object.fromEntries(Object.entries(t.metrics)),
        },
      ]),
    ),
    comparisons: comparisons.map(comparisonLine),
  };
}

// ---------------------------------------------------------------------------------------------
// Reading and appending

export interface History {
  lines: HistoryLine[];
  /** Lines that were not JSON or not a history line: skipped, kept in the object. */
  badLines: number;
  /** The object's text as read ('' when absent) and its ETag (null when absent). */
  text: string;
  etag: string | null;
}

export function parseHistory(text: string): { lines: HistoryLine[]; badLines: number } {
  const lines: HistoryLine[] = [];
  let badLines = 0;
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      badLines++;
      continue;
    }
    const parsed = historyLineSchema.safeParse(json);
    if (parsed.success) lines.push(parsed.data);
    else badLines++;
  }
  return { lines, badLines };
}

export async function readHistory(store: ObjectStore, schedule: string): Promise<History> {
  const got = await store.getVersioned(scheduleHistoryKey(schedule));
  if (!got) return { lines: [], badLines: 0, text: '', etag: null };
  const text = Buffer.from(got.bytes.buffer, got.bytes.byteOffset, got.bytes.byteLength).toString('utf8');
  return { ...parseHistory(text), text, etag: got.etag };
}

/** Conditional-append retries (pipeline/common.ts ConflictRetry), as the hour roll-up's. */
export type AppendRetry = ConflictRetry;

/**
 * Appends `line` unless its run is already in the history. 'appended': this call wrote it;
 * 'present': it was there already (nothing written). Throws after `attempts` lost races, so
 * that the collect message is redelivered.
 */
export async function appendHistoryLine(
  store: ObjectStore,
  clock: Clock,
  line: HistoryLine,
  retry: AppendRetry = {},
): Promise<{ outcome: 'appended' | 'present'; history: History }> {
  const key = scheduleHistoryKey(line.schedule);
  return retryOnConflict(
    clock,
    retry,
    async () => {
      const current = await readHistory(store, line.schedule);
      if (current.lines.some((l) => l.run_id === line.run_id)) return { outcome: 'present' as const, history: current };
      // Appended to the text as read: lines this version cannot read stay as they were.
      const text =
        (current.text === '' || current.text.endsWith('\n') ? current.text : current.text + '\n') +
        JSON.stringify(line) +
        '\n';
      if (!(await store.putIfMatch(key, text, current.etag, 'application/x-ndjson'))) return CONFLICT;
      return {
        outcome: 'appended' as const,
        history: { lines: [...current.lines, line], badLines: current.badLines, text, etag: null },
      };
    },
    (attempts) =>
      new Error(`${key}: run ${line.run_id} not appended: the history changed under each of ${attempts} attempts`),
  );
}

// ---------------------------------------------------------------------------------------------
// The summary

const PLAIN_VERDICT: Record<Verdict, string> = {
  worse: 'WORSE',
  better: 'better',
  no_difference: 'no difference',
  inconclusive: 'inconclusive',
  changed: 'changed',
};

const pct = (x: number | null) =>
  x === null || !Number.isFinite(x) ? null : `${x > 0 ? '+' : ''}${Math.abs(x) >= 10 ? x.toFixed(0) : x.toFixed(1)}%`;
const fmt = (x: number | null) => {
  if (x === null || !Number.isFinite(x)) return '-';
  const a = Math.abs(x);
  const s = a >= 100 ? x.toFixed(0) : a >= 1 ? x.toFixed(2) : String(Number(x.toPrecision(3)));
  return x > 0 ? `+${s}` : s;
};
const utcMinute = (iso: string) => {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC` : iso;
};

/** "tag +18%", naming the candidate when the run compares more than one. */
function effects(line: HistoryLine, verdict: Verdict): string[] {
  const several = line.comparisons.length > 1;
  const out: string[] = [];
  for (const c of line.comparisons) {
    for (const m of c.metrics)
      if (m.verdict === verdict)
        out.push(
          `${several ? `${c.candidate} ` : ''}${m.tag}${pct(m.relative_pct.estimate) ? ` ${pct(m.relative_pct.estimate)}` : ''}`,
        );
    if (c.errors.verdict === verdict) out.push(`${several ? `${c.candidate} ` : ''}error rate`);
  }
  return out;
}

/**
 * The headline: WORSE first and in capitals, whatever else happened; then changes; then
 * "inconclusive" when no verdict could be reached (too few requests), else "no difference".
 */
export function headline(line: HistoryLine): string {
  if (line.status === 'empty') return 'empty window';
  const list = (items: string[]) =>
    items.length <= 2 ? items.join(', ') : `${items.slice(0, 2).join(', ')}, +${items.length - 2} more`;
  const worse = effects(line, 'worse');
  if (worse.length > 0) return `WORSE (${list(worse)})`;
  const better = effects(line, 'better');
  const changed = effects(line, 'changed');
  if (better.length > 0 || changed.length > 0)
    return [better.length > 0 ? `better (${list(better)})` : '', changed.length > 0 ? `changed (${list(changed)})` : '']
      .filter(Boolean)
      .join(', ');
  if (line.comparisons.length === 0) return 'no comparison (fewer than two targets with results)';
  const verdicts = line.comparisons.flatMap((c) => c.metrics.map((m) => m.verdict));
  if (verdicts.length === 0 || verdicts.every((v) => v === 'inconclusive'))
    return 'inconclusive (too few requests for a verdict)';
  const inconclusive = verdicts.filter((v) => v === 'inconclusive').length;
  return inconclusive > 0 ? `no difference (${inconclusive} metric(s) inconclusive)` : 'no difference';
}

/**
 * The notification: subject `capture-replay <schedule>: <headline> <scheduled time>` and a
 * plain-text message of counts, verdicts with B - A and their intervals, and where the report
 * and the trend page are. Built from the history line alone: it has no request or response
 * text to leak.
 */
export function summaryOf(line: HistoryLine, resultsBucket: string): { subject: string; message: string } {
  const subject = `capture-replay ${line.schedule}: ${headline(line)} ${utcMinute(line.scheduled_time)}`;
  const out: string[] = [];
  out.push(`Schedule: ${line.schedule}`);
  out.push(`Scheduled time: ${line.scheduled_time}`);
  out.push(`Run: ${line.run_id}`);
  out.push(`Window (captured inferenceTime): ${line.window.start} to ${line.window.end}`);
  out.push(
    `Status: ` +
      `${line.status}` +
      (line.status === 'deadline'
        ? ' (finalised at the deadline: requests that never reported are counted lost)'
        : '') +
      `${line.reason ? ` - ${line.reason}` : ''}`,
  );
  out.push(`Result: ${headline(line)}`);
  const targets = Object.entries(line.targets);
  if (targets.length > 0) {
    out.push('', 'Requests per target:');
    for (const [name, t] of targets)
      out.push(
        `  ${name}: ${t.requests} scheduled, ${t.succeeded} succeeded, ${t.errors} errors, ${t.dropped} dropped`,
      );
  }
  for (const c of line.comparisons) {
    out.push(
      '',
      `${c.candidate} (B) vs ${c.baseline} (A), ${c.mode}, ${c.pairs.used} ${c.mode === 'paired' ? 'pairs' : 'requests'} compared:`,
    );
    for (const m of c.metrics) {
      const effect = m.paired_shift ?? m.difference_p50;
      const rel = m.relative_pct;
      const what = m.paired_shift ? 'median B - A' : 'B - A p50';
      const ci =
        effect.ci_low !== null && effect.ci_high !== null ? ` [${fmt(effect.ci_low)}, ${fmt(effect.ci_high)}]` : '';
      const relText =
        rel.estimate !== null
          ? ` (${pct(rel.estimate)}${rel.ci_low !== null && rel.ci_high !== null ? ` [${pct(rel.ci_low)}, ${pct(rel.ci_high)}]` : ''})`
          : '';
      out.push(
        `  ${m.tag}: ${PLAIN_VERDICT[m.verdict]}; ${what} = ${fmt(effect.estimate)} ` +
          `${m.unit}${ci}${relText}${m.verdict === 'inconclusive' ? ` - ${m.verdict_reason}` : ''}`,
      );
    }
    const e = c.errors;
    const pp = (x: number | null) => (x === null ? '-' : fmt(x * 100));
    out.push(
      `  error rate: ${PLAIN_VERDICT[e.verdict]}; B - A = ${pp(e.difference.estimate)} ` +
        `pp` +
        (e.difference.ci_low !== null && e.difference.ci_high !== null
          ? ` [${pp(e.difference.ci_low)}, ${pp(e.difference.ci_high)}]`
          : ''),
    );
  }
  out.push('', 'Intervals: 95 % bootstrap; B - A is candidate minus baseline.');
  if (line.report) out.push(`Report: s3://${resultsBucket}/${line.report}`);
  out.push(`Trend: s3://${resultsBucket}/${scheduleIndexKey(line.schedule)}`);
  return { subject, message: out.join('\n') + '\n' };
}

// ---------------------------------------------------------------------------------------------
// Recording a run

export interface RecordRunDeps {
  store: ObjectStore;
  notifier: Notifier | null;
  clock: Clock;
  resultsBucket: string;
  /** The chart library for the trend page; without it the page has its tables and no charts. */
  chartAssets?: ChartAssets | null;
  retry?: AppendRetry;
}

/**
 * Rewrites the trend page from the history. Another run appended meanwhile (its ETag
 * changed): write again from the newer history, so the last page written has seen every
 * line (bounded rounds, like the roll-up's artifacts).
 */
async function writeTrendPage(deps: RecordRunDeps, schedule: string): Promise<void> {
  for (let round = 1; round <= CONFLICT_ATTEMPTS; round++) {
    const history = await readHistory(deps.store, schedule);
    const html = renderTrendHtml(
      {
        schedule,
        generatedAt: new Date(Number(deps.clock.nowNs() / 1_000_000n)).toISOString(),
        runs: history.lines,
        badLines: history.badLines,
      },
      deps.chartAssets ?? null,
    );
    await deps.store.put(scheduleIndexKey(schedule), html, 'text/html; charset=utf-8');
    const after = await deps.store.getVersioned(scheduleHistoryKey(schedule));
    if ((after?.etag ?? null) === history.etag) return;
  }
  throw new Error(`${scheduleIndexKey(schedule)}: the history kept changing while the page was written`);
}

/**
 * A finished scheduled run: its line appended (once), the trend page rewritten, and, by the
 * writer that appended it, the summary published. Returns what happened.
 */
export async function recordScheduledRun(
  deps: RecordRunDeps,
  line: HistoryLine,
): Promise<{ outcome: 'appended' | 'present'; published: boolean; subject: string }> {
  const { outcome } = await appendHistoryLine(deps.store, deps.clock, line, deps.retry);
  // Also when already present: a finaliser that died between the append and the page leaves the page to this one.
  await writeTrendPage(deps, line.schedule);
  const { subject, message } = summaryOf(line, deps.resultsBucket);
  if (outcome !== 'appended' || !deps.notifier) return { outcome, published: false, subject };
  // Nobody else will publish this run (the line is in): retried here, then the error surfaces.
  const notifier = deps.notifier;
  await withRetries(() => notifier.publish(subject, message), deps.clock, 3, 200);
  return { outcome, published: true, subject };
}

/**
 * A scheduled run with nothing to replay (no captures in the window, or none any target
 * takes): one history line with `reason`, the trend page rewritten, the summary published.
 * Idempotent on `runId`: a second call adds no line and publishes nothing. Not an error.
 */
export async function recordEmptyRun(args: {
  store: ObjectStore;
  notifier: Notifier | null;
  clock: Clock;
  runId: string;
  info: ScheduledRunInfo;
  reason: string;
  resultsBucket: string;
  chartAssets?: ChartAssets | null;
}): Promise<void> {
  const line = historyLineOf({
    runId: args.runId,
    info: args.info,
    status: 'empty',
    reason: args.reason,
    reportKey: null,
    targets: [],
    comparison: null,
  });
  await recordScheduledRun(
    {
      store: args.store,
      notifier: args.notifier,
      clock: args.clock,
      resultsBucket: args.resultsBucket,
      chartAssets: args.chartAssets ?? null,
    },
    line,
  );
}

/** The compared metrics' tags, for callers summarising a target. */
export const HISTORY_METRICS: readonly ComparedMetricTag[] = COMPARED_METRICS.map((m) => m.tag);
