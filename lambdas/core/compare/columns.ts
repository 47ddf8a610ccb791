/**
 * Records -> the comparison's columns. One builder for every source: a local run's outcomes,
 * a results folder of ours, or AIPerf's own `profile_export.jsonl`, so a request is
 * identified the same way everywhere.
 *
 * A request's identity is the capture event it replays (`capture_replay.capture_event_id`;
 * for AIPerf's records, which do not carry it, the dataset's `conversation_id` and turn),
 * and in an amplified run its copy index (`capture_copy`: copy 0 is the event itself, copy
 * j > 0 is `<event>~j`), numbered by occurrence (`#0`, `#1`, ...) in schedule order: the
 * same captures replayed twice, by one run or by two, give the same keys, whatever the run
 * ids, and an amplified run's copy 0 pairs with the unamplified run's request.
 */
import { float64Column, uint8Column } from './column-buffer';
import { COMPARED_METRICS, OUTCOME, type ComparedMetricTag, type OutcomeCode, type TargetColumns } from './types';

/** The parts of a `profile_export.jsonl` line the comparison reads (ours and AIPerf's alike). */
export interface RecordLike {
  metadata?: {
    session_num?: number;
    conversation_id?: string | null;
    x_correlation_id?: string | null;
    x_request_id?: string | null;
    turn_index?: number | null;
    request_start_ns?: number | bigint | string;
  };
  metrics?: Record<string, { value: unknown; unit?: string }> | null;
  error?: unknown;
  capture_replay?: {
    capture_event_id?: string;
    capture_copy?: number;
    captured_output_tokens?: number | null;
    scheduled_ns?: number | bigint | string;
  };
}

/** A replayed request's identity: its capture event, and its copy index in an amplified run. */
export function requestIdentity(eventId: string, copy: number | undefined): string {
  return copy === undefined || copy === 0 ? eventId : `${eventId}~${copy}`;
}

/** The capture identity of a record, before occurrence numbering; null when it has none. */
export function recordIdentity(record: RecordLike): string | null {
  const event = record.capture_replay?.capture_event_id;
  if (typeof event === 'string' && event.length > 0) return requestIdentity(event, record.capture_replay?.capture_copy);
  const meta = record.metadata;
  const conversation = meta?.conversation_id ?? meta?.x_correlation_id ?? null;
  if (typeof conversation !== 'string' || conversation.length === 0) return null;
  const turn = meta?.turn_index;
  return typeof turn === 'number' && turn > 0 ? `${conversation}/${turn}` : conversation;
}

/** Older AIPerf releases wrote short tags for these two. */
const TAG_ALIASES: Partial<Record<ComparedMetricTag, string>> = {
  time_to_first_token: 'ttft',
  time_to_second_token: 'ttst',
};

const finite = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : NaN);

export class ColumnsBuilder {
  private keys: string[] = [];
  /** How many of `keys` are numbered already (build() numbers them all, once). */
  private numbered = 0;
  private readonly outcome = uint8Column();
  private readonly errorType: (string | null)[] = [];
  private readonly dropReason: (string | null)[] = [];
  private readonly values = new Map(COMPARED_METRICS.map((m) => [m.tag, float64Column()]));
  private readonly captured = float64Column();
  /** Schedule position of each row: occurrences of one identity are numbered in this order. */
  private readonly order = float64Column();

  constructor(private readonly name: string) {}

  get size(): number {
    return this.keys.length;
  }

  private push(identity: string | null, order: number | undefined): void {
    if (this.numbered > 0) throw new Error(`the columns of ${this.name} are built: no row can be added after`);
    // A record without identity cannot be paired: a key no other run can produce.
    this.keys.push(identity ?? `\u0000unidentified:${this.keys.length}`);
    this.order.push(order ?? this.keys.length);
  }

  /**
   * A fired request (succeeded when `record.error` is null), in any order (`session_num`
   * orders it). Returns null, or why the record was left out: every compared metric is a
   * duration, a count or a rate, so a negative value says the record's clock or its writer
   * is wrong (a baseline mean of -2.15 ms was compared as is), and none of its values can be
   * trusted.
   */
  addRecord(record: RecordLike): string | null {
    const error = record.error;
    const failed = error !== null && error !== undefined;
    const values = COMPARED_METRICS.map(({ tag }) => {
      const alias = TAG_ALIASES[tag];
      const entry = record.metrics?.[tag] ?? (alias === undefined ? undefined : record.metrics?.[alias]);
      return failed ? NaN : finite(entry?.value);
    });
    const negative = values.findIndex((v) => v < 0);
    if (negative >= 0) return `negative ${COMPARED_METRICS[negative]?.tag}`;
    this.push(recordIdentity(record), record.metadata?.session_num);
    this.outcome.push(failed ? OUTCOME.failed : OUTCOME.succeeded);
    this.errorType.push(failed ? errorTypeOf(error) : null);
    this.dropReason.push(null);
    COMPARED_METRICS.forEach(({ tag }, i) => this.values.get(tag)?.push(values[i] as number));
    this.captured.push(finite(record.capture_replay?.captured_output_tokens));
    return null;
  }

  /** A scheduled request that was not fired, with its reason and its position in the schedule. */
  addDropped(identity: string | null, reason: string, capturedOutputTokens: number | null, order?: number): void {
    this.push(identity, order);
    this.outcome.push(OUTCOME.dropped);
    this.errorType.push(null);
    this.dropReason.push(reason);
    for (const { tag } of COMPARED_METRICS) this.values.get(tag)?.push(NaN);
    this.captured.push(finite(capturedOutputTokens));
  }

  /**
   * Keys numbered by occurrence (`id#0`, `id#1`, ...) in schedule order. Done once: the
   * numbered keys replace the identities (a million strings fewer held).
   */
  private numberedKeys(): string[] {
    if (this.numbered === this.keys.length) return this.keys;
    const order = this.order.view();
    let sorted = true;
    for (let i = 1; i < order.length && sorted; i++) sorted = (order[i - 1] as number) <= (order[i] as number);
    // Records are mostly written in schedule order: no sort of a million indices then.
    const rows = sorted
      ? this.keys.keys()
      : Int32Array.from(this.keys.keys()).sort((a, b) => (order[a] as number) - (order[b] as number));
    const seen = new Map<string, number>();
    const out = new Array<string>(this.keys.length);
    for (const i of rows) {
      const identity = this.keys[i] as string;
      const k = seen.get(identity) ?? 0;
      seen.set(identity, k + 1);
      out[i] = `${identity}#${k}`;
    }
    this.keys = out;
    this.numbered = out.length;
    return out;
  }

  /** The columns: views over the builder's buffers (no copy), so build once every row is in. */
  build(): TargetColumns {
    const metrics = {} as Record<ComparedMetricTag, Float64Array>;
    for (const [tag, column] of this.values) metrics[tag] = column.view();
    return {
      name: this.name,
      keys: this.numberedKeys(),
      outcome: this.outcome.view() as Uint8Array & { [i: number]: OutcomeCode },
      errorType: this.errorType,
      dropReason: this.dropReason,
      metrics,
      capturedOutputTokens: this.captured.view(),
    };
  }
}

function errorTypeOf(error: unknown): string {
  if (error && typeof error === 'object' && 'type' in error && typeof (error as { type: unknown }).type === 'string')
    return (error as { type: string }).type;
  return 'Error';
}
