/**
 * The clock a CLI thread fires on: the system clock in the wait mode asked for; a precise one
 * makes its scavenges in the gaps of the schedule (full-gc.ts scavengeInGap), a coarse one
 * leaves them to V8 (its thread sleeps between requests, and a millisecond is its precision).
 */
import { scavengeInGap, SCHEDULE_GAP_MS } from '../adapters/full-gc';
import { createSystemClock, type SystemClock, type WaitMode } from '../adapters/system-clock';

export function cliClock(wait: WaitMode): SystemClock {
  return wait === 'precise'
    ? createSystemClock(undefined, 'precise', { gapMs: SCHEDULE_GAP_MS, inGap: scavengeInGap })
    : createSystemClock(undefined, 'coarse');
}
