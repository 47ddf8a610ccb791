/**
 * A simulated run as the command reports it: one JSON document (no NaN or Infinity: null where
 * there is no value) and the same as a table. Cost at list prices (sim/aws/prices.ts), per
 * million requests sent to the targets, and the fixed monthly cost of idle event sources.
 */
import { percentile } from '../lambdas/core/metrics/stats';
import { PRICES, SECONDS_PER_MONTH } from './aws/prices';
import type { SimRun } from './engine';

const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;
const finite = (n: number, d = 3): number | null => (Number.isFinite(n) ? round(n, d) : null);

/** numpy's linear percentile of a sorted typed array (stats.ts's, which only indexes it). */
const pct = (sorted: Float64Array, q: number): number | null =>
  sorted.length === 0 ? null : round(percentile(sorted as unknown as number[], q));

function calls(run: SimRun) {
  const { ingest, fire, collect } = run.consumers;
  const sqs = ingest.queue.bill.requests + fire.queue.bill.requests + collect.queue.bill.requests;
  const s3Put =
    run.ingest.counters.s3Put + run.fire.counters.s3Put + run.collect.counters.s3Put + run.collect.counters.s3List;
  const s3Get = run.ingest.counters.s3Get + run.fire.counters.s3Get + run.collect.counters.s3Get;
  const fns = { ingest: ingest.fn.bill, fire: fire.fn.bill, collect: collect.fn.bill };
  const invocations = Object.fromEntries(Object.entries(fns).map(([k, b]) => [k, b.invocations])) as Record<
    keyof typeof fns,
    number
  >;
  const gbSeconds = Object.fromEntries(Object.entries(fns).map(([k, b]) => [k, round(b.gbSeconds, 1)])) as Record<
    keyof typeof fns,
    number
  >;
  const initGbSeconds = Object.values(fns).reduce((n, b) => n + b.initGbSeconds, 0);
  return {
    sqs_requests: sqs,
    sqs_by_queue: {
      ingest: ingest.queue.bill.requests,
      replay: fire.queue.bill.requests,
      collect: collect.queue.bill.requests,
    },
    sqs_shard_messages_sent: fire.queue.bill.messagesSent,
    s3_put: s3Put,
    s3_get: s3Get,
    lambda_invocations: { ...invocations, total: invocations.ingest + invocations.fire + invocations.collect },
    lambda_gb_s: { ...gbSeconds, total: round(gbSeconds.ingest + gbSeconds.fire + gbSeconds.collect, 1) },
    init_gb_s: round(initGbSeconds, 1),
    cold_starts: { ingest: fns.ingest.coldStarts, fire: fns.fire.coldStarts, collect: fns.collect.coldStarts },
  };
}

function dollars(run: SimRun, c: ReturnType<typeof calls>) {
  const scaler = run.consumers.fire.scaler;
  const cost = {
    lambda_duration: c.lambda_gb_s.total * PRICES.lambdaArmPerGbSecond,
    lambda_init: c.init_gb_s * PRICES.lambdaArmPerGbSecond,
    lambda_requests: c.lambda_invocations.total * PRICES.lambdaPerRequest,
    sqs: c.sqs_requests * PRICES.sqsPerRequest,
    s3_put: c.s3_put * PRICES.s3PutClass,
    s3_get: c.s3_get * PRICES.s3GetClass,
    event_pollers: (scaler.pollerSeconds / 3600) * PRICES.sqsEventPollerUnitHour,
  };
  const total = Object.values(cost).reduce((a, b) => a + b, 0);
  const rounded = Object.fromEntries(Object.entries(cost).map(([k, v]) => [k, round(v, 4)])) as typeof cost;
  return { ...rounded, total: round(total, 4) };
}

function idleMonthly(run: SimRun) {
  const { ingest, fire, collect } = run.consumers;
  const polls = [ingest, fire, collect].reduce((n, c) => n + c.scaler.idlePollsPerMonth(), 0);
  const s = run.settings.stack;
  const pollers =
    s.eventSourceMode === 'provisioned' ? s.minPollers * (SECONDS_PER_MONTH / 3600) * PRICES.sqsEventPollerUnitHour : 0;
  return {
    idle_polls: Math.round(polls),
    polls_usd: round(polls * PRICES.sqsPerRequest, 2),
    min_pollers_usd: round(pollers, 2),
    total: round(polls * PRICES.sqsPerRequest + pollers, 2),
  };
}

/**
 * Why a figure has no value, for each figure that has none (the report says null, and why): a
 * run that sent no request has no lateness and no cost per million, one that invoked no fire
 * function no mean duration.
 */
function noFigure(run: SimRun, lost: number): Record<string, string> {
  const f = run.fire.counters;
  const planned = run.workload.requests * run.settings.workload.targets;
  const why: Record<string, string> = {};
  if (f.fired === 0) {
    const w = run.settings.workload;
    const none =
      planned === 0
        ? `the capture holds no request (${w.ratePerTarget}/s for ${w.seconds} s rounds down to 0)`
        : `none of the ${planned} requests was sent: ` +
          ([
            f.expired > 0 ? `${f.expired} expired` : '',
            f.lateDropped > 0 ? `${f.lateDropped} dropped late` : '',
            lost > 0
              ? `${lost} lost (never fired: throttled to the dead-letter queue, or stopped by the fire function's timeout)`
              : '',
          ]
            .filter(Boolean)
            .join(', ') || 'see expired, lost and timeouts');
    why.lateness_ms = none;
    why.cost_per_million_usd = none;
  }
  if (run.consumers.fire.fn.bill.invocations === 0) why.fire_invocation_mean_s = 'no fire invocation ran';
  return why;
}

/**
 * Every number of the report is finite (null where there is none): a NaN or an infinity is a bug in the simulator,
 * said as one, never a figure.
 */
function assertFinite(node: unknown, path: string): void {
  if (typeof node === 'number' && !Number.isFinite(node))
    throw new Error(
      `the report's ${path} came out ${node}: a bug in the simulator (please report it with the command)`,
    );
  if (node !== null && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) assertFinite(v, path ? `${path}.${k}` : k);
}

export function report(run: SimRun, problems: readonly string[], wallMs: number) {
  const r = build(run, problems, wallMs);
  assertFinite(r, '');
  return r;
}

function build(run: SimRun, problems: readonly string[], wallMs: number) {
  const s = run.settings;
  const f = run.fire.counters;
  const stats = run.consumers.fire.stats;
  const lost = run.collect.lost.reduce<number>((n, l) => n + (l ?? run.workload.requests), 0) + f.lostAfterClaim;
  const c = calls(run);
  const cost = dollars(run, c);
  const sorted = run.lateness;
  let overTolerance = 0;
  for (let i = sorted.length - 1; i >= 0 && (sorted[i] as number) > s.stack.lateToleranceMs; i--) overTolerance++;
  const fn = s.stack.fire;
  const fireBill = run.consumers.fire.fn.bill;
  return {
    workload: {
      rate_per_target: s.workload.ratePerTarget,
      targets: s.workload.targets,
      seconds: s.workload.seconds,
      arrivals: s.workload.arrivals,
      requests: run.workload.requests * s.workload.targets,
      latency_p50_s: s.workload.latencyP50S,
      latency_p99_s: s.workload.latencyP99S,
      idle_before_min: s.idleBeforeMinutes,
    },
    stack: {
      lead_s: s.stack.leadS,
      slot_s: s.stack.slotS,
      grace_s: s.stack.graceS,
      max_shard_requests: s.stack.maxShardRequests,
      shards: run.workload.shards.length,
      shards_by_reference: run.workload.shards.filter((x) => x.parts > 0).length,
      ramp: s.stack.ramp,
      batch_size: fn.batchSize,
      memory_mb: fn.memoryMb,
      timeout_s: fn.timeoutS,
      visibility_timeout_s: fn.visibilityTimeoutS,
      max_concurrency: fn.maxConcurrency,
      reserved_concurrency: fn.reservedConcurrency,
      event_source_mode: s.stack.eventSourceMode,
      ...(s.stack.eventSourceMode === 'provisioned'
        ? { pollers: { min: s.stack.minPollers, max: s.stack.maxPollers, peak: run.consumers.fire.scaler.peakPollers } }
        : {}),
      account_concurrency: s.aws.accountConcurrency,
      deployable: problems.length === 0,
      problems,
    },
    lateness_ms: {
      p50: pct(sorted, 50),
      p90: pct(sorted, 90),
      p99: pct(sorted, 99),
      p999: pct(sorted, 99.9),
      max: sorted.length ? round(sorted[sorted.length - 1] as number) : null,
      over_tolerance: overTolerance,
    },
    /** The fire handler's own lateness the run drew from (sim/measured.ts), and where it was measured. */
    handler_lateness_ms: {
      ...(Object.fromEntries(
        Object.entries(s.handler.ownLateness).map(([k, v]) => [k, round(v)]),
      ) as unknown as typeof s.handler.ownLateness),
      source: s.handler.ownLatenessSource,
      measured_memory_matches: s.handler.ownLatenessMemoryMb === fn.memoryMb,
    },
    fired: f.fired,
    expired: f.expired,
    late_dropped: f.lateDropped,
    lost,
    throttled:
      run.consumers.ingest.stats.throttledInvocations +
      stats.throttledInvocations +
      run.consumers.collect.stats.throttledInvocations,
    throttled_shard_messages: stats.throttledMessages,
    dead_lettered_shard_messages: run.consumers.fire.queue.bill.deadLettered,
    timeouts: stats.timeouts,
    peak_concurrency: run.consumers.fire.fn.bill.peakConcurrency,
    fire_invocation_mean_s: fireBill.invocations > 0 ? round(fireBill.billedMs / fireBill.invocations / 1000, 2) : null,
    peak_event_source_batches: stats.peakBatchesInFlight,
    hops: f.hops,
    duplicates: f.duplicates,
    ingest: {
      late_shards: run.ingest.counters.lateShards,
      max_late_ms: round(run.ingest.counters.maxLateMs, 1),
      shard_messages: run.ingest.counters.shardMessages,
      ramped_messages: run.ingest.counters.rampedMessages,
      max_lead_s: round(run.ingest.counters.maxLeadMs / 1000, 1),
      start_moved_s: round(run.ingest.counters.startMovedMs / 1000, 1),
    },
    calls: c,
    cost_usd: cost,
    cost_per_million_usd: f.fired > 0 ? round((cost.total * 1e6) / f.fired, 3) : null,
    idle_monthly_usd: idleMonthly(run),
    /** Why a figure above is null. */
    no_figure: noFigure(run, lost),
    simulation: {
      seed: s.seed,
      events: run.events,
      run_start_s: finite(run.runStartMs / 1000),
      deadline_s: finite(run.deadlineMs / 1000),
      end_s: finite(run.endMs / 1000),
      wall_ms: Math.round(wallMs),
    },
  };
}

export type SimReport = ReturnType<typeof build>;

/** The report as aligned `name  value` lines, for people. */
export function table(r: SimReport): string {
  const rows: [string, string | number | null][] = [
    [
      'traffic',
      `${r.workload.rate_per_target}/s x ${r.workload.targets} targets x ${r.workload.seconds} s = ` +
        `${r.workload.requests} requests; response p50 ${r.workload.latency_p50_s} s, p99 ` +
        `${r.workload.latency_p99_s} s; idle ${r.workload.idle_before_min} min before`,
    ],
    [
      'stack',
      `lead ${r.stack.lead_s} s, slot ${r.stack.slot_s} s, ${r.stack.shards} shards of <= ` +
        `${r.stack.max_shard_requests} (${r.stack.shards_by_reference} by reference), batch ` +
        `${r.stack.batch_size}, ${r.stack.memory_mb} MB, max concurrency ${r.stack.max_concurrency ?? '-'}, ` +
        `reserved ${r.stack.reserved_concurrency ?? '-'}, ` +
        `${r.stack.event_source_mode}${r.stack.ramp ? ', ramp' : ''}`,
    ],
    ...r.stack.problems.map((p): [string, string] => ['NOT DEPLOYABLE', p]),
    [
      'lateness p50 / p99 / p99.9 / max ms',
      `${r.lateness_ms.p50} / ${r.lateness_ms.p99} / ${r.lateness_ms.p999} / ${r.lateness_ms.max}`,
    ],
    [
      'fire handler lateness p99 / max ms',
      `${r.handler_lateness_ms.p99Ms} / ` +
        `${r.handler_lateness_ms.maxMs}` +
        `${r.handler_lateness_ms.measured_memory_matches ? '' : ' (MEASURED AT ANOTHER MEMORY SIZE)'}, ` +
        `${r.handler_lateness_ms.source}`,
    ],
    [`late over tolerance`, r.lateness_ms.over_tolerance],
    ['fired', r.fired],
    ['expired', r.expired],
    ['lost', r.lost],
    ['throttled', r.throttled],
    ['peak concurrency (fire)', r.peak_concurrency],
    ['fire invocation, mean s', r.fire_invocation_mean_s],
    ['cold starts (fire)', r.calls.cold_starts.fire],
    ['ingest late shards', r.ingest.late_shards],
    ['ramped messages, longest lead s', `${r.ingest.ramped_messages}, ${r.ingest.max_lead_s}`],
    ['start moved by the ramp, s', r.ingest.start_moved_s],
    ['SQS requests', r.calls.sqs_requests],
    ['S3 PUT / GET', `${r.calls.s3_put} / ${r.calls.s3_get}`],
    ['Lambda invocations', r.calls.lambda_invocations.total],
    ['Lambda GB-s (+ INIT)', `${r.calls.lambda_gb_s.total} (+ ${r.calls.init_gb_s})`],
    ['cost of the run $', r.cost_usd.total],
    ['cost per million $', r.cost_per_million_usd],
    ['idle event sources $/month', r.idle_monthly_usd.total],
  ];
  for (const [figure, why] of Object.entries(r.no_figure)) rows.push([`why no ${figure.replace(/_/g, ' ')}`, why]);
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v ?? '-'}`).join('\n');
}
