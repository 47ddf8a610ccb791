/**
 * A counting semaphore: at most `capacity` holders at once, waiters served in arrival order.
 * The fire loop holds one permit per request in flight; a semaphore shared by every shard
 * an invocation fires keeps the connections to a target below Lambda's file-descriptor limit.
 */
export class Semaphore {
  private held = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(readonly capacity: number) {
    if (!(Number.isInteger(capacity) && capacity > 0))
      throw new Error(`semaphore capacity must be a whole number > 0 (got ${capacity})`);
  }

  get inUse(): number {
    return this.held;
  }

  /** Resolves once a permit is held. */
  acquire(): Promise<void> {
    if (this.held < this.capacity) {
      this.held++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next)
      next(); // the permit passes straight to the next waiter
    else if (this.held > 0) this.held--;
  }
}
