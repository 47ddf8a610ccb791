/**
 * Garbage collections on demand: before a run's first request, and in the gaps of its schedule.
 *
 * At high rates the worst lateness at the server comes from V8's major collections
 * (incremental marking, then a mark-compact pause) in the middle of the schedule, tens of ms
 * for dozens of requests, once the old generation fills with what came before the run (the
 * rehearsal's, the plan's; bench/server-lateness.ts shows it). Collected before the first due
 * time, the run starts from a compact heap whose next limit is set from what is live. The fire
 * function collects in full just before it (handlers/fire-warm-up.ts), and so does the CLI,
 * unless its rehearsal made a second pass: then between the passes, and just before the first
 * due time only scavenges (promoteYoungGeneration, below; lambdas/local/rehearsal.ts).
 *
 * Node exposes `gc()` only under --expose-gc; the flag can be set at run time and the function
 * taken from a fresh context, as Jest's leak detection does. Where that fails (a runtime that
 * refuses the flag), nothing is collected and the run goes on.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's gc(): a full collection, or with `{ type: 'minor' }` a scavenge of the young generation. */
type GcFunction = (options?: { type: 'major' | 'minor' }) => void;
let gc: GcFunction | null | undefined;

function gcFunction(): GcFunction | null {
  if (gc !== undefined) return gc;
  try {
    setFlagsFromString('--expose-gc');
    const found: unknown = runInNewContext('gc');
    gc = typeof found === 'function' ? (found as GcFunction) : null;
  } catch {
    gc = null;
  }
  return gc;
}

/** Runs a full collection; false when this runtime gives no way to. */
export function collectGarbage(): boolean {
  const collect = gcFunction();
  if (!collect) return false;
  collect();
  return true;
}

/**
 * Two scavenges and no major collection: what is alive in the young generation (the requests
 * the fire loop prepared) is promoted, so that the run's first scavenges do not copy it (they
 * took several times the later ones' pause without it: bench/RESULTS.md), and no code is
 * dropped. A full collection at that moment drops the optimised code that names objects of
 * which none is alive then (a finished response's, a request's in flight: none is, before the
 * first request), and the run's first second compiles it again, late (bench/RESULTS.md). For
 * the CLI after a second rehearsal pass (lambdas/local/rehearsal.ts), whose full collection ran
 * between the passes. False when this runtime gives no way to collect.
 */
export function promoteYoungGeneration(): boolean {
  const collect = gcFunction();
  if (!collect) return false;
  collect({ type: 'minor' });
  collect({ type: 'minor' });
  return true;
}

/** A gap of the schedule this long or longer (ms) takes a scavenge (scavengeInGap): longer than a scavenge's pause (bench/RESULTS.md). */
export const SCHEDULE_GAP_MS = 4;
/** How full the young generation is before a gap's scavenge is made (V8 schedules its own at about 80 %). */
export const GAP_SCAVENGE_FILL = 0.5;

/**
 * A scavenge now, when the young generation is at least GAP_SCAVENGE_FILL full: the CLI's
 * precise clock calls it in the gaps of its schedule (system-clock.ts), so that the scavenge V8
 * would otherwise make on its own, at any moment, lands where no request is due. A busy
 * schedule has such gaps many times between two of V8's scavenges; V8 still makes some of its
 * own (measured: bench/RESULTS.md). True when it collected.
 */
export function scavengeInGap(): boolean {
  const collect = gcFunction();
  if (!collect) return false;
  const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
  if (!young) return false;
  const capacity = young.space_used_size + young.space_available_size;
  if (young.space_used_size < GAP_SCAVENGE_FILL * capacity) return false;
  collect({ type: 'minor' });
  return true;
}
