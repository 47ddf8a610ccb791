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
 *
 * What each invocation does before it fires (the clock, the warm-up, the key): makeFireHandler.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { fireEach } from '../core/fire/fire-loop';
import { lambdaCpuShare, startCpuMeter, usedMostOfShare, type CpuUse } from '../adapters/cpu-use';
import { spaceOutMajorCollections } from '../adapters/lane-heap';
import { isFinal, PermanentError } from '../core/errors';
import { collectMessage, handleShard, type ShardAction } from '../core/pipeline/stages';
import type { ShardCounts } from '../core/pipeline/fire-stage';
import type { ShardMessage } from '../core/pipeline/shards';
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
/** This environment's CPU share (vCPUs), from its memory; null outside Lambda. */
const share = lambdaCpuShare();
// In Lambda, where the process is this function's alone: a lane's heap grows without a
// mark-compact in the middle of its slot (adapters/lane-heap.ts).
if (share !== null) spaceOutMajorCollections();
const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** The shard's outcome in the log, with the fire loop's CPU against the share; a warning when it used most of it. */
function logShard(
  deps: Deps,
  message: ShardMessage,
  action: ShardAction,
  counts: ShardCounts,
  cpu: CpuUse | null,
): void {
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
    ...(cpu ? { cpuVcpus: round3(cpu.vcpus), cpuShare: share === null ? null : round3(share) } : {}),
  });
  if (cpu && share !== null && usedMostOfShare(cpu, share)) {
    deps.logger.warn('the fire invocation used most of its CPU share: its requests may have gone out late', {
      runId: message.runId,
      shardId: message.shardId,
      cpuVcpus: round3(cpu.vcpus),
      cpuShare: round3(share),
      raise: 'streamTokensPerSecond (the fire memory follows it), or set it to what the target streams',
    });
  }
}

/**
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
    // The fire loop's CPU, set by `fire` once it has run (a holder: a closure sets it).
    const measured: { cpu: CpuUse | null } = { cpu: null };
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
        fire: async (requests, shard, onOutcome) => {
          const meter = startCpuMeter();
          await fireEach(requests, {
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
          });
          measured.cpu = meter();
        },
      });
      if ((action === 'fired' || action === 'lost-after-claim') && message.last)
        await deps.collectQueue.sendBatch([collectMessage(message.runId, message.target, 0n)]);
      logShard(deps, message, action, counts, measured.cpu);
    } catch (error) {
      if (isFinal(error)) {
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
      return await processPartialResponse(event, (record: SQSRecord) => recordHandler(record, warmUp), processor, {
        context: ctx,
      });
    } finally {
      warmUp.end();
    }
  };
}

export const handler = makeFireHandler(defaultDeps);
