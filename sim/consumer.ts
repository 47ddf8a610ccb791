/**
 * One queue, its event source mapping and its function: batches are received while the
 * event source has room (sim/aws/event-source.ts), handed to Lambda (sim/aws/lambda.ts), which
 * runs the handler or throttles. A batch is what is visible when a poller looks, up to the
 * batch size and Lambda's 6 MB payload; with a batching window the event source waits up to
 * the window for a full batch ("Lambda invokes your function when one of the following three
 * criteria is met": the window, the batch size, 6 MB:
 * https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventsourcemapping.html#invocation-eventsourcemapping-batching).
 * A throttled batch is not deleted: it is received again once
 * its visibility timeout has passed (the reason AWS asks for a visibility timeout of six times
 * the function timeout, "to retry if your function is throttled":
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html). An invocation that
 * outlives the function timeout is stopped there: what it would have done later does not
 * happen, and its messages come back after the visibility timeout
 * (https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html).
 */
import type { EventSourceScaler } from './aws/event-source';
import type { FunctionModel } from './aws/lambda';
import type { SimMessage, SqsQueue } from './aws/sqs';
import type { Agenda } from './events';
import type { HandlerRun } from './fire';

/** Lambda's synchronous invocation payload: a batch stops short of it. https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html */
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
  /** When the batching window opened (a message waiting for a fuller batch), or null. */
  private windowOpenedAt: number | null = null;
  readonly stats: ConsumerStats = { throttledInvocations: 0, throttledMessages: 0, timeouts: 0, peakBatchesInFlight: 0 };

  constructor(
    private readonly agenda: Agenda,
    readonly queue: SqsQueue<P>,
    readonly scaler: EventSourceScaler,
    readonly fn: FunctionModel,
    private readonly o: { batchSize: number; batchingWindowMs: number; timeoutS: number; tickMs: number },
    private readonly handle: (records: P[], startMs: number) => HandlerRun,
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
    this.scaler.advance(now, this.queue.visibleCount > 0, this.inFlight);
    while (this.inFlight < this.scaler.concurrency && this.queue.visibleCount > 0) {
      if (this.waitForFullerBatch(now)) break;
      const batch = this.queue.receive(now, this.o.batchSize, INVOKE_PAYLOAD_BYTES);
      this.windowOpenedAt = null;
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

  /** With a batching window: whether to wait (the window is open and the batch not full). */
  private waitForFullerBatch(now: number): boolean {
    if (this.o.batchingWindowMs <= 0 || this.queue.visibleCount >= this.o.batchSize) return false;
    if (this.windowOpenedAt === null) {
      this.windowOpenedAt = now;
      this.agenda.at(now + this.o.batchingWindowMs, () => this.dispatch());
    }
    return now < this.windowOpenedAt + this.o.batchingWindowMs;
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
    const run = this.handle(
      batch.map((m) => m.payload),
      begin,
    );
    const timeoutAt = begin + this.o.timeoutS * 1000;
    const killed = run.endMs > timeoutAt;
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
