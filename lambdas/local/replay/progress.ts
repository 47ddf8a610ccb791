/** The replay's progress bar on a terminal; nothing otherwise (logs stay clean in CI). */
import { SingleBar } from 'cli-progress';
import type { FireOutcome } from '../../core/types';

export class Progress {
  private bar: SingleBar | null = null;
  private done = 0;
  private errors = 0;
  private dropped = 0;

  constructor(
    private readonly enabled: boolean,
    private readonly stream: NodeJS.WritableStream,
  ) {}

  start(total: number): void {
    if (!this.enabled || this.bar) return;
    this.bar = new SingleBar({
      stream: this.stream as NodeJS.WriteStream,
      format: 'replay |{bar}| {value}/{total} requests | {errors} failed | {dropped} dropped | ETA {eta_formatted}',
      hideCursor: true,
      etaBuffer: 50,
    });
    this.bar.start(total, 0, { errors: 0, dropped: 0 });
  }

  tick(outcome: FireOutcome): void {
    this.done++;
    if (outcome.dropReason) this.dropped++;
    else if (outcome.result?.error) this.errors++;
    this.bar?.update(this.done, { errors: this.errors, dropped: this.dropped });
  }

  stop(): void {
    this.bar?.stop();
    this.bar = null;
  }
}
