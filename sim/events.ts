/**
 * The simulator's clock and agenda: events in time order (ties in the order they were
 * scheduled, so a run is deterministic), time in ms since the capture file landed.
 */
interface Entry {
  at: number;
  seq: number;
  run: () => void;
}

export class Agenda {
  /**
   * @param maxEvents events a run may take: past them it is stopped with an error rather than
   * left to run on (a run that never ends is a bug, not a result).
   */
  constructor(private readonly maxEvents = Infinity) {}

  private heap: Entry[] = [];
  private seq = 0;
  /** The time of the event being run. */
  now = 0;
  /** Events run so far. */
  ran = 0;

  /** Runs `run` at `at` (never before now: a rule that computes a past time means now). */
  at(at: number, run: () => void): void {
    if (!Number.isFinite(at)) throw new Error(`event scheduled at a non-finite time (${at})`);
    this.push({ at: Math.max(at, this.now), seq: this.seq++, run });
  }

  after(ms: number, run: () => void): void {
    this.at(this.now + ms, run);
  }

  get pending(): number {
    return this.heap.length;
  }

  /** Runs events until none is left or the next is after `until`. */
  runUntil(until = Infinity): void {
    while (this.heap.length > 0 && (this.heap[0] as Entry).at <= until) {
      const e = this.pop();
      this.now = e.at;
      if (++this.ran > this.maxEvents) {
        throw new Error(
          `the simulation had not ended after ${this.maxEvents.toLocaleString('en-US')} events ` +
            `(${Math.round(this.now / 1000)} s of simulated time): stopped, a run the simulator cannot finish ` +
            `(a bug: please report it with the command)`,
        );
      }
      e.run();
    }
  }

  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i] as Entry, h[p] as Entry)) break;
      [h[i], h[p]] = [h[p] as Entry, h[i] as Entry];
      i = p;
    }
  }

  private pop(): Entry {
    const h = this.heap;
    const top = h[0] as Entry;
    const last = h.pop() as Entry;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l] as Entry, h[m] as Entry)) m = l;
        if (r < h.length && this.less(h[r] as Entry, h[m] as Entry)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m] as Entry, h[i] as Entry];
        i = m;
      }
    }
    return top;
  }
}
