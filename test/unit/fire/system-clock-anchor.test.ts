/**
 * The system clock's anchor against a thread descheduled while it reads the clocks. Simulated
 * time runs 0.5 us per clock read; before one chosen read the thread "sleeps" 4 ms (the
 * scheduler's pause). Wherever the pause lands (before the wall clock's tick, on the reads
 * that see it, after it), the anchored clock must read real time to within the anchor's
 * bracket. The old anchor paired the tick with an hrtime read from before the pause and ran
 * up to 4 ms ahead: a fire worker that anchored so sent its whole share early.
 */
import { describe, expect, it } from 'vitest';
import { ANCHOR_SPAN_NS, createSystemClock, type ClockSources } from '../../../lambdas/adapters/system-clock';

const PAUSE_NS = 4_000_000n;
const READ_NS = 500n;
const HR_OFFSET_NS = 123_456_789n; // hrtime counts from boot, not from the epoch
/** 0.3 ms before a millisecond turns over: the first tick comes ~600 reads in. */
const START_NS = 1_800_000_000_999_700_000n;

/** Real time in epoch ns, advanced by every read; a pause before read number `pauseAt`. */
function simulated(pauseAt: number) {
  let now = START_NS;
  let reads = 0;
  const step = () => {
    if (reads++ === pauseAt) now += PAUSE_NS;
    now += READ_NS;
  };
  const sources: ClockSources = {
    wallMs: () => (step(), Number(now / 1_000_000n)),
    hrtimeNs: () => (step(), now - HR_OFFSET_NS),
  };
  return { sources, realNs: () => now, reads: () => reads };
}

const abs = (v: bigint) => (v < 0n ? -v : v);

describe('system clock anchor', () => {
  it('reads real time to within its bracket wherever a 4 ms pause lands in the first anchor', () => {
    const wrong: string[] = [];
    for (let pauseAt = 0; pauseAt < 1_400; pauseAt++) {
      const { sources, realNs } = simulated(pauseAt);
      const clock = createSystemClock(sources);
      const errorNs = clock.nowNs() - realNs();
      if (abs(errorNs) > ANCHOR_SPAN_NS) wrong.push(`pause at read ${pauseAt}: ${Number(errorNs) / 1e6} ms`);
    }
    expect(wrong).toEqual([]);
  });

  it('and in a resync (the fire handler takes one at every invocation)', () => {
    const probe = simulated(-1);
    createSystemClock(probe.sources);
    const first = probe.reads(); // the reads of the first anchor: pauses from here land in the resync
    const wrong: string[] = [];
    // The resync's tick is ~1 ms (~2,000 reads) after the first anchor's.
    for (let pauseAt = first; pauseAt < first + 2_600; pauseAt++) {
      const { sources, realNs } = simulated(pauseAt);
      const clock = createSystemClock(sources);
      clock.resync();
      const errorNs = clock.nowNs() - realNs();
      if (abs(errorNs) > ANCHOR_SPAN_NS) wrong.push(`pause at read ${pauseAt}: ${Number(errorNs) / 1e6} ms`);
    }
    expect(wrong).toEqual([]);
  });
});
