/**
 * One timer for every pending write of a mock instead of one per token: a min-heap of due
 * times, a single setTimeout armed for the earliest and, in precise mode, a single wait over
 * the last stretch, in turns of the event loop (setImmediate) with a short nap in each (at most
 * NAP_SLICE_MS, up to the due time), as the replay clock waits (system-clock.ts). Thousands of
 * streams then cost one timer, not thousands of timers and spin loops competing for the same
 * core; and the last stretch costs a wake-up per slice, not a core spinning through it (a pure
 * setImmediate spin held one for 1.5 ms of every inter-token gap, 30 % of a core at 5 ms
 * apart: bench/RESULTS.md). A socket read waits at most one slice.
 */
import { nap, NAP_SLICE_MS } from '../adapters/system-clock';
import { MinHeap } from './min-heap';

export class WriteScheduler {
  private readonly pending = new MinHeap<() => void>();
  private timer: NodeJS.Timeout | null = null;
  private timerDue = Infinity;
  private spinning = false;
  private stopped = false;

  constructor(private readonly spinWindowMs: number) {}

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
    this.spinning = false;
    const now = performance.now();
    while (this.pending.size > 0 && this.pending.peekKey()! <= now) this.pending.pop()!();
    this.arm();
  };

  /** A turn of the spin: a nap toward the earliest due time (I/O ran before this turn), then what is due. */
  private readonly spinTurn = (): void => {
    if (this.pending.size > 0) nap(Math.min(this.pending.peekKey()! - performance.now(), NAP_SLICE_MS));
    this.run();
  };

  private arm(): void {
    if (this.stopped || this.spinning || this.pending.size === 0) return;
    const next = this.pending.peekKey()!;
    const waitMs = next - performance.now() - this.spinWindowMs;
    if (waitMs <= 0 && this.spinWindowMs > 0) {
      // Inside the window: a nap per turn of the event loop until the due time.
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.timerDue = Infinity;
      this.spinning = true;
      setImmediate(this.spinTurn);
      return;
    }
    if (this.timer && this.timerDue <= next) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = next;
    this.timer = setTimeout(this.run, Math.max(0, waitMs));
  }
}
