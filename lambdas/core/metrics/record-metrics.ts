/**
 * One fired request -> one AIPerf record. Times are measured in ns and exported in ms.
 * Token counts come only from the server's `usage`; without it the token metrics are
 * absent (never zero, never guessed), and so is inter_token_latency, which needs them.
 * Counts that are not plausible (usage.ts) count as absent. An error is recorded as
 * error-details.ts allows (a named type, printable and bounded text, no URL credentials),
 * whatever the target sent, so every record and error summary is safe to print.
 */
import { recordedError } from './error-details';
import type { ErrorDetails, FireOutcome, MetricValue, ProfileRecord } from '../types';
import { plausibleTokenCount, plausibleUsage } from './usage';

const ms = (ns: bigint): number => Number(ns) / 1e6;

/** The target client reports an aborted request as 499 / CancelledError (types.ts ErrorDetails). */
function isCancellation(error: ErrorDetails | null): boolean {
  return error !== null && (error.type === 'CancelledError' || error.code === 499);
}

export function computeProfileRecord(outcome: FireOutcome, recordProcessorId: string): ProfileRecord {
  const result = outcome.result;
  if (!result) throw new Error(`request ${outcome.requestId} was not fired (${outcome.dropReason}): it has no record`);
  const { request } = outcome;
  // The request's time starts on the wire; the loop's pick-up ends the schedule lag. Whatever
  // happens between the two (a busy event loop, a connection being opened, SDK signing) is
  // our lateness (wire_lag_ms), not the endpoint's latency.
  const wireNs = result.requestWireNs ?? null;
  const startNs = wireNs ?? result.requestStartNs;
  const cancelled = isCancellation(result.error);
  const metadata: ProfileRecord['metadata'] = {
    session_num: request.index,
    x_request_id: outcome.requestId,
    x_correlation_id: request.correlationId,
    conversation_id: request.eventId,
    turn_index: 0,
    request_start_ns: startNs,
    request_ack_ns: result.requestAckNs,
    request_end_ns: result.requestEndNs,
    worker_id: outcome.workerId,
    record_processor_id: recordProcessorId,
    benchmark_phase: 'profiling',
    was_cancelled: cancelled,
    // The client gives up at the moment it records the failure, so that is the cancellation time.
    cancellation_time_ns: cancelled ? result.requestEndNs : null,
  };
  const replay: ProfileRecord['capture_replay'] = {
    target: outcome.target,
    scheduled_ns: outcome.scheduledNs,
    schedule_lag_ms: ms(result.requestStartNs - outcome.scheduledNs),
    wire_lag_ms: wireNs === null ? null : ms(wireNs - outcome.scheduledNs),
    capture_event_id: request.eventId,
    ...(request.copy !== undefined ? { capture_copy: request.copy } : {}),
    capture_inference_id: request.inferenceId,
    capture_file: request.source.file,
    capture_line: request.source.line,
    capture_time_ms: request.captureTimeMs,
    captured_output_tokens: plausibleTokenCount(request.capturedUsage?.completionTokens),
    output_match:
      result.error === null && result.outputSha256 && request.capturedOutputSha256
        ? result.outputSha256 === request.capturedOutputSha256
        : null,
    overrides: request.overrides,
  };
  if (result.error) {
    return {
      metadata,
      metrics: { error_request_count: { value: 1, unit: 'requests' } },
      error: recordedError(result.error),
      capture_replay: replay,
    };
  }
  const metrics: Record<string, MetricValue> = {};
  const latencyNs = result.requestEndNs - startNs;
  const chunks = result.contentChunkNs;
  const usage = plausibleUsage(result.usage);
  const isl = usage?.promptTokens ?? null;
  const osl = usage?.completionTokens ?? null;
  let ttftNs: bigint | null = null;
  if (request.streaming && chunks.length > 0) {
    ttftNs = (chunks[0] as bigint) - startNs;
    metrics.time_to_first_token = { value: ms(ttftNs), unit: 'ms' };
  }
  if (request.streaming && chunks.length > 1) {
    metrics.time_to_second_token = { value: ms((chunks[1] as bigint) - (chunks[0] as bigint)), unit: 'ms' };
  }
  metrics.request_latency = { value: ms(latencyNs), unit: 'ms' };
  if (ttftNs !== null && osl !== null && osl >= 2) {
    const itlMs = ms(latencyNs - ttftNs) / (osl - 1);
    metrics.inter_token_latency = { value: itlMs, unit: 'ms' };
    if (itlMs > 0) metrics.output_token_throughput_per_user = { value: 1000 / itlMs, unit: 'tokens/sec/user' };
  }
  if (request.streaming && chunks.length > 1) {
    const gaps: number[] = [];
    for (let i = 1; i < chunks.length; i++) gaps.push(ms((chunks[i] as bigint) - (chunks[i - 1] as bigint)));
    metrics.inter_chunk_latency = { value: gaps, unit: 'ms' };
  }
  if (isl !== null) metrics.input_sequence_length = { value: isl, unit: 'tokens' };
  if (osl !== null) metrics.output_sequence_length = { value: osl, unit: 'tokens' };
  metrics.request_count = { value: 1, unit: 'requests' };
  return { metadata, metrics, error: null, capture_replay: replay };
}
