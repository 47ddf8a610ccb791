/**
 * A run of the pipeline's AWS side, simulated: the capture file lands, its notification goes
 * through the ingest queue to the ingest handler (sim/ingest.ts), which sends the shard
 * messages; the replay queue's event source feeds the fire handler (sim/fire.ts); the collect
 * queue the collector (sim/collect.ts). Events are messages becoming visible, batches handed
 * to Lambda, invocations ending and the handlers' writes and sends; requests are computed
 * inside their shard's invocation (sim/fire-loop.ts), not as events.
 */
import { Account, FunctionModel } from './aws/lambda';
import { EventSourceScaler, type EventSourceConfig } from './aws/event-source';
import { S3Timing } from './aws/s3';
import { SqsQueue } from './aws/sqs';
import { CollectHandler, type CollectPayload } from './collect';
import { Consumer } from './consumer';
import { Agenda } from './events';
import { FireHandler, type ShardPayload } from './fire';
import { LatenessSink } from './fire-loop';
import { IngestHandler, type IngestPayload } from './ingest';
import { lognormalFromP50P99, streams, type Lognormal, type Rng } from './random';
import type { FunctionSettings, SimSettings } from './settings';
import { MAX_RECEIVE_COUNT } from '../lib/stack-constants';
import { buildWorkload, type SimShard, type Workload } from './workload';

export interface SimRun {
  settings: SimSettings;
  workload: Workload;
  runStartMs: number;
  deadlineMs: number;
  lateness: Float64Array;
  fire: FireHandler;
  ingest: IngestHandler;
  collect: CollectHandler;
  consumers: { ingest: Consumer<IngestPayload>; fire: Consumer<ShardPayload>; collect: Consumer<CollectPayload> };
  events: number;
  endMs: number;
}

/** Events a run may take before it is stopped as one that would not end (sim/events.ts). */
export const MAX_EVENTS = 50_000_000;

// New streams go last: a stream's seed is its place in the list.
const RNG_STREAMS = ['arrivals', 'jitter', 'own', 'initFire', 'initIngest', 'initCollect', 's3'] as const;

function eventSource(s: SimSettings, fn: FunctionSettings, mode: 'standard' | 'provisioned'): EventSourceConfig {
  return {
    mode,
    maxConcurrency: fn.maxConcurrency,
    minPollers: s.stack.minPollers,
    maxPollers: s.stack.maxPollers,
    esm: s.aws.esm,
    provisioned: s.aws.provisioned,
  };
}

/** A queue, event source and function for one stage. */
function stage<P>(
  s: SimSettings,
  agenda: Agenda,
  account: Account,
  name: 'ingest' | 'fire' | 'collect',
  rng: { jitter: Rng; init: Rng },
  init: Lognormal,
  handle: (
    records: P[],
    at: number,
    timeoutAt: number,
  ) => { endMs: number; effects: { at: number; run: () => void }[] },
): Consumer<P> {
  const fn = s.stack[name];
  const mode = name === 'fire' ? s.stack.eventSourceMode : 'standard';
  const idleMs = s.idleBeforeMinutes * 60_000;
  const scaler = new EventSourceScaler(eventSource(s, fn, mode), idleMs < s.aws.esm.scaleDownAfterS * 1000);
  const queue = new SqsQueue<P>(
    {
      name,
      visibilityTimeoutS: fn.visibilityTimeoutS,
      maxReceiveCount: name === 'fire' ? s.stack.maxReceiveCount : MAX_RECEIVE_COUNT,
      delayJitterMaxMs: s.aws.sqs.delayJitterMaxMs,
    },
    agenda,
    rng.jitter,
  );
  const warm = idleMs < s.aws.lambda.envReclaimMinutes * 60_000 ? scaler.ceiling : 0;
  const model = new FunctionModel(
    {
      name,
      memoryMb: fn.memoryMb,
      reservedConcurrency: fn.reservedConcurrency,
      init,
      scalePer10s: s.aws.lambda.scalePer10s,
      invokeOverheadMs: s.aws.lambda.invokeOverheadMs,
      coldPlatformMs: s.aws.lambda.coldPlatformMs,
      envReclaimMinutes: s.aws.lambda.envReclaimMinutes,
    },
    account,
    rng.init,
    warm,
  );
  const growth = mode === 'provisioned' ? s.aws.provisioned.growthPerMinute : s.aws.esm.growthPerMinute;
  return new Consumer<P>(
    agenda,
    queue,
    scaler,
    model,
    {
      batchSize: fn.batchSize,
      batchingWindowMs: fn.batchingWindowS * 1000,
      timeoutS: fn.timeoutS,
      tickMs: Math.max(10, 60_000 / growth),
      receiveRoundTripMs: s.aws.sqs.receiveRoundTripMs,
    },
    handle,
  );
}

export function simulate(s: SimSettings): SimRun {
  const rng = streams(s.seed, RNG_STREAMS);
  const workload = buildWorkload(s, rng.arrivals);
  // A run takes a few events per shard message and per event source tick (6,181 for 12 M
  // requests in 550 shards): far more means it would not end.
  const agenda = new Agenda(MAX_EVENTS);
  const account = new Account(s.aws.accountConcurrency);
  const sink = new LatenessSink(workload.requests * s.workload.targets);
  const loop = {
    expireMs: s.stack.graceS * 1000,
    toleranceMs: s.stack.lateToleranceMs,
    policy: s.stack.latePolicy,
    requestTimeoutMs: s.stack.requestTimeoutS * 1000,
    own: s.handler.ownLateness,
    latency: lognormalFromP50P99(s.workload.latencyP50S * 1000, s.workload.latencyP99S * 1000),
    rng: rng.own,
  };
  const s3 = new S3Timing(s.aws.s3, rng.s3);
  let runStartMs = NaN;
  let deadlineMs = Infinity;
  // The stages refer to each other's queues: built first, wired after.
  const late: { fire?: Consumer<ShardPayload>; collect?: Consumer<CollectPayload> } = {};
  const collectBytes = 130;
  const fire = new FireHandler(s, workload, loop, sink, s3, {
    sendShard: (at, payload, delaySeconds) =>
      late.fire?.queue.sendBatch(at, [
        {
          bytes: workload.shardMessageBytes(
            workload.shards[payload.shard] as SimShard,
            payload.leadMs !== s.stack.leadS * 1000,
          ),
          payload,
          delaySeconds,
        },
      ]),
    sendCollect: (at, target) =>
      late.collect?.queue.sendBatch(at, [
        { bytes: collectBytes, payload: { kind: 'collect', target, notBeforeMs: 0 }, delaySeconds: 0 },
      ]),
  });
  const collect = new CollectHandler(s, workload, fire.state, s3, (at, entries) =>
    late.collect?.queue.sendBatch(
      at,
      entries.map((e) => ({ bytes: collectBytes, ...e })),
    ),
  );
  const ingest = new IngestHandler(s, workload, s3, {
    onStart: (start, deadline) => {
      runStartMs = start;
      deadlineMs = deadline;
      fire.runStartMs = start;
      collect.deadlineMs = deadline;
    },
    sendShards: (at, entries) => late.fire?.queue.sendBatch(at, entries),
    sendCollect: (at, entries) => late.collect?.queue.sendBatch(at, entries),
  });
  const consumers = {
    ingest: stage<IngestPayload>(
      s,
      agenda,
      account,
      'ingest',
      { jitter: rng.jitter, init: rng.initIngest },
      s.aws.lambda.init.ingest,
      (r, at) => ingest.handle(r, at),
    ),
    fire: stage<ShardPayload>(
      s,
      agenda,
      account,
      'fire',
      { jitter: rng.jitter, init: rng.initFire },
      s.aws.lambda.init.fire,
      (r, at, timeoutAt) => fire.handle(r, at, timeoutAt),
    ),
    collect: stage<CollectPayload>(
      s,
      agenda,
      account,
      'collect',
      { jitter: rng.jitter, init: rng.initCollect },
      s.aws.lambda.init.collect,
      (r, at) => collect.handle(r, at),
    ),
  };
  late.fire = consumers.fire;
  late.collect = consumers.collect;
  // The S3 notification (not billed to the pipeline's SQS: S3 sends it) reaches the ingest queue.
  agenda.at(s.handler.notifyMs, () => consumers.ingest.queue.inject({ kind: 'notify' }, 1500));
  agenda.runUntil();
  return {
    settings: s,
    workload,
    runStartMs,
    deadlineMs,
    lateness: sink.sorted(),
    fire,
    ingest,
    collect,
    consumers,
    events: agenda.ran,
    endMs: agenda.now,
  };
}
