/**
 * How many batches an SQS event source mapping may have in flight at a time, over time, in
 * standard and provisioned mode, and its idle polling.
 *
 * The rules, each with its source (DOCUMENTED, ASSUMED or MEASURED):
 * docs/simulator-model.md#sqs-event-sources-batches-in-flight.
 */
import type { AwsModelSettings } from '../settings';
import { SECONDS_PER_MONTH } from './prices';

export interface EventSourceConfig {
  mode: 'standard' | 'provisioned';
  /** MaximumConcurrency (standard mode); null: not set. */
  maxConcurrency: number | null;
  minPollers: number;
  maxPollers: number;
  esm: AwsModelSettings['esm'];
  provisioned: AwsModelSettings['provisioned'];
}

export class EventSourceScaler {
  /** Batches it may have in flight (fractional while ramping: the whole part counts). */
  private level: number;
  private lastAt = 0;
  private waiting = false;
  private idleSince = 0;
  private bandwidthFreeAt = 0;
  /** Provisioned mode: poller-seconds used (the EPU bill), and the peak. */
  pollerSeconds = 0;
  peakPollers = 0;

  constructor(
    private readonly c: EventSourceConfig,
    /** Scaled up already (a run shortly after another): starts at its ceiling. */
    warm: boolean,
  ) {
    this.level = warm ? this.ceiling : this.floor;
    this.peakPollers = this.pollers;
  }

  /** The most batches it may have in flight. */
  get ceiling(): number {
    if (this.c.mode === 'provisioned') return this.c.maxPollers * this.c.provisioned.invokesPerPoller;
    return Math.min(this.c.maxConcurrency ?? this.c.esm.maxConcurrency, this.c.esm.maxConcurrency);
  }

  get floor(): number {
    if (this.c.mode === 'provisioned') return this.c.minPollers * this.c.provisioned.invokesPerPoller;
    return Math.min(this.c.esm.initialConcurrency, this.ceiling);
  }

  /** Batches it may have in flight now. */
  get concurrency(): number {
    return Math.floor(this.level + 1e-9);
  }

  get pollers(): number {
    return this.c.mode === 'provisioned' ? Math.ceil(this.level / this.c.provisioned.invokesPerPoller - 1e-9) : 0;
  }

  private get growthPerMs(): number {
    return (this.c.mode === 'provisioned' ? this.c.provisioned.growthPerMinute : this.c.esm.growthPerMinute) / 60_000;
  }

  /**
   * Brings the scale to `now`: it grew at the documented rate for as long as messages were
   * waiting (as of the last call), and steps down after a quiet spell. `messagesWaiting` is
   * whether messages wait now; `inFlight` the batches being processed.
   */
  advance(now: number, messagesWaiting: boolean, inFlight: number): void {
    // Provisioned pollers also scale on throughput: batches queued behind their bandwidth wait too.
    const waiting = messagesWaiting || this.bandwidthFreeAt > now;
    const dt = Math.max(0, now - this.lastAt);
    if (this.c.mode === 'provisioned') this.pollerSeconds += (this.pollers * dt) / 1000;
    if (this.waiting) this.level = Math.min(this.ceiling, this.level + dt * this.growthPerMs);
    if (waiting || this.waiting) this.idleSince = now;
    else if (now - this.idleSince >= this.c.esm.scaleDownAfterS * 1000)
      this.level = Math.max(this.floor, Math.min(this.level, inFlight));
    this.waiting = waiting;
    this.lastAt = now;
    this.peakPollers = Math.max(this.peakPollers, this.pollers);
  }

  /** When a batch received at `now` reaches the function's invoke: pickup, and in provisioned mode the pollers' bandwidth. */
  handOver(now: number, bytes: number): number {
    const pickedUp = now + this.c.esm.pickupMs;
    if (this.c.mode !== 'provisioned') return pickedUp;
    const bandwidthPerMs = (this.pollers * this.c.provisioned.bytesPerPollerPerS) / 1000;
    this.bandwidthFreeAt = Math.max(this.bandwidthFreeAt, now) + bytes / bandwidthPerMs;
    return Math.max(pickedUp, this.bandwidthFreeAt);
  }

  /** ReceiveMessage calls a month while idle (billed as SQS requests). */
  idlePollsPerMonth(): number {
    const pollers =
      this.c.mode === 'provisioned'
        ? this.c.minPollers
        : this.c.maxConcurrency === null
          ? this.c.esm.idlePollersWithoutMax
          : this.c.esm.idlePollersWithMax;
    return (pollers * SECONDS_PER_MONTH) / this.c.esm.idleLongPollS;
  }
}
