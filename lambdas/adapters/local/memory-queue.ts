import type { MessageQueue } from '../../ports';

export interface QueuedMessage {
  id: string;
  body: string;
  delaySeconds: number;
  /** Clock reading (ns) when it was sent, so a test can deliver it when its delay is over. */
  sentNs: bigint;
}

/** In-memory delay queue: records what was sent; tests take messages out when they are due. */
export class MemoryQueue implements MessageQueue {
  readonly messages: QueuedMessage[] = [];

  constructor(private readonly now: () => bigint) {}

  async sendBatch(entries: { id: string; body: string; delaySeconds: number }[]): Promise<{ failedIds: string[] }> {
    if (entries.length > 10) throw new Error(`SendMessageBatch takes at most 10 entries (got ${entries.length})`);
    for (const e of entries) {
      if (!Number.isInteger(e.delaySeconds) || e.delaySeconds < 0 || e.delaySeconds > 900) throw new Error(`DelaySeconds must be 0-900 (got ${e.delaySeconds})`);
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
