/**
 * Connections opened during the lead, before schedule zero, for the CLI's targets: the fire
 * function's socket reserve (adapters/http/socket-reserve.ts; a SageMaker target's SDK agents
 * take from one too, agent-reserve.ts), through `openAhead` on the target client, sized per
 * thread from its share of the first second and timed from the preflight's connect time.
 *
 * Why: an HTTP target's pool (and the SDK's agents) opens a connection when every one it has is
 * busy. Until the first answers come back none is free again, so at the start every request opened its own: at
 * 1,000 requests/s with answers of 45 ms, some 70 connections in the first 0.1 s, each connect
 * (and TLS handshake) paid by the request waiting for it and by the event loop the next
 * requests wait on. Opened ahead, the first requests go out on connections already there.
 *
 * How many to open and when: connectionsAhead and openBeforeMs, each with its reasons.
 */
import type { Clock, TargetClient } from '../ports';
import type { MeasuredConnect } from './preflight';
import { MAX_OPENING, type WarmOptions } from '../adapters/http/socket-reserve';

/** The answer time assumed for sizing: every request of the first second may be in flight at its end. */
export const RESPONSE_ESTIMATE_MS = 1000;
/** A connect without TLS (the preflight's) quicker than this is not worth a spare for every request of the first second... */
export const CHEAP_CONNECT_MS = 3;
/** ...only for those due in its first CHEAP_CONNECT_WINDOW_MS. */
export const CHEAP_CONNECT_WINDOW_MS = 100;
/** At most this many per thread and target: the HTTP target's pool size (openai-target.ts). */
export const OPEN_AHEAD_MAX = 1024;
export const OPEN_BEFORE_MIN_MS = 1000;
export const OPEN_BEFORE_MAX_MS = 2000;
/** A connect time assumed when none was measured (--no-preflight): a TLS handshake across a region. */
export const UNMEASURED_CONNECT_MS = 50;
/** Every connection opened ahead is to be ready this long before schedule zero: none is started that would not be. */
export const READY_BEFORE_MS = 200;
/** The collection runs this long before schedule zero, once the connections are made. */
export const COLLECT_BEFORE_MS = 150;

export interface OpenAheadPlan {
  connections: number;
  /** Opened this long before schedule zero. */
  openBeforeMs: number;
}

/** A client that can open connections ahead (both kinds the CLI makes, target-clients.ts). */
interface OpensAhead {
  openAhead(connections: number, options?: WarmOptions): void;
}

/** A connect without a TLS handshake, measured under CHEAP_CONNECT_MS (loopback, a LAN): the lead opens few spares for it. */
export function isCheapConnect(connect: MeasuredConnect | null): boolean {
  return connect !== null && !connect.tls && connect.ms < CHEAP_CONNECT_MS;
}

/**
 * Connections to open ahead for these due offsets (one thread's share of a target's plan, ms), given the preflight's
 * connect (null: not measured).
 *
 * How many: the thread's requests due within RESPONSE_ESTIMATE_MS of its first. How long
 * the target takes to answer is not known before its first answer, and an LLM's take seconds: then every request
 * of the first second is still in flight at its end, each on a connection of its own. Capped by the pool's
 * connections (OPEN_AHEAD_MAX) and the thread's share of --max-in-flight. A target that answers faster leaves most
 * unused: the reserve closes a spare unused for 4 s, a few at a time; later seconds use the pool's keep-alive
 * connections, or open their own as before. Unused spares are not free (the server's accepts and closes, a
 * thousand sockets for the collector), and a spare saves its request one connect: when the preflight's connect has
 * no TLS handshake and takes under CHEAP_CONNECT_MS (loopback, a LAN), a request opening its own loses little (a
 * TCP connect is tens of microseconds of CPU; a TLS handshake is a millisecond or more on each side, and a hundred
 * in the first tenth of a second are what made it late), and only the requests of the first
 * CHEAP_CONNECT_WINDOW_MS get one: on loopback a thousand spares made the p99 worse, not better, while over TLS
 * they made the first second far less late (bench/RESULTS.md, "Connections opened ahead").
 */
export function connectionsAhead(
  offsetsMs: readonly number[],
  connect: MeasuredConnect | null,
  maxInFlight?: number,
): number {
  if (offsetsMs.length === 0) return 0;
  const windowMs = isCheapConnect(connect) ? CHEAP_CONNECT_WINDOW_MS : RESPONSE_ESTIMATE_MS;
  let first = Infinity;
  for (const offset of offsetsMs) first = Math.min(first, offset);
  let soon = 0;
  for (const offset of offsetsMs) if (offset - first < windowMs) soon++;
  return Math.min(
    soon,
    OPEN_AHEAD_MAX,
    maxInFlight !== undefined && Number.isFinite(maxInFlight) ? Math.max(0, Math.floor(maxInFlight)) : Infinity,
  );
}

/**
 * How long before schedule zero to start opening them: two connect times, and one per wave of MAX_OPENING.
 *
 * When: after the rehearsal, a second before schedule zero (OPEN_BEFORE_MIN_MS: time enough for
 * a loaded machine), earlier when the preflight's connect time says opening them (MAX_OPENING at once) takes
 * longer, never more than OPEN_BEFORE_MAX_MS before (the spares must last into the schedule: the reserve closes
 * them 4 s after they were opened, under servers' ~5 s idle timeout). With a shorter lead (the default is 500 ms),
 * at once. Only as many are opened as can be ready READY_BEFORE_MS before zero (the reserve's measure of its
 * connects so far): a few hundred TLS handshakes can take a server seconds, and one still under way when the
 * schedule starts is paid for by both sides during it, ahead of any connection a request opens. Then the
 * collection (beforeScheduleZero).
 */
export function openBeforeMs(connections: number, connectMs: number | null): number {
  const connect =
    connectMs !== null && Number.isFinite(connectMs) && connectMs >= 0 ? connectMs : UNMEASURED_CONNECT_MS;
  const needed = 2 * connect + Math.ceil(connections / MAX_OPENING) * connect;
  return Math.min(OPEN_BEFORE_MAX_MS, Math.max(OPEN_BEFORE_MIN_MS, Math.ceil(needed)));
}

/** What one thread opens ahead for one target; null: nothing. */
export function openAheadPlan(
  offsetsMs: readonly number[],
  connect: MeasuredConnect | null,
  maxInFlight?: number,
): OpenAheadPlan | null {
  const connections = connectionsAhead(offsetsMs, connect, maxInFlight);
  return connections > 0 ? { connections, openBeforeMs: openBeforeMs(connections, connect?.ms ?? null) } : null;
}

/**
 * A firing thread's lead, once its requests are prepared (the fire loop's `beforeStart`): the
 * plan's connections opened on the client `openBeforeMs` before `startNs` (at once when that has
 * passed), as many as can be ready READY_BEFORE_MS before it, then the collection (`collect`:
 * the CLI's collectBeforeZero, rehearsal.ts) COLLECT_BEFORE_MS before it. Collected after they
 * are made, the connections' objects (a thousand sockets and their buffers) are in the old
 * generation when the schedule starts: collected before, the first scavenges of the schedule
 * copied them all. With nothing to open, a client that cannot, or a lead too short for both,
 * the collection runs at once (and nothing is opened when no time is left for it). The
 * function returned cancels what has not run yet.
 */
export function beforeScheduleZero(
  client: TargetClient,
  plan: OpenAheadPlan | null,
  startNs: bigint,
  clock: Clock,
  collect: () => void,
): () => void {
  const open = (client as Partial<OpensAhead>).openAhead;
  const untilZero = () => Number(startNs - clock.nowNs()) / 1e6;
  if (!plan || typeof open !== 'function' || untilZero() <= READY_BEFORE_MS) {
    collect();
    return () => undefined;
  }
  const timers: NodeJS.Timeout[] = [];
  const before = (ms: number, run: () => void) => {
    const inMs = untilZero() - ms;
    if (inMs <= 0) run();
    else timers.push(setTimeout(run, inMs));
  };
  before(plan.openBeforeMs, () => open.call(client, plan.connections, { withinMs: untilZero() - READY_BEFORE_MS }));
  before(COLLECT_BEFORE_MS, collect);
  return () => timers.forEach((timer) => clearTimeout(timer));
}
