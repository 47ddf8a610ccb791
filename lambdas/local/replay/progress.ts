/**
 * The replay's progress bar on a terminal; nothing otherwise (logs stay clean in CI). The line
 * fits the terminal's width (cli-progress passes it to the format: the stream's columns, 80
 * when unknown): cli-progress's own format has a fixed 40-column bar and a line that wraps
 * past the width, so the line is laid out here, the bar taking what the text leaves.
 */
import { SingleBar, type Options, type Params } from 'cli-progress';
import type { FireOutcome } from '../../core/types';

/** What the line shows besides the bar. */
export interface ProgressCounts {
  done: number;
  total: number;
  failed: number;
  dropped: number;
  /** Seconds left, as cli-progress estimates them; null or not finite: unknown. */
  etaSeconds: number | null;
}

/** A bar narrower than this says too little: the line goes without it. */
const MIN_BAR = 5;

function etaText(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return '--';
  const s = Math.round(seconds);
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.round((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/**
 * The progress line within `width` columns (one left free: a character in the last column
 * makes some terminals wrap). The fullest layout that leaves the bar MIN_BAR columns; at the
 * narrowest, the counts alone, cut to the width.
 */
export function progressLine(width: number, c: ProgressCounts): string {
  const room = Math.max(1, Math.floor(width) - 1);
  const count = `${c.done}/${c.total}`;
  const eta = etaText(c.etaSeconds);
  const layouts: [prefix: string, tail: string][] = [
    ['replay |', `| ${count} requests | ${c.failed} failed | ${c.dropped} dropped | ETA ${eta}`],
    ['replay |', `| ${count} | ${c.failed} failed | ${c.dropped} dropped | ETA ${eta}`],
    ['|', `| ${count} | ${c.failed} failed | ${c.dropped} dropped`],
    ['|', `| ${count} | ${c.failed} fail | ${c.dropped} drop`],
  ];
  const progress = c.total > 0 ? Math.min(1, c.done / c.total) : 0;
  for (const [prefix, tail] of layouts) {
    const bar = room - prefix.length - tail.length;
    if (bar < MIN_BAR) continue;
    const complete = Math.round(progress * bar);
    return `${prefix}${'='.repeat(complete)}${'-'.repeat(bar - complete)}${tail}`;
  }
  return `${count} ${c.failed} fail ${c.dropped} drop`.slice(0, room);
}

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
      format: (_options: Options, params: Params, payload: { errors?: number; dropped?: number }) =>
        progressLine(params.maxWidth, {
          done: params.value,
          total: params.total,
          failed: payload.errors ?? 0,
          dropped: payload.dropped ?? 0,
          // cli-progress's estimate is 'NULL' or 'INF' (strings) until it has one.
          etaSeconds: typeof params.eta === 'number' ? params.eta : null,
        }),
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
