/**
 * One timer for every pending write of a mock instead of one per token: a min-heap of due
 * times, a single setTimeout armed for the earliest and, in precise mode, a single
 * setImmediate spin over the last stretch. Thousands of streams then cost one timer, not
 * thousands of timers and spin loops competing for the same core.
 */
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

  private arm(): void {
    if (this.stopped || this.spinning || this.pending.size === 0) return;
    const next = this.pending.peekKey()!;
    const waitMs = next - performance.now() - this.spinWindowMs;
    if (waitMs <= 0 && this.spinWindowMs > 0) {
      // Inside the window: yield to I/O once per turn until the due time.
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.timerDue = Infinity;
      this.spinning = true;
      setImmediate(this.run);
      return;
    }
    if (this.timer && this.timerDue <= next) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = next;
    this.timer = setTimeout(this.run, Math.max(0, waitMs));
  }
}
