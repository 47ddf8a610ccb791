/**
 * A fixed, hand-made run: two streaming requests, one non-streaming, one failed, one dropped.
 * Every expected number in the metric and export tests is computed by hand from these.
 */
import type { FireOutcome, ScheduledRequest, TargetResult } from '../../../lambdas/core/types';

export const S = 1759522419158355424n; // an AIPerf-sized epoch ns, not representable as a float
export const ms = (n: number) => BigInt(Math.round(n * 1e6));

function request(index: number, streaming: boolean, contentType = 'application/json'): ScheduledRequest {
  return {
    index,
    offsetMs: index * 1000,
    captureTimeMs: 1777420800000 + index * 1000,
    correlationId: `corr-${index}`,
    eventId: `event-${index}`,
    inferenceId: index === 1 ? 'caller-1' : null,
    source: { file: 'captures/2026/04/29/00/a.jsonl', line: index + 1 },
    contentType,
    body: Buffer.from('{}'),
    streaming,
    overrides: streaming ? ['stream'] : [],
    capturedUsage: null,
    accept: null,
    capturedOutputSha256: null,
  };
}

function result(
  startMs: number,
  endMs: number,
  chunksMs: number[],
  usage: [number, number] | null,
  error: TargetResult['error'] = null,
): TargetResult {
  return {
    requestStartNs: S + ms(startMs),
    requestAckNs: S + ms(startMs + 1),
    requestEndNs: S + ms(endMs),
    contentChunkNs: chunksMs.map((c) => S + ms(c)),
    httpStatus: error ? error.code : 200,
    usage: usage ? { promptTokens: usage[0], completionTokens: usage[1] } : null,
    error,
  };
}

const outcome = (
  req: ScheduledRequest,
  scheduledMs: number,
  res: TargetResult | null,
  dropReason: FireOutcome['dropReason'] = null,
): FireOutcome => ({
  request: req,
  target: 'A',
  requestId: `req-${req.index}`,
  scheduledNs: S + ms(scheduledMs),
  workerId: 'worker_0',
  result: res,
  dropReason,
});

export const OUTCOMES: FireOutcome[] = [
  // Streaming: 4 chunks at 40, 50, 60, 70 ms; last byte at 80 ms; sent 0.5 ms late.
  outcome(request(0, true), -0.5, result(0, 80, [40, 50, 60, 70], [10, 4])),
  // Streaming: 2 chunks at 20 and 30 ms after its start at 1000 ms; ends at 40 ms.
  outcome(request(1, true), 1000, result(1000, 1040, [1020, 1030], [8, 2])),
  // Non-streaming: 100 ms.
  outcome(request(2, false), 2000, result(2000, 2100, [], [12, 5])),
  // Failed with HTTP 500 after 5 ms, sent 2 ms late.
  outcome(
    request(3, true),
    2998,
    result(3000, 3005, [], null, { code: 500, type: 'HTTPError', message: 'HTTP 500: boom' }),
  ),
  // Dropped: a CSV body for a chat target.
  outcome(request(4, false, 'text/csv'), 4000, null, 'unsupported_content_type'),
];
