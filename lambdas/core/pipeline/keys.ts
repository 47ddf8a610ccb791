/**
 * Where the pipeline keeps its state in the results bucket. Everything is keyed on business
 * identity (run, target, shard), never on SQS message ids, so redeliveries collapse.
 *
 * Two top-level prefixes, so that a lifecycle rule (prefix filters only, no wildcards) can
 * tell them apart:
 * - `runs/` holds what users read: the AIPerf artifacts, manifests, ingest reports. Kept.
 * - `work/` holds the pipeline's working files: run records, claims, shard results, and
 *   bodies too large to travel in a message (prompts). They expire after a configured
 *   number of days (the stack's lifecycle rule).
 */
export const WORK_ROOT = 'work/';
export const RESULTS_ROOT = 'runs/';
export const HOURS_ROOT = 'hours/';

export const runPrefix = (runId: string) => `${RESULTS_ROOT}${runId}/`;
export const targetPrefix = (runId: string, target: string) => `${RESULTS_ROOT}${runId}/${target}/`;
export const runRecordKey = (runId: string) => `${WORK_ROOT}${runId}/_run.json`;
/** The run's fixed start, written before its first message so that a retried ingest keeps it. */
export const runStartKey = (runId: string) => `${WORK_ROOT}${runId}/_start.json`;
export const bodyKey = (runId: string, index: number) => `${WORK_ROOT}${runId}/_bodies/${index}`;
/** A shard's requests when they travel by reference: parts `<prefix><n>`, one set per plan the run's targets share (`group`). */
export const shardPartsPrefix = (runId: string, group: number, shardId: string) =>
  `${WORK_ROOT}${runId}/_shards/${group}/${shardId}/`;
export const claimKey = (runId: string, target: string, shardId: string) =>
  `${WORK_ROOT}${runId}/${target}/_claims/${shardId}`;
export const resultsPrefix = (runId: string, target: string) => `${WORK_ROOT}${runId}/${target}/_results/`;
export const resultsKey = (runId: string, target: string, shardId: string) =>
  `${resultsPrefix(runId, target)}${shardId}.jsonl`;
/** Mirror mode: per-hour roll-ups of every run whose captures fall in that hour. */
export const hourPrefix = (hour: string, target: string) => `${HOURS_ROOT}${hour}/${target}/`;
