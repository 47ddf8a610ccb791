/**
 * One queue, its event source mapping and its function: batches are received while the event
 * source has room (sim/aws/event-source.ts) and handed to Lambda (sim/aws/lambda.ts), which runs
 * the handler or throttles; batching windows, throttled batches and timeouts as AWS documents them.
 *
 * The rules, each with its source (DOCUMENTED, ASSUMED or MEASURED):
 * docs/simulator-model.md#a-queue-its-event-source-and-its-function.
 */
import type { EventSourceScaler } from './aws/event-source';
import type { FunctionModel } from './aws/lambda';
import type { SimMessage, SqsQueue } from './aws/sqs';
import type { Agenda } from './events';
import type { HandlerRun } from './fire';

/**
 * Lambda's synchronous invocation payload: a batch stops short of it.
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
 */
const INVOKE_PAYLOAD_BYTES = 6 * 1024 * 1024;

export interface ConsumerStats {
  throttledInvocations: number;
  throttledMessages: number;
  timeouts: number;
  peakBatchesInFlight: number;
}

export class Consumer<P> {
  private inFlight = 0;
  private tickPending = false;
  private dispatchPending = false;
  /** With a batching window: the batch being gathered, its payload, and when its window closes. */
  private gathered: SimMessage<P>[] = [];
  private gatheredBytes = 0;
  private windowClosesAt = Infinity;
  /** With a batching window: a receive is outstanding (it returns into `gathered`). */
  private receiving = false;
  readonly stats: ConsumerStats = {
    throttledInvocations: 0,
    throttledMessages: 0,
    timeouts: 0,
    peakBatchesInFlight: 0,
  };

  constructor(
    private readonly agenda: Agenda,
    readonly queue: SqsQueue<P>,
    readonly scaler: EventSourceScaler,
    readonly fn: FunctionModel,
    private readonly o: {
      batchSize: number;
      batchingWindowMs: number;
      timeoutS: number;
      tickMs: number;
      receiveRoundTripMs?: number;
    },
    /** The handler on a batch from `startMs`; `timeoutAtMs` is when Lambda stops it (what it would do later does not happen). */
    private readonly handle: (records: P[], startMs: number, timeoutAtMs: number) => HandlerRun,
  ) {
    // Messages that become visible at the same moment (sent in one batch with one delay) are
    // there together when the waiting poller's receive returns: look once they all are.
    queue.onVisible = () => {
      if (this.dispatchPending) return;
      this.dispatchPending = true;
      this.agenda.at(this.agenda.now, () => {
        this.dispatchPending = false;
        this.dispatch();
      });
    };
  }

  /** Receives what the event source has room for. */
  dispatch(): void {
    const now = this.agenda.now;
    this.scaler.advance(now, this.queue.visibleCount > 0 || this.gathered.length > 0, this.inFlight);
    while (this.inFlight < this.scaler.concurrency) {
      const batch =
        this.o.batchingWindowMs > 0
          ? this.gather(now)
          : this.queue.visibleCount > 0
            ? this.queue.receive(now, this.o.batchSize, INVOKE_PAYLOAD_BYTES)
            : null;
      if (batch === null) break;
      if (batch.length === 0) continue;
      this.inFlight++;
      this.stats.peakBatchesInFlight = Math.max(this.stats.peakBatchesInFlight, this.inFlight);
      const bytes = batch.reduce((n, m) => n + m.bytes, 0);
      this.agenda.at(this.scaler.handOver(now, bytes), () => this.invoke(batch));
    }
    // While messages wait, the event source keeps scaling: look again as it grows.
    if (this.queue.visibleCount > 0 && !this.tickPending) {
      this.tickPending = true;
      this.agenda.after(this.o.tickMs, () => {
        this.tickPending = false;
        this.dispatch();
      });
    }
  }

  /**
   * With a batching window: keeps one receive outstanding while the batch has room and
   * messages are visible (what becomes visible meanwhile is returned by it), and returns the
   * batch once one of Lambda's three criteria is met and no receive is outstanding, or null
   * while it waits.
   */
  private gather(now: number): SimMessage<P>[] | null {
    if (this.receiving) return null;
    const full = this.gathered.length >= this.o.batchSize || (this.queue.visibleCount > 0 && !this.nextFits());
    if (this.gathered.length > 0 && (full || now >= this.windowClosesAt)) {
      const batch = this.gathered;
      this.gathered = [];
      this.gatheredBytes = 0;
      this.windowClosesAt = Infinity;
      return batch;
    }
    if (this.gathered.length < this.o.batchSize && this.nextFits()) this.startReceive(now);
    return null;
  }

  /** Whether a message is visible and fits the batch being gathered (a receive returns at least one, whatever its size). */
  private nextFits(): boolean {
    return (
      this.queue.visibleCount > 0 &&
      (this.gathered.length === 0 || this.queue.nextVisibleBytes <= INVOKE_PAYLOAD_BYTES - this.gatheredBytes)
    );
  }

  /** A receive issued at `now` (messages are visible): it returns a round trip later with what is visible then. */
  private startReceive(now: number): void {
    this.receiving = true;
    this.agenda.at(now + (this.o.receiveRoundTripMs ?? 0), () => {
      this.receiving = false;
      const at = this.agenda.now;
      const more = this.nextFits()
        ? this.queue.receive(at, this.o.batchSize - this.gathered.length, INVOKE_PAYLOAD_BYTES - this.gatheredBytes)
        : [];
      if (more.length > 0 && this.gathered.length === 0) {
        this.windowClosesAt = at + this.o.batchingWindowMs;
        this.agenda.at(this.windowClosesAt, () => this.dispatch());
      }
      this.gathered.push(...more);
      this.gatheredBytes += more.reduce((n, m) => n + m.bytes, 0);
      this.dispatch();
    });
  }

  private invoke(batch: SimMessage<P>[]): void {
    const now = this.agenda.now;
    const started = this.fn.start(now);
    if (!started.ok) {
      this.stats.throttledInvocations++;
      this.stats.throttledMessages += batch.length;
      this.inFlight--;
      this.queue.releaseAfterVisibilityTimeout(batch);
      this.dispatch();
      return;
    }
    const begin = started.handlerStartsAt;
    const timeoutAt = begin + this.o.timeoutS * 1000;
    const run = this.handle(
      batch.map((m) => m.payload),
      begin,
      timeoutAt,
    );
    const killed = run.endMs > timeoutAt || run.stopped === true;
    const end = killed ? timeoutAt : run.endMs;
    for (const e of run.effects) if (e.at <= end) this.agenda.at(e.at, e.run);
    this.agenda.at(end, () => {
      this.fn.finish(end, end - begin);
      if (killed) {
        this.stats.timeouts++;
        this.queue.releaseAfterVisibilityTimeout(batch);
      } else this.queue.deleteBatch(batch);
      this.inFlight--;
      this.dispatch();
    });
  }
}
