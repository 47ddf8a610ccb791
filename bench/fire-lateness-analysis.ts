/**
 * bench/fire-lateness.ts's reading of a run: our records joined with the server's arrivals
 * (lateness at the server), and each invocation's CPU, throttling and collections while it fired.
 */
import type { Deployed, Invocation, Protocol } from './fire-lateness-invoke';
import { fixed as f, quantile, serverView, type SentRecord, type ServerCounts } from './lateness-common';

export interface ShardResults {
  records: (SentRecord & { shardId: string })[];
  drops: Record<string, number>;
  /** Output tokens the records counted. */
  outputTokens: number;
}

export interface FireRow {
  peak: number;
  protocol: Protocol;
  laneRate: number;
  memoryMb: number;
  /** vCPUs of quota per period; null: no quota. */
  cpuShare: number | null;
  scheduled: number;
  invocations: number;
  failedInvocations: number;
  lost: number;
  doubled: number;
  early: number;
  drops: string;
  /** Server-side lateness, ms. */
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  shiftMs: number;
  /** CPU ms per request and per streamed token while firing (first due time to the invocation's end). */
  cpuMsPerRequest: number;
  cpuMsPerToken: number;
  /** The CPU used while firing as a share of the firing time (vCPUs). */
  cpuWhileFiring: number;
  tokens: number;
  throttledPeriods: number;
  periods: number;
  throttledMs: number;
  majorGcsFiring: number;
  longestGcFiringMs: number;
  /** While firing: the longest scavenge (minor collection) and the longest mark-compact pause, ms. */
  longestScavengeMs: number;
  longestMarkCompactMs: number;
  connectionsMax: number;
  /**
   * Requests more than LATE_MS late at the server, and how many of them were due during a collection or within a
   * throttled stretch (or both).
   */
  /** Our own view: the invocation's wire lag (due -> bytes handed to the socket) p99 and p99.9, ms. */
  wireLagP99: number;
  wireLagP999: number;
  lateOver: number;
  lateInGc: number;
  lateInThrottle: number;
  /**
   * ... and how many were due within 50 ms before a connection to the target finished opening (a request waiting for
   * a connection of its own).
   */
  lateInConnect: number;
  load: string;
}

/** The lateness (ms) that counts as late in the attribution columns. */
const LATE_MS = 5;

/** perf_hooks' NODE_PERFORMANCE_GC_MINOR and NODE_PERFORMANCE_GC_MAJOR. */
const SCAVENGE = 1;
const MARK_COMPACT = 4;

/** The CPU ms an invocation used from `fromMs` to its last sample, and that span (ms). */
function cpuFrom(cpu: readonly [number, number][], fromMs: number): { ms: number; spanMs: number } {
  const after = cpu.filter(([at]) => at >= fromMs);
  const before = [...cpu].reverse().find(([at]) => at < fromMs) ?? after[0];
  const last = cpu.at(-1);
  if (!before || !last) return { ms: NaN, spanMs: NaN };
  return { ms: last[1] - before[1], spanMs: last[0] - before[0] };
}

export interface AnalysisInput {
  peak: number;
  protocol: Protocol;
  deployed: Deployed;
  scheduled: number;
  shardIds: string[];
  results: ShardResults;
  arrivals: Map<string, bigint[]>;
  invocations: Invocation[];
  load: string;
  server: ServerCounts;
  cpuShare: number | null;
}

export function analyse(a: AnalysisInput): FireRow {
  const view = serverView(a.results.records, a.arrivals);
  const firstDueMs = new Map<string, number>();
  for (const r of a.results.records)
    firstDueMs.set(r.shardId, Math.min(firstDueMs.get(r.shardId) ?? Infinity, Number(r.scheduledNs / 1_000_000n)));
  let cpuMs = 0;
  let spanMs = 0;
  let majors = 0;
  let longestGc = 0;
  let longestMc = 0;
  let longestScavenge = 0;
  const throttle = { throttled: 0, periods: 0, ms: 0 };
  for (const inv of a.invocations.filter((i) => i.ok)) {
    const due = Math.min(...inv.shardIds.map((s) => firstDueMs.get(s) ?? Infinity));
    if (!Number.isFinite(due)) continue;
    const used = cpuFrom(inv.cpu, due);
    cpuMs += used.ms;
    spanMs += used.spanMs;
    for (const [atMs, ms, kind] of inv.gcs) {
      if (atMs + ms < due) continue;
      if (kind === MARK_COMPACT) {
        majors++;
        longestMc = Math.max(longestMc, ms);
      }
      if (kind === SCAVENGE) longestScavenge = Math.max(longestScavenge, ms);
      longestGc = Math.max(longestGc, ms);
    }
    throttle.throttled += inv.throttle?.throttled ?? 0;
    throttle.periods += inv.throttle?.periods ?? 0;
    throttle.ms += inv.throttle?.throttledMs ?? 0;
  }
  const late = attributeLate(a, view.latenessById);
  const wireLags = a.results.records.map((r) => r.wireLagMs ?? r.lagMs).sort((x, y) => x - y);
  const known = new Set(a.results.records.map((r) => r.id));
  const arrived = [...a.arrivals.keys()].filter((id) => known.has(id)).length;
  const fired = a.results.records.length;
  return {
    peak: a.peak,
    protocol: a.protocol,
    laneRate: a.deployed.laneRate,
    memoryMb: a.deployed.memoryMb,
    cpuShare: a.cpuShare,
    scheduled: a.scheduled,
    invocations: a.invocations.length,
    failedInvocations: a.invocations.filter((i) => !i.ok).length,
    lost: a.scheduled - arrived,
    doubled: view.doubled,
    early: view.early,
    drops:
      Object.entries(a.results.drops)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || '0',
    p50: quantile(view.sorted, 0.5),
    p90: quantile(view.sorted, 0.9),
    p99: quantile(view.sorted, 0.99),
    p999: quantile(view.sorted, 0.999),
    max: view.sorted.at(-1) ?? NaN,
    shiftMs: view.shiftMs,
    cpuMsPerRequest: cpuMs / Math.max(1, fired),
    cpuMsPerToken: cpuMs / Math.max(1, a.results.outputTokens),
    cpuWhileFiring: cpuMs / Math.max(1, spanMs),
    tokens: a.server.tokens,
    throttledPeriods: throttle.throttled,
    periods: throttle.periods,
    throttledMs: throttle.ms,
    majorGcsFiring: majors,
    longestGcFiringMs: longestGc,
    longestScavengeMs: longestScavenge,
    longestMarkCompactMs: longestMc,
    connectionsMax: Math.max(0, ...a.invocations.map((i) => i.connectionsAtMs.length)),
    wireLagP99: quantile(wireLags, 0.99),
    wireLagP999: quantile(wireLags, 0.999),
    lateOver: late.over,
    lateInGc: late.inGc,
    lateInThrottle: late.inThrottle,
    lateInConnect: late.inConnect,
    load: a.load,
  };
}

/**
 * The requests more than LATE_MS late, and what their due time fell in: a garbage collection
 * of the invocation (from 1 ms before its start to its end), or a stretch the quota ran out in
 * (the 20 ms sample that saw it, and the 100 ms period before).
 */
function attributeLate(
  a: AnalysisInput,
  latenessById: Map<string, number>,
): { over: number; inGc: number; inThrottle: number; inConnect: number } {
  const gcs = a.invocations.flatMap((i) => i.gcs.map(([at, ms]) => [at - 1, at + ms] as const));
  const throttled = a.invocations.flatMap((i) => i.throttledAtMs.map((at) => [at - 120, at] as const));
  const connects = a.invocations.flatMap((i) => i.connectionsAtMs.map((at) => [at - 50, at] as const));
  const within = (spans: readonly (readonly [number, number])[], ms: number) =>
    spans.some(([from, to]) => ms >= from && ms <= to);
  let over = 0;
  let inGc = 0;
  let inThrottle = 0;
  let inConnect = 0;
  for (const r of a.results.records) {
    const lateMs = latenessById.get(r.id);
    if (lateMs === undefined || lateMs <= LATE_MS) continue;
    over++;
    const dueMs = Number(r.scheduledNs / 1_000_000n);
    if (within(gcs, dueMs)) inGc++;
    if (within(throttled, dueMs)) inThrottle++;
    if (within(connects, dueMs)) inConnect++;
  }
  return { over, inGc, inThrottle, inConnect };
}

export const FIRE_ROW_HEADER = [
  '| peak/s | protocol | lane/s | MB (vCPU) | requests | lost / doubled / early / dropped | p50 ms | p99 ms ' +
    '| p99.9 ms | max ms | CPU ms / request | CPU ms / token | vCPU while firing | throttled periods | ' +
    'mark-compacts firing | longest GC ms (scavenge / mark-compact) | connections | our wire lag p99 / p99.9 ' +
    'ms | over 5 ms (due in a GC / in throttling / before a connect) | load before |',
  '| ---: | --- | ---: | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ' +
    '---: | ---: | ---: | ---: | --- |',
].join('\n');

export function fireRowMarkdown(r: FireRow): string {
  const share = r.cpuShare === null ? 'no quota' : f(r.cpuShare);
  return (
    `| ${r.peak} | ${r.protocol} | ${f(r.laneRate, 1)} | ${r.memoryMb} (${share}) | ${r.scheduled} | ${r.lost} ` +
    `/ ${r.doubled} / ${r.early} / ${r.drops} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.p999)} | ${f(r.max)} | ` +
    `${f(r.cpuMsPerRequest, 3)} | ${f(r.cpuMsPerToken, 4)} | ${f(r.cpuWhileFiring, 3)} | ${r.throttledPeriods} ` +
    `of ${r.periods} (${f(r.throttledMs, 0)} ms) | ${r.majorGcsFiring} | ${f(r.longestGcFiringMs)} ` +
    `(${f(r.longestScavengeMs)} / ${f(r.longestMarkCompactMs)}) | ${r.connectionsMax} | ${f(r.wireLagP99)} / ` +
    `${f(r.wireLagP999)} | ${r.lateOver} (${r.lateInGc} / ${r.lateInThrottle} / ${r.lateInConnect}) | ${r.load} |`
  );
}
