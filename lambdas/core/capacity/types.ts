/**
 * A capacity search's vocabulary and `capacity.json`'s shape: the objectives a step is judged
 * by, what a step measured, and per target the largest factor of today's traffic it sustained.
 */

export const CAPACITY_SCHEMA_VERSION = 1;

/** What a target must do at a factor for that factor to count as sustained. */
export interface CapacityObjectives {
  /** AIPerf's goodput SLOs (`--goodput`): metric tag -> threshold in the metric's unit. */
  slos: Record<string, number>;
  /** The share of the step's requests that must meet every SLO (goodput as a share), in (0, 1]. */
  minGoodput: number;
  /** The step's error rate must stay below this, in (0, 1]. */
  maxErrorRate: number;
  /** The client's own lateness allowed (p90 of wire lag, ms) before a step says nothing about the target. */
  maxClientLagMs: number;
}

/** How the factors are chosen: geometric steps up from `startFactor`, then bisection. */
export interface SearchSettings {
  startFactor: number;
  /** Each geometric step multiplies the factor by this (> 1). */
  growth: number;
  /** Bisection stops when the bracket is this narrow (in factor units). */
  resolution: number;
  /** No factor above this is tried; meeting the objectives at it ends the search (`cap`). */
  maxFactor: number;
  /** What the cap note says to look further (default: raise --max-factor). */
  capHint?: string;
}

/**
 * Why a target's search ended where it did: its objectives, its errors, this replayer (client),
 * the cap; a target that failed every request of a step (broken); no step that held a request
 * (empty); or the search itself: stopped by a signal, a step that could not be run, the limit
 * of MAX_STEPS steps.
 */
export type LimitedBy =
  | 'objectives'
  | 'errors'
  | 'client'
  | 'cap'
  | 'broken'
  | 'empty'
  | 'stopped'
  | 'step_failed'
  | 'step_limit';

/**
 * A step's verdict: met, or the first rule it broke (errors before goodput), or the client was
 * late; `broken`: requests failed and none succeeded; `empty`: the factor held no request of the
 * window (a sample of a few requests), neither met nor failed.
 */
export type StepOutcome = 'met' | 'objectives' | 'errors' | 'client' | 'broken' | 'empty';

/** One kind of error a step's requests failed with: `HTTPError 404`, how many, and one message. */
export interface StepError {
  error: string;
  count: number;
  message: string;
}

export interface Quantiles {
  p50: number | null;
  p99: number | null;
}

/** What one step measured of one target. */
export interface StepMeasure {
  factor: number;
  /** Requests the step sent or was due to send to the target (those it cannot take left out). */
  requests: number;
  succeeded: number;
  failed: number;
  /** Not sent: late beyond the tolerance, aborted, lost. */
  dropped: number;
  /** Requests that succeeded and met every SLO. */
  good: number;
  /** Share of `requests` that succeeded and met every SLO; null with no request. */
  goodput: number | null;
  /** Share of `requests` that failed; null with no request. */
  error_rate: number | null;
  /** p50 and p99 of each SLO metric over the succeeded requests (null: no value). */
  slo_metrics: Record<string, Quantiles>;
  /** The replayer's own timing: how late requests left the loop and reached the wire (ms), and those dropped as late. */
  client: {
    schedule_lag_p90_ms: number | null;
    wire_lag_p90_ms: number | null;
    wire_lag_p99_ms: number | null;
    late_dropped: number;
  };
  /** The kinds of error seen, the commonest first (at most three). */
  errors: StepError[];
}

export interface CapacityStep extends StepMeasure {
  outcome: StepOutcome;
  /** One line on the outcome, with the numbers that decided it. */
  reason: string;
  /** The step's run id and its results folder, relative to the capacity run's root. */
  run_id: string;
  results: string;
}

export interface TargetCapacity {
  name: string;
  /** The largest factor that met the objectives with the client on time; null when none did. */
  sustained_factor: number | null;
  limited_by: LimitedBy;
  /**
   * The step factor that ended the search (the smallest that failed, the client-limited or
   * broken one, the cap; stopped: the factor running or due next); null when none did.
   */
  limit_factor: number | null;
  /** What the result means and, when the client or the cap limited it, how to go further. */
  note: string;
  steps: CapacityStep[];
}

/** capacity.json. */
export interface CapacityDocument {
  schema_version: typeof CAPACITY_SCHEMA_VERSION;
  run_id: string;
  generated_at: string;
  captures: string;
  /**
   * The captured traffic replayed at each step: its offsets (ms, in capture time from its first
   * record) and its requests at 1x; chosen by time (--from/--to), `capture_window` too (ISO 8601).
   */
  window: {
    start_offset_ms: number;
    end_offset_ms: number;
    captured_requests: number;
    capture_window?: { start: string; end: string };
  };
  objectives: {
    goodput: Record<string, number>;
    min_goodput: number;
    max_error_rate: number;
    max_client_lag_ms: number;
  };
  /**
   * How the factors were chosen; `warm_up_requests`: the requests the warm-up sent to a target
   * before its first step, not judged; `max_step_requests`: the most requests one step may plan
   * (what this replayer's memory holds), which can lower `max_factor` below --max-factor.
   */
  search: {
    start_factor: number;
    growth: number;
    resolution: number;
    max_factor: number;
    cooldown_ms: number;
    together: boolean;
    warm_up_requests: number;
    max_step_requests: number;
  };
  targets: TargetCapacity[];
}
