/**
 * Scheduling on SQS. A shard message must reach a worker `leadMs` before its first due time:
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
  return seconds > MAX_SQS_DELAY_SECONDS ? { delaySeconds: MAX_SQS_DELAY_SECONDS, deferred: true } : { delaySeconds: seconds, deferred: false };
}

/**
 * An SQS event source that has been idle: "Lambda starts processing five batches at a time
 * with five concurrent invocations", and while messages are still available "increases the
 * number of processes that are reading batches by up to 300 more concurrent invokes per
 * minute", up to its maximum concurrency.
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
 */
export const EVENT_SOURCE_SCALING = { initialBatches: 5, addedPerMinute: 300 } as const;

/** Ramp deliveries come this much before the event source can take them, so that messages wait and it keeps scaling. */
export const RAMP_MARGIN_MS = 2000;

export interface RampOptions {
  leadMs: number;
  /** The event source's MaximumConcurrency: batches it runs at once at most. */
  maxConcurrency: number;
  /** Messages per batch (the event source's BatchSize). */
  batchSize: number;
  /** The longest lead a message may get (what the fire function's timeout leaves for waiting). */
  maxLeadMs: number;
}

/**
 * How long before its first due time each message of a run should be delivered, so that an
 * event source scaling up from idle has picked up each one by (due - lead). `duesMs` are the
 * messages' first due times (ms from any origin), ascending; the result is each one's lead.
 *
 * An idle event source takes 5 batches at once and adds 300 a minute only while messages wait.
 * The first `maxConcurrency` batches of the run (the most it will hold at once) are therefore
 * delivered along that ramp: the run's k-th batch when the source can take it, RAMP_MARGIN_MS
 * before (so that the queue is never empty and the source keeps growing), the ramp started
 * early enough (t0) that every one of them is picked up by its due time minus the lead; no
 * message is delivered later than due - lead, nor earlier than the ramp needs. Messages picked
 * up early wait in their invocation (billed): the price of not being late after an idle spell.
 * Later messages, and runs the first five batches cover, keep the plain lead.
 */
export function rampLeads(duesMs: ArrayLike<number>, o: RampOptions): Float64Array {
  const leads = new Float64Array(duesMs.length).fill(o.leadMs);
  const perMs = EVENT_SOURCE_SCALING.addedPerMinute / 60_000;
  const batch = Math.max(1, o.batchSize);
  const ramped = Math.min(duesMs.length, Math.max(1, o.maxConcurrency) * batch);
  const rampAt = (k: number) => Math.max(0, Math.floor(k / batch) + 1 - EVENT_SOURCE_SCALING.initialBatches) / perMs;
  let t0 = Infinity;
  for (let k = 0; k < ramped; k++) if (rampAt(k) > 0) t0 = Math.min(t0, (duesMs[k] as number) - o.leadMs - rampAt(k));
  if (t0 === Infinity) return leads;
  for (let k = 0; k < ramped; k++) {
    const due = duesMs[k] as number;
    const at = rampAt(k) > 0 ? t0 + rampAt(k) - RAMP_MARGIN_MS : t0;
    leads[k] = Math.max(o.leadMs, Math.min(o.maxLeadMs, Math.ceil(due - at)));
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
export function sqsRequestsPerCapturedRequest(args: { requestsPerShard: number; bytesPerRequest: number; msAhead: number; leadMs: number }): number {
  const shardBytes = args.requestsPerShard * args.bytesPerRequest;
  const chunks = Math.max(1, Math.ceil(shardBytes / CHUNK_BYTES));
  const hops = hopsFor(args.msAhead, args.leadMs);
  const perShard = hops * (chunks + chunks + 0.1);
  return perShard / args.requestsPerShard;
}
