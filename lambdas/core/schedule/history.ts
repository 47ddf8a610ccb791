/**
 * A schedule's history and trend page, and the summary people are told. Being written; the
 * signatures are the contract the plan function and the collector code against.
 */
import type { Clock, Notifier, ObjectStore } from '../../ports';
import type { ScheduledRunInfo } from './contract';

/**
 * A scheduled run with nothing to replay (no captures in the window, or none any target
 * takes): one history line with `reason`, the trend page rewritten, the summary published.
 * Idempotent on `runId`: a second call adds no line and publishes nothing.
 */
export async function recordEmptyRun(_args: { store: ObjectStore; notifier: Notifier | null; clock: Clock; runId: string; info: ScheduledRunInfo; reason: string; resultsBucket: string }): Promise<void> {
  throw new Error('recordEmptyRun: not built yet');
}
