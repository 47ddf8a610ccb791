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
 * between invocations, and the monotonic clock need not advance while frozen. Each shard
 * warms the invocation up before its claim (fire-warm-up.ts: a rehearsal once per
 * environment, a full collection and connections opened ahead before the first due time), as
 * the CLI does before schedule zero.
 * The target's client and its API key (Secrets Manager) are resolved before the shard is
 * claimed: a failed first read of the key fails the record with nothing claimed, and its
 * redelivery fires it. The key is read again before a shard fires once it is older than
 * SECRETS_MAX_AGE_SECONDS (deps.targets), and once more when the target answers 401 or 403:
 * that request is then sent again, once, if the key changed (a rotation).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { fireEach } from '../core/fire/fire-loop';
import { collectMessage, handleShard, PermanentError } from '../core/pipeline/stages';
import { defaultDeps, type Deps, type Target } from '../runtime/deps';
import { createWarmUpState, InvocationWarmUp } from './fire-warm-up';

/**
 * The warm-up's state belongs to the process, not to a handler: optimised code and the heap a
 * full collection pauses are the process's. In Lambda a process holds one handler, so nothing
 * changes there; a process that runs several handlers at once (an event source mapping
 * emulated in tests, one handler per concurrent invocation) rehearses once, and its full
 * collection waits until no other invocation is under way.
 */
const processWarmUp = createWarmUpState();

export function makeFireHandler(getDeps: () => Deps) {
  const processor = new BatchProcessor(EventType.SQS);
  let context: Context | null = null;
  const recordHandler = async (record: SQSRecord, warmUp: InvocationWarmUp): Promise<void> => {
    const deps = getDeps();
    const workerId = `fire_${context?.awsRequestId ?? 'local'}`;
    let resolved: Target | undefined;
    const target = (): Target => {
      if (!resolved) throw new Error('the target was not resolved before the claim');
      return resolved;
    };
    try {
      const { action, message, counts } = await handleShard(record.body, {
        store: deps.store,
        queue: deps.replayQueue,
        clock: deps.clock,
        leadMs: deps.config.leadMs,
        claimLeaseMs: deps.config.fireTimeoutMs,
        workerId,
        prepare: async (shard, requests) => {
          resolved = (await deps.targets()).get(shard.target);
          if (!resolved) throw new PermanentError(`shard for unknown target ${shard.target}`);
          await warmUp.beforeClaim(shard, requests);
        },
        fire: (requests, shard, onOutcome) =>
          fireEach(requests, {
            runId: shard.runId,
            target: target().client,
            clock: deps.clock,
            startNs: BigInt(shard.startNs),
            workerId,
            latePolicy: deps.config.latePolicy,
            expireAfterMs: deps.config.graceMs,
            sharedInFlight: target().inFlight,
            ...(deps.config.maxInFlight ? { maxInFlight: deps.config.maxInFlight } : {}),
            onOutcome,
          }),
      });
      if ((action === 'fired' || action === 'lost-after-claim') && message.last) await deps.collectQueue.sendBatch([collectMessage(message.runId, message.target, 0n)]);
      deps.logger.info('shard handled', {
        runId: message.runId,
        target: message.target,
        shardId: message.shardId,
        action,
        hops: message.hops,
        fired: counts.fired,
        failed: counts.failed,
        dropped: counts.dropped,
        expired: counts.expired,
      });
    } catch (error) {
      if (error instanceof PermanentError) {
        deps.logger.error('shard message rejected', { messageId: record.messageId, reason: error.message });
        return;
      }
      throw error;
    }
  };
  return async (event: SQSEvent, ctx: Context) => {
    context = ctx;
    const deps = getDeps();
    deps.clock.resync?.();
    const warmUp = new InvocationWarmUp(deps, processWarmUp);
    try {
      return await processPartialResponse(event, (record: SQSRecord) => recordHandler(record, warmUp), processor, { context: ctx });
    } finally {
      warmUp.end();
    }
  };
}

export const handler = makeFireHandler(defaultDeps);
