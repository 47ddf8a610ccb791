/**
 * SQS delivery delays. A shard message must reach a worker `leadMs` before its first due time:
 * the lead absorbs cold starts and SQS's delivery jitter, and the worker then waits for each
 * exact due time itself. SQS delays are whole seconds, at most 900: the delay is rounded
 * DOWN (early is harmless, late is not), and a due time further away than 900 s + lead is
 * reached in hops: the message is sent with 900 s, and a worker receiving it still early
 * sends it on again with the remaining delay, until it arrives within the lead.
 */
export const MAX_SQS_DELAY_SECONDS = 900;

export interface DelayDecision {
  delaySeconds: number;
  /** True when the due time is beyond one SQS delay: the message will need another hop. */
  deferred: boolean;
}

export function deliveryDelay(firstDueNs: bigint, nowNs: bigint, leadMs: number): DelayDecision {
  const wantMs = Number(firstDueNs - nowNs) / 1e6 - leadMs;
  if (wantMs < 1000) return { delaySeconds: 0, deferred: false };
  const seconds = Math.floor(wantMs / 1000);
  return seconds > MAX_SQS_DELAY_SECONDS
    ? { delaySeconds: MAX_SQS_DELAY_SECONDS, deferred: true }
    : { delaySeconds: seconds, deferred: false };
}

/**
 * An SQS event source that has been idle: "Lambda starts processing five batches at a time
 * with five concurrent invocations", and while messages are still available "increases the
 * number of processes that are reading batches by up to 300 more concurrent invokes per
 * minute", up to its maximum concurrency.
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
 */
export const EVENT_SOURCE_SCALING = { initialBatches: 5, addedPerMinute: 300 } as const;

/**
 * The ramp the schedulers plan each slot's deliveries along, batches added a minute: half of
 * the documented rate. AWS's figure is a ceiling ("up to"), not a promise, and leads planned on
 * it leave a slot's last lanes late whenever the event source grows slower (docs/simulator.md,
 * "The goal", has the simulated figures). Planned at half, a source that grows at least that
 * fast has started every lane by its due time minus the lead; a faster one only picks the early
 * messages up sooner, and their invocations wait longer (billed).
 */
export const PLANNED_RAMP_PER_MINUTE = EVENT_SOURCE_SCALING.addedPerMinute / 2;

/** Ramp deliveries come this much before the event source can take them, so that messages wait and it keeps scaling. */
export const RAMP_MARGIN_MS = 2000;

export interface RampOptions {
  leadMs: number;
  /** Messages per batch (the event source's BatchSize). */
  batchSize: number;
  /** The longest lead a message may get (what the fire function's timeout leaves for waiting). */
  maxLeadMs: number;
}

/**
 * How long before its first due time each message of a run should be delivered, so that the
 * replay queue's event source, adding at least PLANNED_RAMP_PER_MINUTE batches a minute (half
 * of AWS's "up to 300"), has picked up each one by (due - lead). `duesMs` are the messages'
 * first due times (ms), ascending, and `slotOf` each one's slot; the result is each one's lead.
 *
 * A slot's lanes are all due at its start, and the event source grows only while messages
 * wait; between slots it may have scaled back (when, AWS does not say). So each slot's
 * messages are delivered along the planned ramp: from the slot's last message (due - lead)
 * backwards, each batch 60 / PLANNED_RAMP_PER_MINUTE s before the next, all of them
 * RAMP_MARGIN_MS earlier still, so that messages wait while the source grows. A slot of at most
 * 5 batches needs no ramp. Messages picked up early wait in their invocation (billed): the
 * price of not being late after the source scaled back, which an idle spell guarantees, or
 * grew slower than its documented best.
 */
export function rampLeads(duesMs: ArrayLike<number>, slotOf: ArrayLike<number>, o: RampOptions): Float64Array {
  const leads = new Float64Array(duesMs.length).fill(o.leadMs);
  const batch = Math.max(1, o.batchSize);
  const spacingMs = 60_000 / PLANNED_RAMP_PER_MINUTE / batch;
  for (let end = duesMs.length; end > 0; ) {
    let first = end - 1;
    while (first > 0 && slotOf[first - 1] === slotOf[end - 1]) first--;
    if (end - first > EVENT_SOURCE_SCALING.initialBatches * batch) {
      let next = Infinity;
      for (let k = end - 1; k >= first; k--) {
        const at = Math.min((duesMs[k] as number) - o.leadMs, next - spacingMs);
        next = at;
        leads[k] = Math.max(o.leadMs, Math.min(o.maxLeadMs, Math.ceil((duesMs[k] as number) - at + RAMP_MARGIN_MS)));
      }
    }
    end = first;
  }
  return leads;
}

/** A received message is still early (needs another hop) when a delay of >= 1 s would still be due. */
export function stillEarly(firstDueNs: bigint, nowNs: bigint, leadMs: number): boolean {
  return deliveryDelay(firstDueNs, nowNs, leadMs).delaySeconds >= 1;
}

/** Hops a message needs to reach a due time `msAhead` away (1 = a single send). */
export function hopsFor(msAhead: number, leadMs: number): number {
  const wantS = Math.max(0, (msAhead - leadMs) / 1000);
  return Math.max(1, Math.ceil(wantS / MAX_SQS_DELAY_SECONDS));
}

const CHUNK_BYTES = 64 * 1024;

/**
 * SQS requests one captured request costs, amortised, as SQS bills them (every 64 KB chunk of
 * a payload is a request; batches of up to 10 messages share a request):
 * per shard and hop, one send and one receive per 64 KB chunk of the message, and one tenth
 * of a delete (the event source deletes in batches of 10). The fire loop's results go to S3,
 * not SQS. The event source's empty polls while idle are not counted (they do not scale
 * with traffic).
 */
export function sqsRequestsPerCapturedRequest(args: {
  requestsPerShard: number;
  bytesPerRequest: number;
  msAhead: number;
  leadMs: number;
}): number {
  const shardBytes = args.requestsPerShard * args.bytesPerRequest;
  const chunks = Math.max(1, Math.ceil(shardBytes / CHUNK_BYTES));
  const hops = hopsFor(args.msAhead, args.leadMs);
  const perShard = hops * (chunks + chunks + 0.1);
  return perShard / args.requestsPerShard;
}
