/**
 * Where the pipeline keeps its state in the results bucket. Everything is keyed on business
 * identity (run, target, shard), never on SQS message ids, so redeliveries collapse.
 */
export const runPrefix = (runId: string) => `runs/${runId}/`;
export const targetPrefix = (runId: string, target: string) => `runs/${runId}/${target}/`;
export const runRecordKey = (runId: string) => `runs/${runId}/_run.json`;
/** The run's fixed start, written before its first message so that a retried ingest keeps it. */
export const runStartKey = (runId: string) => `runs/${runId}/_start.json`;
export const bodyKey = (runId: string, index: number) => `runs/${runId}/_bodies/${index}`;
export const claimKey = (runId: string, target: string, shardId: string) => `runs/${runId}/${target}/_claims/${shardId}`;
export const resultsPrefix = (runId: string, target: string) => `runs/${runId}/${target}/_results/`;
export const resultsKey = (runId: string, target: string, shardId: string) => `${resultsPrefix(runId, target)}${shardId}.jsonl`;
/** Mirror mode: per-hour roll-ups of every run whose captures fall in that hour. */
export const hourPrefix = (hour: string, target: string) => `hours/${hour}/${target}/`;
