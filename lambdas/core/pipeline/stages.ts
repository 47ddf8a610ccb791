/**
 * The three stages of the serverless pipeline as pure functions over ports; the Lambda
 * handlers only parse events and wire dependencies around these.
 * - dispatch.ts (ingest): plan -> shards -> delayed shard messages -> the run record.
 * - fire-stage.ts (fire): re-delay while early, claim, fire, write the shard's results.
 * - collect.ts (collect): finalise a run's target when complete or at its deadline;
 *   collect-batch.ts: a batch's messages coalesced, one look per run and target.
 */
export { runRecordSchema, type ResultLine, type RunRecord } from './common';
export { dispatchRun, type DispatchRunArgs } from './dispatch';
export { handleShard, type HandleShardDeps, type ShardAction } from './fire-stage';
export {
  collectMessage,
  collectMessageSchema,
  collectRun,
  handleCollect,
  lookAtTarget,
  parseCollectMessage,
  type CollectAction,
  type CollectMessage,
  type CollectStatus,
} from './collect';
export { collectBatch, type CollectOutcome, type CollectRecord } from './collect-batch';
