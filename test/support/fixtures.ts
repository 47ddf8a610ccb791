import type { ScheduledRequest } from '../../lambdas/core/types';

/** A scheduled chat request for tests: ids derive from the index (`corr-N`, `ev-N`). */
export function scheduledRequest(
  index: number,
  offsetMs: number,
  overrides: Partial<ScheduledRequest> = {},
): ScheduledRequest {
  return {
    index,
    offsetMs,
    captureTimeMs: 1_777_420_800_000 + offsetMs,
    correlationId: `corr-${index}`,
    eventId: `ev-${index}`,
    inferenceId: null,
    source: { file: 's3://captures/a.jsonl', line: index + 1 },
    contentType: 'application/json',
    body: Buffer.from(`{"messages":[],"n":${index}}`),
    streaming: false,
    overrides: [],
    capturedUsage: null,
    accept: null,
    capturedOutputSha256: null,
    ...overrides,
  };
}
