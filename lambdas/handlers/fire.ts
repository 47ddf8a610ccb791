/**
 * Fire (the fan-out). Trigger: the replay queue, each message one shard of a run for one
 * target. Input: shard messages. Output: the shard's requests sent at their due times, the
 * shard's results in S3 (`runs/<run>/<target>/_results/<shard>.jsonl`); for the run's last
 * shard, a collect message.
 * Failure: a malformed message is logged and acknowledged; an AWS error fails that record
 * alone (partial batch response). A message still early is re-delayed; a shard is claimed
 * with a conditional create, so a duplicate delivery fires nothing twice; late requests
 * follow the configured late policy and are counted; a request reached past its due window
 * (a redelivery) is dropped as `expired`, never fired.
 * Each invocation first re-anchors the clock to wall time: Lambda may freeze the container
 * between invocations, and the monotonic clock need not advance while frozen.
 * A target's API key (Secrets Manager) is read again before a shard fires once it is older
 * than SECRETS_MAX_AGE_SECONDS (deps.targets), and once more when the target answers 401 or
 * 403: that request is then sent again, once, if the key changed (a rotation).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { runFireLoop } from '../core/fire/fire-loop';
import { collectMessage, handleShard, PermanentError } from '../core/pipeline/stages';
import { defaultDeps, type Deps } from '../runtime/deps';

export function makeFireHandler(getDeps: () => Deps) {
  const processor = new BatchProcessor(EventType.SQS);
  let context: Context | null = null;
  const recordHandler = async (record: SQSRecord): Promise<void> => {
    const deps = getDeps();
    const workerId = `fire_${context?.awsRequestId ?? 'local'}`;
    try {
      const { action, message, outcomes } = await handleShard(record.body, {
        store: deps.store,
        queue: deps.replayQueue,
        clock: deps.clock,
        leadMs: deps.config.leadMs,
        claimLeaseMs: deps.config.fireTimeoutMs,
        workerId,
        fire: async (requests, shard) => {
          const target = (await deps.targets()).get(shard.target);
          if (!target) throw new PermanentError(`shard for unknown target ${shard.target}`);
          return runFireLoop(requests, {
            runId: shard.runId,
            target: target.client,
            clock: deps.clock,
            startNs: BigInt(shard.startNs),
            workerId,
            latePolicy: deps.config.latePolicy,
            expireAfterMs: deps.config.graceMs,
            sharedInFlight: target.inFlight,
            ...(deps.config.maxInFlight ? { maxInFlight: deps.config.maxInFlight } : {}),
          });
        },
      });
      if ((action === 'fired' || action === 'lost-after-claim') && message.last) await deps.collectQueue.sendBatch([collectMessage(message.runId, message.target, 0n)]);
      deps.logger.info('shard handled', {
        runId: message.runId,
        target: message.target,
        shardId: message.shardId,
        action,
        hops: message.hops,
        fired: outcomes.filter((o) => o.result).length,
        failed: outcomes.filter((o) => o.result?.error).length,
        dropped: outcomes.filter((o) => o.dropReason).length,
        expired: outcomes.filter((o) => o.dropReason === 'expired').length,
      });
    } catch (error) {
      if (error instanceof PermanentError) {
        deps.logger.error('shard message rejected', { messageId: record.messageId, reason: error.message });
        return;
      }
      throw error;
    }
  };
  return (event: SQSEvent, ctx: Context) => {
    context = ctx;
    const deps = getDeps();
    deps.clock.resync?.();
    return processPartialResponse(event, recordHandler, processor, { context: ctx });
  };
}

export const handler = makeFireHandler(defaultDeps);
