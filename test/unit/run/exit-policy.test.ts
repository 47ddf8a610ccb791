/** The CLI's run verdict from the targets' manifests (lambdas/local/exit-policy.ts), rule by rule. */
import { describe, expect, it } from 'vitest';
import type { RunManifest } from '../../../lambdas/core/types';
import { runVerdict } from '../../../lambdas/local/exit-policy';

const manifest = (target: string, counts: Partial<RunManifest>): RunManifest => {
  const m = {
    runId: 'r',
    target,
    scheduled: 0,
    fired: 0,
    succeeded: 0,
    failed: 0,
    dropped: 0,
    droppedByReason: {},
    failedByType: {},
    notScheduledByReason: {},
    balanced: true,
    startedAt: '',
    endedAt: '',
    ...counts,
  };
  return { ...m, fired: counts.fired ?? m.succeeded + m.failed };
};
const replayed = manifest('B', { scheduled: 4, succeeded: 4 });
const tookNone = manifest('A', {
  scheduled: 4,
  dropped: 4,
  droppedByReason: { unsupported_content_type: 3, not_chat_request: 1 },
});

describe('runVerdict', () => {
  it('a target that took none of the capture is named, not a failure, when another replayed', () => {
    expect(runVerdict([tookNone, replayed])).toEqual({
      failures: [],
      notes: ['A took none of this capture (4 dropped: unsupported_content_type 3, not_chat_request 1)'],
    });
  });

  it('no target replayed anything: a failure', () => {
    expect(runVerdict([tookNone]).failures).toEqual(['no target replayed any of this capture']);
  });

  it('every request to a target failed: a failure, whatever the others did', () => {
    expect(runVerdict([replayed, manifest('C', { scheduled: 4, failed: 4 })]).failures).toEqual([
      'no request to C succeeded',
    ]);
  });

  it('nothing fired for another reason than the content type (late, aborted): a failure with the reasons', () => {
    expect(
      runVerdict([
        replayed,
        manifest('C', {
          scheduled: 4,
          dropped: 4,
          droppedByReason: { unsupported_content_type: 2, late_beyond_tolerance: 2 },
        }),
      ]).failures,
    ).toEqual(['no request to C succeeded (4 dropped: unsupported_content_type 2, late_beyond_tolerance 2)']);
  });

  it('an error rate above --max-error-rate, and accounting that does not balance', () => {
    const half = manifest('C', { scheduled: 4, succeeded: 2, failed: 2 });
    expect(runVerdict([half], { maxErrorRate: 0.25 }).failures).toEqual([
      'error rate 0.500 of C is above --max-error-rate 0.25',
    ]);
    expect(runVerdict([half], { maxErrorRate: 0.5 }).failures).toEqual([]);
    expect(runVerdict([manifest('C', { scheduled: 4, succeeded: 3, balanced: false })]).failures).toEqual([
      'accounting does not balance for C: this is a bug, please report it',
    ]);
  });

  it('nothing scheduled for any target (all outside the offsets): not a failure, as before', () => {
    expect(runVerdict([manifest('A', {}), manifest('B', {})])).toEqual({ failures: [], notes: [] });
  });
});
