/**
 * Collect. Trigger: the collect queue: one message when a shard has reported, and one at
 * each run's deadline. Input: collect messages (run, target, not-before time). Output: when
 * every shard of a run has reported, or its deadline has passed, the AIPerf artifacts and
 * the run manifest under `runs/<run>/<target>/` (missing shards' requests counted as
 * `lost`). Failure: a malformed message is logged and acknowledged; an AWS error fails that
 * record alone for a retry. Writing the artifacts again yields the same files.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { handleCollect, PermanentError } from '../core/pipeline/stages';
import { defaultDeps, type Deps } from '../runtime/deps';

export function makeCollectHandler(getDeps: () => Deps) {
  const processor = new BatchProcessor(EventType.SQS);
  const recordHandler = async (record: SQSRecord): Promise<void> => {
    const deps = getDeps();
    try {
      const { action, message } = await handleCollect(record.body, { store: deps.store, queue: deps.collectQueue, clock: deps.clock });
      deps.logger.info('collect', { runId: message.runId, target: message.target, action });
    } catch (error) {
      if (error instanceof PermanentError) {
        deps.logger.error('collect message rejected', { messageId: record.messageId, reason: error.message });
        return;
      }
      throw error;
    }
  };
  return (event: SQSEvent, context: Context) => processPartialResponse(event, recordHandler, processor, { context });
}

export const handler = makeCollectHandler(defaultDeps);
