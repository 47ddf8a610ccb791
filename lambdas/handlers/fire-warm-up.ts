/**
 * The fire function's warm-up during its lead: what the CLI does before schedule zero, done by
 * each invocation as its shards are prepared (after their requests are loaded, before they are
 * claimed: the fire stage's `prepare`), so that the first request of a cold invocation is as
 * punctual as the rest.
 *
 * What it does and when (a rehearsal, a full collection, connections opened ahead and kept
 * ready), each with its reason: InvocationWarmUp.
 *
 * A warm-up failure is nobody's failure: it is logged, and the shards fire as they would have.
 */
import { collectGarbage } from '../adapters/full-gc';
import { rehearseTwins, type RehearsalResult } from '../core/fire/rehearsal';
import type { ShardMessage } from '../core/pipeline/shards';
import type { ScheduledRequest } from '../core/types';
import type { Deps, Target } from '../runtime/deps';
import type { WarmOptions } from '../adapters/http/socket-reserve';

/**
 * Requests per target the rehearsal sends: fewer than the CLI's 2,000 (--rehearsal). One
 * invocation sends at most a vCPU's worth a second (lib/sizing.ts, PER_VCPU_REQUESTS_PER_SECOND),
 * so what it must not pay cold is the one-time work of its first requests (the HTTP parser's
 * compilation, the first connection, the first runs of each function), not a high rate's
 * per-request cost; and every cold environment pays the rehearsal's CPU during its lead.
 */
export const FIRE_REHEARSAL_REQUESTS = 500;
/** The rehearsal stops this long before the first due time, leaving it for the claims and the collection. */
export const REHEARSAL_STOP_BEFORE_MS = 2_000;
/** Nor does one start with less than this left before it would be stopped. */
const REHEARSAL_MIN_MS = 500;
/** The full collection runs this long before the first due time... */
export const COLLECT_BEFORE_MS = 1_000;
/** ...and not at all when the first due time is nearer than this: a late invocation does not pause itself. */
const COLLECT_MIN_LEAD_MS = 250;
/**
 * Connections opened ahead: the target's requests due this soon after its first. Each holds its
 * connection for its answer (seconds), so none of the first 1.5 s's frees one for the next; opened
 * while the lane fires instead, each TLS handshake takes the event loop from the requests due then.
 */
const OPEN_AHEAD_WINDOW_MS = 1_500;
const OPEN_AHEAD_MIN = 1;
const OPEN_AHEAD_MAX = 256;
/** While firing: how often the connections kept ready are topped up, and how far ahead they cover. */
const KEEP_EVERY_MS = 20;
const KEEP_AHEAD_MS = 250;
/**
 * ...and how many are opened at once meanwhile: handshakes that complete together are one turn
 * of the event loop that the requests due in it wait for. Two at a time open hundreds a second.
 */
export const KEEP_OPENING = 2;
const KEEPING: WarmOptions = { atOnce: KEEP_OPENING };

/**
 * What an execution environment has rehearsed (`<target kind>:<streaming>`), and its
 * invocations under way: Lambda runs one at a time in an environment, but a process that runs
 * several at once (a test harness, a local event source) must not pause one invocation's
 * slot with another's full collection.
 */
export interface WarmUpState {
  rehearsed: Set<string>;
  active: number;
}

export function createWarmUpState(): WarmUpState {
  return { rehearsed: new Set(), active: 0 };
}

/** How many of `sorted` (epoch ns, ascending) are due in [fromNs, fromNs + aheadMs). */
export function dueWithin(sorted: readonly bigint[], fromNs: bigint, aheadMs: number): number {
  const lower = (x: bigint) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((sorted[mid] as bigint) < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return lower(fromNs + BigInt(Math.round(aheadMs * 1e6))) - lower(fromNs);
}

/** Per target: its requests due within OPEN_AHEAD_WINDOW_MS of its first (epoch ns), clamped. */
export function connectionsAhead(dues: ReadonlyMap<string, readonly bigint[]>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [target, list] of dues) {
    if (list.length === 0) continue;
    const first = list.reduce((a, b) => (b < a ? b : a));
    const soon = list.filter((d) => d - first < BigInt(OPEN_AHEAD_WINDOW_MS * 1e6)).length;
    out.set(target, Math.min(OPEN_AHEAD_MAX, Math.max(OPEN_AHEAD_MIN, soon)));
  }
  return out;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * One invocation's warm-up: `beforeClaim` for each of its shards, `end` once the batch is handled.
 *
 * - A rehearsal (core/fire/rehearsal.ts): a shard's target runs its twin (same client code and
 *   options, deps.rehearsalTwin) against a sink in this process, with the shard's own bodies.
 *   Optimised code outlives the invocation, so an execution environment rehearses each target
 *   kind and streaming mode once; the rehearsal stops REHEARSAL_STOP_BEFORE_MS before the
 *   invocation's first due time, and a shard arriving later than that skips it.
 * - A full garbage collection COLLECT_BEFORE_MS before the invocation's first due time
 *   (adapters/full-gc.ts), once the claims are done: what the bundle's load, the rehearsal and
 *   the claims left behind is not collected by a major collection in the middle of the slot.
 * - Right after it, connections opened ahead to each target (Target.openAhead), as many as its
 *   requests due in the first OPEN_AHEAD_WINDOW_MS (OPEN_AHEAD_MIN..OPEN_AHEAD_MAX), the pool's
 *   idle keep-alive connections counted: cold, the first request otherwise waited for a
 *   connection of its own. A second before the first due time, well within servers' idle
 *   timeouts; the reserve closes what it opened and was not used within 4 s.
 *
 * - While the shards fire, connections are kept ready (`keep`): every KEEP_EVERY_MS, each
 *   target's idle keep-alive connections and spares are topped up to its requests due in the
 *   next KEEP_AHEAD_MS, KEEP_OPENING at a time. A lane's requests in flight grow for seconds
 *   (each response lasts seconds), and a request that finds every connection busy waited for a
 *   connect and a TLS handshake of its own: most of the fire function's requests more than 5 ms
 *   late (bench:fire-lateness attributes them).
 */
export class InvocationWarmUp {
  private firstDueNs: bigint | null = null;
  private timer: NodeJS.Timeout | null = null;
  private keeper: NodeJS.Timeout | null = null;
  private collected = false;
  private ended = false;
  /** Rehearsals one after the other: two at once would each slow the other. */
  private rehearsals: Promise<void> = Promise.resolve();
  private readonly dues = new Map<string, bigint[]>();

  constructor(
    private readonly deps: Deps,
    private readonly state: WarmUpState,
  ) {
    state.active++;
  }

  /** Warms up for a shard about to be claimed (its requests loaded); resolves once its rehearsal, if any, is done. */
  async beforeClaim(message: ShardMessage, requests: readonly ScheduledRequest[]): Promise<void> {
    if (this.ended) return;
    const startNs = BigInt(message.startNs);
    const dues = this.dues.get(message.target) ?? [];
    for (const r of requests) dues.push(startNs + BigInt(Math.round(r.offsetMs * 1e6)));
    dues.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    this.dues.set(message.target, dues);
    this.keep();
    const firstDueNs = BigInt(message.firstDueNs);
    if (this.firstDueNs === null || firstDueNs < this.firstDueNs) {
      this.firstDueNs = firstDueNs;
      this.scheduleCollection();
    }
    const rehearsal = this.rehearsals.then(() => this.rehearse(message.target, requests));
    this.rehearsals = rehearsal;
    await rehearsal;
  }

  /** Cancels a collection not yet run, and stops keeping connections ready (the batch is done). */
  end(): void {
    if (!this.ended) this.state.active--;
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.keeper) clearInterval(this.keeper);
    this.keeper = null;
  }

  /**
   * Starts keeping connections ready for the targets' requests due soon (once per invocation):
   * the targets are resolved once, then each tick tops up each target's connections to its
   * requests due in the next KEEP_AHEAD_MS (none opened when none is due).
   */
  private keep(): void {
    if (this.keeper || this.ended) return;
    const tick = (targets: Map<string, Pick<Target, 'openAhead'>>) => {
      const now = this.deps.clock.nowNs();
      for (const [name, dues] of this.dues) {
        const soon = dueWithin(dues, now, KEEP_AHEAD_MS);
        if (soon > 0) targets.get(name)?.openAhead?.(soon, KEEPING);
      }
    };
    this.keeper = setInterval(() => undefined, KEEP_EVERY_MS);
    this.keeper.unref();
    this.deps
      .targets()
      .then((targets) => {
        if (this.ended || !this.keeper) return;
        clearInterval(this.keeper);
        this.keeper = setInterval(() => tick(targets), KEEP_EVERY_MS);
        this.keeper.unref();
      })
      .catch((error: unknown) => this.deps.logger.warn('connections not kept ready', { error: errorText(error) }));
  }

  private scheduleCollection(): void {
    if (this.collected || this.firstDueNs === null) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const leadMs = Number(this.firstDueNs - this.deps.clock.nowNs()) / 1e6;
    if (leadMs < COLLECT_MIN_LEAD_MS) return;
    this.timer = setTimeout(() => this.beforeFirstDue(), Math.max(0, leadMs - COLLECT_BEFORE_MS));
  }

  /** The collection, then connections opened ahead; neither may fail a shard. */
  private beforeFirstDue(): void {
    this.timer = null;
    this.collected = true;
    // Another invocation of this process may be in its slot: a full collection would pause it.
    if (this.state.active === 1) collectGarbage();
    const ahead = connectionsAhead(this.dues);
    this.deps
      .targets()
      .then((targets) => {
        for (const [name, n] of ahead) targets.get(name)?.openAhead?.(n);
      })
      .catch((error: unknown) => this.deps.logger.warn('connections not opened ahead', { error: errorText(error) }));
  }

  /** Rehearses the target's kind and these requests' streaming modes if this environment has not; never throws. */
  private async rehearse(targetName: string, requests: readonly ScheduledRequest[]): Promise<void> {
    const target = this.deps.config.targets.find((t) => t.name === targetName);
    if (!target || this.ended || this.firstDueNs === null) return;
    const keys = [...new Set(requests.map((r) => `${target.kind}:${r.streaming}`))];
    if (keys.every((k) => this.state.rehearsed.has(k))) return;
    const stopInMs = Number(this.firstDueNs - this.deps.clock.nowNs()) / 1e6 - REHEARSAL_STOP_BEFORE_MS;
    if (stopInMs < REHEARSAL_MIN_MS) return;
    const stop = AbortSignal.timeout(Math.floor(stopInMs));
    let result: RehearsalResult;
    try {
      result = await rehearseTwins(
        [() => this.deps.rehearsalTwin(target)],
        [requests],
        FIRE_REHEARSAL_REQUESTS,
        this.deps.clock,
        stop,
      );
    } catch (error) {
      this.deps.logger.warn('rehearsal failed: the shards fire without it', {
        target: targetName,
        error: errorText(error),
      });
      return;
    }
    // Only a rehearsal that ran its course counts: one cut short is tried again by the next invocation.
    if (!stop.aborted) for (const key of keys) this.state.rehearsed.add(key);
    this.deps.logger.info('rehearsed', {
      target: targetName,
      requests: result.requests,
      succeeded: result.succeeded,
      ms: Math.round(result.ms),
      complete: !stop.aborted,
    });
  }
}
