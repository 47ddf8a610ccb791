/**
 * A standard SQS queue as the simulator needs it: delayed delivery, receive in batches,
 * redelivery after the visibility timeout, the redrive to a dead-letter queue, and the bill.
 *
 * The rules, each with its source (DOCUMENTED, ASSUMED or MEASURED):
 * docs/simulator-model.md#sqs-queues.
 */
import { sqsBilledRequests } from '../../test/support/aws-meter';
import type { Agenda } from '../events';
import type { Rng } from '../random';

export interface SimMessage<P = unknown> {
  id: number;
  bytes: number;
  payload: P;
  receiveCount: number;
  /** When it was last received (the visibility timeout counts from there). */
  receivedAt: number;
}

export interface SqsQueueOptions {
  name: string;
  visibilityTimeoutS: number;
  maxReceiveCount: number;
  delayJitterMaxMs: number;
}

export interface SqsBill {
  /** Billed requests: sends, receives that returned messages, deletes (64 KB chunks each). */
  requests: number;
  sendCalls: number;
  receiveCalls: number;
  deleteCalls: number;
  messagesSent: number;
  payloadBytes: number;
  deadLettered: number;
}

export class SqsQueue<P = unknown> {
  private readonly visible: SimMessage<P>[] = [];
  private head = 0;
  private nextId = 0;
  /** Sent and not yet visible (delayed or in flight). */
  private hidden = 0;
  readonly bill: SqsBill = {
    requests: 0,
    sendCalls: 0,
    receiveCalls: 0,
    deleteCalls: 0,
    messagesSent: 0,
    payloadBytes: 0,
    deadLettered: 0,
  };
  /** Called whenever a message becomes visible. */
  onVisible: () => void = () => undefined;
  /** Called with each message moved to the dead-letter queue. */
  onDeadLetter: (m: SimMessage<P>) => void = () => undefined;

  constructor(
    readonly options: SqsQueueOptions,
    private readonly agenda: Agenda,
    private readonly jitter: Rng,
  ) {}

  get visibleCount(): number {
    return this.visible.length - this.head;
  }

  /** The size of the message a receive would return first (0: none visible). */
  get nextVisibleBytes(): number {
    return this.visible[this.head]?.bytes ?? 0;
  }

  /** Messages sent and not deleted or dead-lettered. */
  get outstanding(): number {
    return this.visibleCount + this.hidden;
  }

  /** One SendMessageBatch (or SendMessage) of these messages, each with its delay, at `at`. */
  sendBatch(at: number, entries: readonly { bytes: number; payload: P; delaySeconds: number }[]): void {
    const bytes = entries.reduce((n, e) => n + e.bytes, 0);
    this.bill.sendCalls++;
    this.bill.requests += sqsBilledRequests(bytes);
    this.bill.payloadBytes += bytes;
    this.bill.messagesSent += entries.length;
    for (const e of entries) {
      const m: SimMessage<P> = {
        id: this.nextId++,
        bytes: e.bytes,
        payload: e.payload,
        receiveCount: 0,
        receivedAt: -1,
      };
      this.hidden++;
      const jitterMs = this.options.delayJitterMaxMs > 0 ? this.jitter.uniform() * this.options.delayJitterMaxMs : 0;
      this.agenda.at(at + e.delaySeconds * 1000 + jitterMs, () => this.show(m));
    }
  }

  /**
   * The messages visible at `at`, up to `max` and `maxBytes` together (at least one), as the
   * event source's receives return them (none: nothing billed here; idle polls are counted apart).
   */
  receive(at: number, max: number, maxBytes = Infinity): SimMessage<P>[] {
    const out: SimMessage<P>[] = [];
    let bytes = 0;
    while (out.length < max && this.head < this.visible.length) {
      const next = this.visible[this.head] as SimMessage<P>;
      if (out.length > 0 && bytes + next.bytes > maxBytes) break;
      const m = this.visible[this.head++] as SimMessage<P>;
      if (m.receiveCount >= this.options.maxReceiveCount) {
        this.bill.deadLettered++;
        this.onDeadLetter(m);
        continue;
      }
      m.receiveCount++;
      m.receivedAt = at;
      this.hidden++;
      bytes += m.bytes;
      out.push(m);
    }
    if (this.head > 4096 && this.head * 2 > this.visible.length) {
      this.visible.splice(0, this.head);
      this.head = 0;
    }
    if (out.length > 0) {
      this.bill.receiveCalls++;
      this.bill.requests += sqsBilledRequests(bytes);
      this.bill.payloadBytes += bytes;
    }
    return out;
  }

  /** DeleteMessageBatch of processed messages (one request: no payload). */
  deleteBatch(messages: readonly SimMessage<P>[]): void {
    if (messages.length === 0) return;
    this.hidden -= messages.length;
    this.bill.deleteCalls++;
    this.bill.requests += 1;
  }

  /** Not deleted: visible again once the visibility timeout since their receive has passed. */
  releaseAfterVisibilityTimeout(messages: readonly SimMessage<P>[]): void {
    for (const m of messages) this.agenda.at(m.receivedAt + this.options.visibilityTimeoutS * 1000, () => this.show(m));
  }

  /** A message put on the queue by another service (an S3 notification): visible now, not billed here. */
  inject(payload: P, bytes: number): void {
    this.hidden++;
    this.show({ id: this.nextId++, bytes, payload, receiveCount: 0, receivedAt: -1 });
  }

  private show(m: SimMessage<P>): void {
    this.hidden--;
    this.visible.push(m);
    this.onVisible();
  }
}
