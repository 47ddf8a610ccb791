/**
 * What a replay's manifests say about the run, target by target, for the CLI's exit code.
 *
 * Per target:
 * - its accounting does not balance: a failure (a bug);
 * - it took none of the capture: every record scheduled for it was dropped as one it cannot
 *   take (`unsupported_content_type`, `not_chat_request`: a chat target on a tabular
 *   capture): said, not a failure by itself;
 * - it was scheduled requests and none succeeded (all failed, or all dropped for another
 *   reason: late, aborted, lost): a failure;
 * - its error rate (failed / fired) is above --max-error-rate: a failure.
 * The run fails when any target fails, and when no target replayed anything while one took
 * none of the capture (there is nothing to compare). A run with one target that replayed
 * everything and another that could not take the content type is not a failure.
 */
import type { DropReason, RunManifest } from '../core/types';

/** Drops that say the target cannot take the record, not that anything went wrong (plan.ts rule 6). */
export const INCOMPATIBLE_DROPS: readonly DropReason[] = ['unsupported_content_type', 'not_chat_request'];

export interface RunVerdict {
  /** Why the run failed, one line each; empty when it did not. */
  failures: string[];
  /** What the user should know without it being a failure, one line each. */
  notes: string[];
}

function reasons(byReason: RunManifest['droppedByReason']): string {
  return Object.entries(byReason)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
}

function tookNone(m: RunManifest): boolean {
  return (
    m.scheduled > 0 &&
    m.fired === 0 &&
    Object.keys(m.droppedByReason).every((r) => INCOMPATIBLE_DROPS.includes(r as DropReason))
  );
}

export function runVerdict(manifests: readonly RunManifest[], options: { maxErrorRate?: number } = {}): RunVerdict {
  const failures: string[] = [];
  const notes: string[] = [];
  for (const m of manifests) {
    if (!m.balanced) failures.push(`accounting does not balance for ${m.target}: this is a bug, please report it`);
    else if (tookNone(m))
      notes.push(`${m.target} took none of this capture (${m.dropped} dropped: ${reasons(m.droppedByReason)})`);
    else if (m.scheduled > 0 && m.succeeded === 0)
      failures.push(
        `no request to ${m.target} succeeded${m.fired === 0 ? ` (${m.dropped} dropped: ${reasons(m.droppedByReason)})` : ''}`,
      );
    else if (options.maxErrorRate !== undefined && m.fired > 0 && m.failed / m.fired > options.maxErrorRate) {
      failures.push(
        `error rate ${(m.failed / m.fired).toFixed(3)} of ${m.target} is above --max-error-rate ${options.maxErrorRate}`,
      );
    }
  }
  if (notes.length > 0 && manifests.every((m) => m.succeeded === 0))
    failures.push('no target replayed any of this capture');
  return { failures, notes };
}
