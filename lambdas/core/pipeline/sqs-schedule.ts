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
