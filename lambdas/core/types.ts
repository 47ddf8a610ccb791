/**
 * Domain types shared by every stage of the core: capture parsing -> planning -> firing ->
 * metrics -> exports. Plain data only (JSON-friendly except where bigint is noted), so the
 * same values can cross an SQS message or a worker boundary later.
 *
 * Time conventions:
 * - Wall-clock instants are epoch nanoseconds as `bigint` (suffix `Ns`): a float64 cannot
 *   hold epoch ns exactly, and AIPerf exports them as exact integers.
 * - Durations and offsets inside a plan are float milliseconds (suffix `Ms`).
 */
import type { CapacityReport } from './pipeline/capacity';

/** How SageMaker stored a payload's `data` string. A missing encoding means BASE64. */
export type CaptureEncoding = 'JSON' | 'CSV' | 'BASE64';

/** Where a capture line came from: reported in the ingest report and carried to results. */
export interface CaptureSource {
  /** File path (local) or `s3://bucket/key`, as given to the parser. */
  file: string;
  /** 1-based line number within the file. */
  line: number;
}

/** One captured invocation, decoded and validated. */
export interface CaptureRecord {
  eventId: string;
  inferenceId: string | null;
  /** `inferenceTime` as epoch milliseconds (may carry a fraction when the capture did). */
  inferenceTimeMs: number;
  /** True when the capture's `inferenceTime` had fractional seconds (intra-second policy skips it). */
  hasSubSecondTime: boolean;
  /** The request exactly as the endpoint received it. */
  input: CapturePayload;
  /** Summary of the captured response (bodies of outputs are not kept: memory, not needed to replay). */
  output: CapturedOutputSummary | null;
  source: CaptureSource;
  /**
   * Where the line lies in its file, in bytes ([start, end), BOM and CR excluded), when the
   * parser read it from a byte stream: a plan can drop the body and read it back later.
   */
  span?: ByteSpan;
  /**
   * Set by the run's duplicate filter on a record it kept: `keptBy.superseded(keptAs)` turns
   * true when an earlier copy (by inferenceTime) replaces it later in the run (capture/duplicates.ts).
   */
  dedupe?: { keptBy: KeptRecords; keptAs: number };
}

/** A duplicate filter, as the records it kept see it. */
export interface KeptRecords {
  superseded(keptAs: number): boolean;
}

export interface ByteSpan {
  start: number;
  end: number;
}

export interface CapturePayload {
  /**
   * `observedContentType`, e.g. `application/json`, `text/csv`; inferred or `application/octet-stream` without one
   * (capture/body-type.ts).
   */
  contentType: string;
  encoding: CaptureEncoding;
  /** The decoded bytes the endpoint received. */
  body: Uint8Array;
  /** True when the capture had no `observedContentType` and `contentType` was inferred from the record. */
  contentTypeInferred?: boolean;
}

export interface CapturedOutputSummary {
  /** `observedContentType` of the output; null when the capture has none (replayed without Accept). */
  contentType: string | null;
  byteLength: number;
  /** Token usage reported by the captured response, when it was OpenAI-style JSON. */
  usage: TokenUsage | null;
  /**
   * SHA-256 (hex) of the captured response's bytes, for models without token usage (tabular,
   * vision, ...), whose outputs are deterministic and can be compared exactly with a
   * replay's; null for LLM answers (usage present), where only the length is compared.
   */
  sha256: string | null;
}

export interface TokenUsage {
  promptTokens: number | null;
  completionTokens: number | null;
}

/**
 * Why a capture line was rejected. Every rejected line is counted under exactly one reason
 * in the ingest report, with file and line number of the first few examples.
 */
export type RejectReason =
  | 'truncated_line' // the last line of a file, without newline, that does not parse
  | 'invalid_json' // the line is not JSON
  | 'not_an_object' // JSON, but not an object
  | 'missing_field' // a required field is absent or of the wrong type (zod)
  | 'bad_inference_time' // inferenceTime is not an ISO-8601 instant
  | 'implausible_time' // inferenceTime before SageMaker existed (2017-11-29) or more than a day ahead of the clock
  | 'bad_encoding' // encoding is not JSON/CSV/BASE64
  | 'bad_base64' // data is not valid base64
  | 'bad_inner_json' // encoding JSON (or a JSON content type) whose data is not JSON
  | 'duplicate' // same eventId and body seen before in the run: replayed once
  | 'line_too_long'; // a line past the parser's size cap (MAX_LINE_BYTES; counted while streaming, never held)

export interface RejectExample {
  file: string;
  line: number;
  /** Short, body-free explanation (never prompt text). */
  detail: string;
}

/** Per-file accounting of one ingest. */
export interface IngestFileReport {
  file: string;
  bytesRead: number;
  linesRead: number;
  blankLines: number;
  accepted: number;
  rejected: number;
  /** Accepted records without `observedContentType` whose content type was inferred (capture/body-type.ts). */
  contentTypeInferred: number;
  rejectedByReason: Partial<Record<RejectReason, number>>;
  /** The first few examples per reason (bounded, so a bad file cannot blow the report up). */
  examples: Partial<Record<RejectReason, RejectExample[]>>;
}

export interface IngestReport {
  files: IngestFileReport[];
  /**
   * Files seen but not parsed, with why: not `.jsonl`, not a regular file, unreadable
   * (`EACCES`...), gzip-compressed; or a file whose reading failed part-way (its lines up to
   * there are counted in `files`).
   */
  skippedFiles: { file: string; reason: string }[];
  totals: {
    files: number;
    linesRead: number;
    blankLines: number;
    accepted: number;
    rejected: number;
    contentTypeInferred: number;
    rejectedByReason: Partial<Record<RejectReason, number>>;
  };
  /** What the intra-second policy did to the accepted records' times (added once they are planned). */
  timing?: TimingSummary;
  /** A pipeline run's fire invocations against the fire function's concurrency (pipeline/capacity.ts). */
  capacity?: CapacityReport;
}

/**
 * The intra-second policy's effect, over every accepted record (before the offset window,
 * sampling and limit). A time written without a fractional part (`...:18Z`) is whole-second;
 * one written with any fraction, `.000` included, is exact and kept as it is.
 */
export interface TimingSummary {
  intraSecond: IntraSecondPolicy;
  /** Records whose inferenceTime has no fractional part. */
  wholeSecondRecords: number;
  /** Records whose inferenceTime has a fractional part (kept exactly). */
  exactTimeRecords: number;
  /** Whole-second records moved by `spread` (every one but the first of a second shared by several). */
  spreadRecords: number;
  /** The largest such move, in ms (below 1000; 0 when nothing moved). */
  maxSpreadMs: number;
  /** An amplified plan (`amplify` > 1): the factor, the captured requests selected and the requests scheduled from them. */
  amplification?: { factor: number; capturedRequests: number; scheduledRequests: number };
}

/** What a target accepts; decides which captured records can be replayed to it. */
export type TargetKind = 'openai-chat' | 'sagemaker';

/**
 * Why a scheduled request was not sent (counted in the run manifest). Records the user's
 * selection leaves out (offset window, limit, sample) are not scheduled at all: they are
 * counted apart, in `notScheduledByReason`.
 */
export type DropReason =
  | 'unsupported_content_type' // e.g. a CSV or binary body for a chat target
  | 'not_chat_request' // JSON without a `messages` array for a chat target
  | 'late_beyond_tolerance' // due time passed by more than the tolerance, drop policy
  | 'lost' // scheduled but never reported (worker died), counted at finalisation
  | 'expired' // reached past its due window (a redelivered shard): never fired into a finalised run
  | 'aborted'; // the run was stopped before the request's due time

export type IntraSecondPolicy = 'spread' | 'burst';

/** One request of a replay plan, ready for the fire loop. */
export interface ScheduledRequest {
  /** 0-based position in the plan (AIPerf `session_num`). */
  index: number;
  /** Offset from the plan's schedule zero, after offsets and time scale, in ms. */
  offsetMs: number;
  /** Captured time after the intra-second policy, epoch ms (before time scale). */
  captureTimeMs: number;
  /**
   * An amplified plan's copy index (0, 1, ...) of this request's capture event: with the
   * event id, what pairs it across targets and runs. Absent when the plan is not amplified.
   */
  copy?: number;
  /** Ties the same captured request across targets and copies (X-Correlation-ID). */
  correlationId: string;
  eventId: string;
  inferenceId: string | null;
  source: CaptureSource;
  contentType: string;
  /** Exactly the bytes to send: the captured body, with only the declared overrides applied. */
  body: Uint8Array;
  /** Whether the request asks for a streamed (SSE) response. */
  streaming: boolean;
  /** Names of the overrides that changed the body (e.g. `model`, `stream`), for the record. */
  overrides: string[];
  /** Token usage in the captured response, to compare replayed output lengths with. */
  capturedUsage: TokenUsage | null;
  /** The captured response's content type, sent as `Accept` (null when nothing was captured). */
  accept: string | null;
  /** SHA-256 of the captured response (CapturedOutputSummary.sha256), to compare the replay's with. */
  capturedOutputSha256: string | null;
}

/** What the target client reports for one request. Timestamps are epoch ns. */
export interface TargetResult {
  /** The loop's pick-up: taken by the client just before it hands the request to its HTTP stack. */
  requestStartNs: bigint;
  /**
   * When the request's bytes were handed to the socket (diagnostics channels: wire-stamps.ts);
   * latency and TTFT are measured from it. Null or absent when it was never written (refused
   * connection) or the client cannot tell; `requestStartNs` stands in then.
   */
  requestWireNs?: bigint | null;
  /** Response headers received. */
  requestAckNs: bigint | null;
  /** Last byte received (or failure time). */
  requestEndNs: bigint;
  /** Arrival time of each response chunk that carried output content (streaming only). */
  contentChunkNs: bigint[];
  httpStatus: number | null;
  /** Token usage reported by the server (`usage`), null when it did not report it. */
  usage: TokenUsage | null;
  error: ErrorDetails | null;
  /** SHA-256 (hex) of the response body bytes (a stream: its payload parts joined), when the target computes it. */
  outputSha256?: string | null;
}

/** AIPerf's error shape. */
export interface ErrorDetails {
  /** HTTP status, or a custom code (e.g. 408 for our timeout, 499 for cancellation). */
  code: number | null;
  /** Error class, e.g. `HTTPError`, `TimeoutError`, `ConnectionReset`, `MalformedStream`. */
  type: string;
  message: string;
}

/** One fired (or dropped) request as the fire loop returns it. */
export interface FireOutcome {
  request: ScheduledRequest;
  /** Target name (e.g. `default`, `A`, `B`). */
  target: string;
  /** X-Request-ID sent. */
  requestId: string;
  /** When it should have been sent, epoch ns. */
  scheduledNs: bigint;
  /** Worker that fired it (AIPerf `worker_id`). */
  workerId: string;
  /** Null when the request was dropped instead of fired. */
  result: TargetResult | null;
  dropReason: DropReason | null;
}

/** A metric value in a per-request record: `{value, unit}` as AIPerf writes it. */
export interface MetricValue {
  value: number | number[];
  unit: string;
}

/**
 * One line of `profile_export.jsonl`. `metadata`, `metrics` and `error` are AIPerf's record
 * (`MetricRecordInfo`) exactly: AIPerf's decoder builds its metadata struct from every key of
 * `metadata`, so a key of ours there makes it reject the line. Ours live beside them under
 * `capture_replay`, a top-level key AIPerf's decoder does not read.
 */
export interface ProfileRecord {
  metadata: ProfileRecordMetadata;
  metrics: Record<string, MetricValue>;
  error: ErrorDetails | null;
  capture_replay: ReplayRecordInfo;
}

/** AIPerf's `MetricRecordMetadata` fields, nothing else. */
export interface ProfileRecordMetadata {
  session_num: number;
  x_request_id: string;
  x_correlation_id: string;
  conversation_id: string;
  turn_index: number;
  request_start_ns: bigint;
  request_ack_ns: bigint | null;
  request_end_ns: bigint;
  worker_id: string;
  record_processor_id: string;
  benchmark_phase: 'profiling';
  was_cancelled: boolean;
  cancellation_time_ns: bigint | null;
}

/** Ours: what makes a replayed request traceable to its capture and its schedule. */
export interface ReplayRecordInfo {
  target: string;
  scheduled_ns: bigint;
  /** Due -> the loop's pick-up (the client's start stamp), ms. */
  schedule_lag_ms: number;
  /**
   * Due -> on the wire (the request's bytes handed to the socket), ms: what a server-side
   * observer sees as our lateness. Null when the request never reached the wire.
   */
  wire_lag_ms: number | null;
  capture_event_id: string;
  /** The request's copy index in an amplified run (ScheduledRequest.copy); absent otherwise. */
  capture_copy?: number;
  capture_inference_id: string | null;
  capture_file: string;
  capture_line: number;
  capture_time_ms: number;
  /** Output tokens the captured response reported (`usage`), null when it did not. */
  captured_output_tokens: number | null;
  /**
   * Whether the replayed response is byte-identical to the captured one; null when either
   * side has no digest (LLM answers, streams, failures).
   */
  output_match: boolean | null;
  overrides: string[];
}

/** The run manifest: the accounting that must always balance. */
export interface RunManifest {
  runId: string;
  target: string;
  /** Requests in the plan for this target (after offsets/limits and target compatibility). */
  scheduled: number;
  fired: number;
  succeeded: number;
  failed: number;
  dropped: number;
  droppedByReason: Partial<Record<DropReason, number>>;
  /** Failures by error type. */
  failedByType: Record<string, number>;
  /** Records parsed but not planned for this target, by reason (not part of `scheduled`). */
  notScheduledByReason: Partial<Record<'outside_offset_window' | 'limit' | 'sample' | 'duplicate', number>>;
  /** True when scheduled === succeeded + failed + dropped. */
  balanced: boolean;
  startedAt: string;
  endedAt: string;
}

/** The output of planning: what to send, and what was left out and why. */
export interface ReplayPlan {
  /** Sorted by offsetMs (stable: capture order breaks ties). */
  requests: ScheduledRequest[];
  /**
   * Records in the window that this target cannot take: part of `scheduled` in the
   * manifest and counted as dropped with their reason, never guessed at.
   */
  incompatible: { request: ScheduledRequest; reason: DropReason; detail: string }[];
  /** Records left out by the user's selection (offset window, limit, sample): not scheduled. */
  excluded: Partial<Record<'outside_offset_window' | 'limit' | 'sample', number>>;
  /** Epoch ms of the first record (schedule zero) before offsets; null for an empty plan. */
  scheduleZeroMs: number | null;
  /** Duration of the plan in ms (last offset), 0 for an empty plan. */
  durationMs: number;
  /** What the intra-second policy did, over every record given to the planner. */
  timing?: TimingSummary;
}
