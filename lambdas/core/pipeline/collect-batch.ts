/**
 * A batch of collect messages, coalesced. At a run's end every lane of its last slot sends a
 * collect message per target, and the event source's batching window puts them in one batch:
 * handled record by record, each would look at (and finalise) its target again, and each
 * finaliser would build the run's analysis again. Instead the batch's records are grouped by run
 * and target, each group gets one look (lookAtTarget: what its messages together allow), and
 * each run one analysis after its groups, when one of them finalised a target. The order, and
 * how every record's outcome is accounted for: docs/deploy.md#collecting-a-batch.
 */
import type { Log } from '../../ports';
import {
  lookAtTarget,
  parseCollectMessage,
  type CollectAction,
  type CollectLookDeps,
  type CollectMessage,
} from './collect';
import { isFinal } from '../errors';

export interface CollectRecord {
  /** Unique within the batch (the SQS message id). */
  id: string;
  body: string;
}

export type CollectOutcome =
  | { kind: 'done'; runId: string; target: string; action: CollectAction }
  | { kind: 'rejected'; reason: string }
  | { kind: 'failed'; error: unknown };

export interface CollectBatchDeps extends CollectLookDeps {
  /** The run's analysis (run-analysis.ts analyseRunIfFinal), once per run per batch. */
  analyse: (runId: string) => Promise<void>;
  log: Log;
}

interface Group {
  runId: string;
  target: string;
  ids: string[];
  messages: CollectMessage[];
}

/** Records grouped by run, then target, each in the order of its first record; the malformed apart. */
function groupRecords(
  records: readonly CollectRecord[],
  outcomes: Map<string, CollectOutcome>,
  log: Log,
): Map<string, Group[]> {
  const runs = new Map<string, Group[]>();
  for (const record of records) {
    let message: CollectMessage;
    try {
      message = parseCollectMessage(record.body);
    } catch (error) {
      if (!isFinal(error)) throw error;
      outcomes.set(record.id, { kind: 'rejected', reason: error.message });
      log.error('collect message rejected', { messageId: record.id, reason: error.message });
      continue;
    }
    const groups = runs.get(message.runId) ?? [];
    runs.set(message.runId, groups);
    let group = groups.find((g) => g.target === message.target);
    if (!group) {
      group = { runId: message.runId, target: message.target, ids: [], messages: [] };
      groups.push(group);
    }
    group.ids.push(record.id);
    group.messages.push(message);
  }
  return runs;
}

/**
 * One look per group; the groups whose look finalised a target and so ask for the run's analysis. One after another: a
 * look holds every record of its target in memory (collectRun), so two at once would double the collector's peak.
 */
async function lookAtGroups(
  groups: readonly Group[],
  deps: CollectBatchDeps,
  outcomes: Map<string, CollectOutcome>,
): Promise<Group[]> {
  const asking: Group[] = [];
  for (const group of groups) {
    const { runId, target, ids } = group;
    try {
      const { action, analyse } = await lookAtTarget(group.messages, deps);
      for (const id of ids) outcomes.set(id, { kind: 'done', runId, target, action });
      deps.log.info('collect', { runId, target, action, records: ids.length });
      if (analyse) asking.push(group);
    } catch (error) {
      if (isFinal(error)) {
        for (const id of ids) outcomes.set(id, { kind: 'rejected', reason: error.message });
        deps.log.error('collect message rejected', { runId, target, messageIds: ids, reason: error.message });
        continue;
      }
      for (const id of ids) outcomes.set(id, { kind: 'failed', error });
      deps.log.warn('collect failed: records left for a retry', {
        runId,
        target,
        messageIds: ids,
        reason: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return asking;
}

/** Each record's outcome, by id. */
export async function collectBatch(
  records: readonly CollectRecord[],
  deps: CollectBatchDeps,
): Promise<Map<string, CollectOutcome>> {
  const outcomes = new Map<string, CollectOutcome>();
  for (const [runId, groups] of groupRecords(records, outcomes, deps.log)) {
    const asking = await lookAtGroups(groups, deps, outcomes);
    if (asking.length === 0) continue;
    try {
      await deps.analyse(runId);
    } catch (error) {
      const ids = asking.flatMap((g) => g.ids);
      for (const id of ids) outcomes.set(id, { kind: 'failed', error });
      deps.log.warn('run analysis failed: its finalisers left for a retry', {
        runId,
        messageIds: ids,
        reason: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return outcomes;
}
