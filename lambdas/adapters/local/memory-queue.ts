import type { MessageQueue } from '../../ports';

/** SQS: 1 MiB per message and per SendMessageBatch call. */
const MAX_BYTES = 1_048_576;

export interface QueuedMessage {
  id: string;
  body: string;
  delaySeconds: number;
  /** Clock reading (ns) when it was sent, so a test can deliver it when its delay is over. */
  sentNs: bigint;
}

/**
 * In-memory delay queue: records what was sent; tests take messages out when they are due.
 * It refuses what SQS refuses: more than 10 entries, a message or a whole batch over 1 MiB
 * (`BatchRequestTooLong`), a delay outside 0-900 s.
 */
export class MemoryQueue implements MessageQueue {
  readonly messages: QueuedMessage[] = [];

  constructor(private readonly now: () => bigint) {}

  async sendBatch(entries: { id: string; body: string; delaySeconds: number }[]): Promise<{ failedIds: string[] }> {
    if (entries.length > 10) throw new Error(`SendMessageBatch takes at most 10 entries (got ${entries.length})`);
    const bytes = entries.map((e) => Buffer.byteLength(e.body, 'utf8'));
    const total = bytes.reduce((a, b) => a + b, 0);
    if (bytes.some((b) => b > MAX_BYTES)) throw new Error(`MessageTooLong: a message is over ${MAX_BYTES} bytes`);
    if (total > MAX_BYTES) throw new Error(`BatchRequestTooLong: the batch is ${total} bytes, over ${MAX_BYTES}`);
    for (const e of entries) {
      if (!Number.isInteger(e.delaySeconds) || e.delaySeconds < 0 || e.delaySeconds > 900)
        throw new Error(`DelaySeconds must be 0-900 (got ${e.delaySeconds})`);
      this.messages.push({ ...e, sentNs: this.now() });
    }
    return { failedIds: [] };
  }

  /** Removes and returns the messages whose delay is over at `nowNs`. */
  takeDue(nowNs: bigint): QueuedMessage[] {
    const due = this.messages.filter((m) => m.sentNs + BigInt(m.delaySeconds) * 1_000_000_000n <= nowNs);
    for (const m of due) this.messages.splice(this.messages.indexOf(m), 1);
    return due;
  }

  /** The earliest time a queued message becomes visible, or null. */
  nextDueNs(): bigint | null {
    let next: bigint | null = null;
    for (const m of this.messages) {
      const at = m.sentNs + BigInt(m.delaySeconds) * 1_000_000_000n;
      if (next === null || at < next) next = at;
    }
    return next;
  }
}
