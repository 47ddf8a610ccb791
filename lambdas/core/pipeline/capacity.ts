/**
 * Whether a run's fire invocations can all start on time with the concurrency the stack gave
 * the fire function, and when they cannot, how late the run will be at least and which
 * setting to raise. Pure: dispatch assesses every run it lays out (dispatch.ts), the ingest
 * report carries the result, and the handlers log it and emit it as a metric
 * (docs/deploy.md#traffic-above-the-peak).
 *
 * Each lane of a slot is one shard for one target: one fire invocation, picked up `lead`
 * before its first request is due and alive at least until its last request is sent. The fire
 * event source runs at most its MaximumConcurrency of them (the fire function's reserved
 * concurrency is the same figure); a lane beyond it waits in the queue until an earlier
 * invocation ends, and its requests due meanwhile go out late.
 */
import { MinHeap } from '../min-heap';

/** The concurrency the stack gave the fire function, as the ingest and plan functions are told (runtime/config.ts). */
export interface FireCapacity {
  /** The fire event source's MaximumConcurrency (= its reserved concurrency when reserved). */
  concurrency: number;
  /** Where it comes from: derived from peakRequestsPerSecond (lib/sizing.ts), or set as maxFireConcurrency. */
  setting: CapacitySetting;
  /** The run's amplification: peakRequestsPerSecond is declared before it. */
  amplify: number;
}

export type CapacitySetting = 'peakRequestsPerSecond' | 'maxFireConcurrency';

/** One fire invocation the run needs (a shard for one target); times in ms from the run's start. */
export interface LaneNeed {
  firstDueMs: number;
  lastDueMs: number;
  /** How many of its requests are due before `ms`. */
  dueBefore(ms: number): number;
}

/** The ingest report's `capacity`. */
export interface CapacityReport {
  /** The most fire invocations the run needs alive at once (a lower bound). */
  lanesAtOnce: number;
  /** What the stack allows (the fire event source's MaximumConcurrency). */
  concurrency: number;
  /** Every lane can start by its first due time. */
  onTime: boolean;
  /** How late the latest request goes out at least, seconds (0 when on time): a lower bound. */
  expectedLatenessSeconds: number;
  /** Lanes that start after their first due time, and their requests due before they start. */
  lateLanes: number;
  lateRequests: number;
  /** The run's busiest whole second of due time, requests (all targets' lanes take from it). */
  busiestSecondRequests: number;
  /** What to change so that the run fits; null when it does. */
  raise: { setting: CapacitySetting; value: number } | null;
  reason: string;
}

/** The most intervals [firstDue - lead, lastDue] open at once (an end before a start at the same time). */
export function lanesAtOnce(lanes: readonly LaneNeed[], leadMs: number): number {
  const events: [number, number][] = [];
  for (const lane of lanes)
    events.push([lane.firstDueMs - leadMs, 1], [Math.max(lane.firstDueMs - leadMs, lane.lastDueMs), -1]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, delta] of events) most = Math.max(most, (open += delta));
  return most;
}

/** Requests in the busiest whole second of due time (items in due order). */
export function busiestSecond(items: readonly { offsetMs: number }[]): number {
  let most = 0;
  let second = NaN;
  let count = 0;
  for (const item of items) {
    const s = Math.floor(item.offsetMs / 1000);
    count = s === second ? count + 1 : 1;
    second = s;
    most = Math.max(most, count);
  }
  return most;
}

interface Lateness {
  maxLateMs: number;
  lateLanes: number;
  lateRequests: number;
}

/**
 * At most `concurrency` lanes alive at once, each picked up `lead` before its first due time
 * or, when none is free, the moment the earliest alive one ends (its last due time, or its own
 * late start when everything was already due).
 *
 * Both figures are lower bounds. An invocation is counted alive only from its lead to its last
 * due time: it also waits for its responses (its slowest one, lib/response-tail.ts), which
 * keeps it longer. A waiting lane starts the moment an earlier invocation ends, in due order,
 * with no time for the event source to notice. The event source's ramp (sqs-delay.ts
 * rampLeads) is not counted either: what is counted is what no ramp can make up for.
 */
function lateness(lanes: readonly LaneNeed[], leadMs: number, concurrency: number): Lateness {
  const order = lanes
    .map((_, i) => i)
    .sort((a, b) => (lanes[a] as LaneNeed).firstDueMs - (lanes[b] as LaneNeed).firstDueMs || a - b);
  const ends = new MinHeap<null>(); // the invocations' end times
  const out: Lateness = { maxLateMs: 0, lateLanes: 0, lateRequests: 0 };
  for (const i of order) {
    const lane = lanes[i] as LaneNeed;
    const wanted = lane.firstDueMs - leadMs;
    const start = ends.size < concurrency ? wanted : Math.max(wanted, ends.popKey()!);
    ends.push(Math.max(start, lane.lastDueMs), null);
    if (start > lane.firstDueMs) {
      out.lateLanes++;
      out.lateRequests += lane.dueBefore(start);
      out.maxLateMs = Math.max(out.maxLateMs, start - lane.firstDueMs);
    }
  }
  return out;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** The setting to raise and its value: the run's own peak for peakRequestsPerSecond, the lanes it needs for maxFireConcurrency. */
function raiseOf(capacity: FireCapacity, needed: number, busiest: number): { setting: CapacitySetting; value: number } {
  if (capacity.setting === 'maxFireConcurrency') return { setting: 'maxFireConcurrency', value: needed };
  return { setting: 'peakRequestsPerSecond', value: Math.ceil(busiest / capacity.amplify) };
}

/** The run's lanes against the fire function's concurrency. */
export function assessCapacity(
  lanes: readonly LaneNeed[],
  o: { leadMs: number; busiestSecond: number; capacity: FireCapacity },
): CapacityReport {
  const { concurrency } = o.capacity;
  const needed = lanesAtOnce(lanes, o.leadMs);
  const base = { lanesAtOnce: needed, concurrency, busiestSecondRequests: o.busiestSecond };
  if (needed <= concurrency) {
    return {
      ...base,
      onTime: true,
      expectedLatenessSeconds: 0,
      lateLanes: 0,
      lateRequests: 0,
      raise: null,
      reason: `${plural(needed, 'fire invocation')} at once at most, within the ${concurrency} the fire function may run`,
    };
  }
  const late = lateness(lanes, o.leadMs, concurrency);
  const raise = raiseOf(o.capacity, needed, o.busiestSecond);
  const seconds = Math.round(late.maxLateMs) / 1000;
  const why =
    `${plural(needed, 'fire invocation')} must run at once ` +
    `and the fire function runs at most ${concurrency} (its event source's MaximumConcurrency)`;
  const fix =
    raise.setting === 'peakRequestsPerSecond'
      ? `raise peakRequestsPerSecond to ${raise.value} ` +
        "(this run's busiest second per target, before amplify) and deploy"
      : `raise maxFireConcurrency to ${raise.value} and deploy`;
  const bound =
    'a lower bound: an invocation is counted alive only until its last request is sent, not until its responses end, ' +
    'and a waiting lane starts the moment one ends';
  if (late.lateLanes === 0) {
    return {
      ...base,
      onTime: true,
      expectedLatenessSeconds: 0,
      lateLanes: 0,
      lateRequests: 0,
      raise,
      reason: `${why}: the lanes that wait still start by their first due time, within their lead (no time left for a cold start); ${fix}`,
    };
  }
  const what =
    `${plural(late.lateLanes, 'lane')} wait${late.lateLanes === 1 ? 's' : ''} for an earlier invocation to end, ` +
    `and ${plural(late.lateRequests, 'request')} go out late, the latest by at least ${seconds} s`;
  return {
    ...base,
    onTime: false,
    expectedLatenessSeconds: seconds,
    lateLanes: late.lateLanes,
    lateRequests: late.lateRequests,
    raise,
    reason: `${why}: ${what} (${bound}); ${fix}`,
  };
}
