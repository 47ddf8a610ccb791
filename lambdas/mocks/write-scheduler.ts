/**
 * One timer for every pending write of a mock instead of one per token: a min-heap of due
 * times, a single setTimeout armed for the earliest and, in precise mode, a single wait over
 * the last stretch, in turns of the event loop (setImmediate) with a short nap in each (at most
 * NAP_SLICE_MS, up to the due time), as the replay clock waits (system-clock.ts). Thousands of
 * streams then cost one timer, and the last stretch a wake-up per slice rather than a core
 * (bench/RESULTS.md, "Mock server under load"). A socket read waits at most one slice.
 */
import { nap, NAP_SLICE_MS } from '../adapters/system-clock';
import { MinHeap } from '../core/min-heap';

export class WriteScheduler {
  private readonly pending = new MinHeap<() => void>();
  private timer: NodeJS.Timeout | null = null;
  private timerDue = Infinity;
  private waiting = false;
  private stopped = false;

  /** `windowMs`: the stretch before each due time waited out in naps (0: the timer alone). */
  constructor(private readonly windowMs: number) {}

  /** Runs `task` once performance.now() reaches `dueMs` (never before). */
  at(dueMs: number, task: () => void): void {
    if (this.stopped) return;
    const earliest = this.pending.size === 0 || dueMs < this.pending.peekKey()!;
    this.pending.push(dueMs, task);
    if (earliest) this.arm();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.pending.clear();
  }

  private readonly run = (): void => {
    this.timer = null;
    this.timerDue = Infinity;
    this.waiting = false;
    const now = performance.now();
    while (this.pending.size > 0 && this.pending.peekKey()! <= now) this.pending.pop()!();
    this.arm();
  };

  /** A turn of the wait: a nap toward the earliest due time (I/O ran before this turn), then what is due. */
  private readonly napTurn = (): void => {
    if (this.pending.size > 0) nap(Math.min(this.pending.peekKey()! - performance.now(), NAP_SLICE_MS));
    this.run();
  };

  private arm(): void {
    if (this.stopped || this.waiting || this.pending.size === 0) return;
    const next = this.pending.peekKey()!;
    const waitMs = next - performance.now() - this.windowMs;
    if (waitMs <= 0 && this.windowMs > 0) {
      // Inside the window: a nap per turn of the event loop until the due time.
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.timerDue = Infinity;
      this.waiting = true;
      setImmediate(this.napTurn);
      return;
    }
    if (this.timer && this.timerDue <= next) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = next;
    this.timer = setTimeout(this.run, Math.max(0, waitMs));
  }
}
