/**
 * The stack's own numbers live in one module free of the CDK (lib/stack-constants.ts), which
 * the stack and the simulator both read: the simulated ingest and collect functions, their
 * queues and event sources are that module's figures, not copies of them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  COLLECT_BATCHING_WINDOW_SECONDS,
  EVENT_SOURCE_BATCH_SIZE,
  EVENT_SOURCE_CONCURRENCY,
  FUNCTION_MEMORY_MB,
  FUNCTION_TIMEOUT_SECONDS,
  MAX_RECEIVE_COUNT,
  sixTimesVisibilitySeconds,
  SQS_MAX_VISIBILITY_SECONDS,
} from '../../../lib/stack-constants';
import { stackFor } from '../../../sim/settings';
import { REPO_ROOT } from '../../support/processes';

describe("the stack's constants", () => {
  it('load no CDK: the simulator and the functions can import them', () => {
    const source = readFileSync(join(REPO_ROOT, 'lib', 'stack-constants.ts'), 'utf8');
    expect(source).not.toMatch(/from '(aws-cdk-lib|constructs|cdk-nag)/);
  });

  it('give the visibility AWS advises: six times the timeout, within SQS 12 hours', () => {
    expect(sixTimesVisibilitySeconds(FUNCTION_TIMEOUT_SECONDS.ingest)).toBe(5400);
    expect(sixTimesVisibilitySeconds(FUNCTION_TIMEOUT_SECONDS.collect)).toBe(1800);
    expect(sixTimesVisibilitySeconds(10_000)).toBe(SQS_MAX_VISIBILITY_SECONDS);
  });

  it('are what the simulator runs', () => {
    const { stack } = stackFor({ ratePerTarget: 50, targets: 1, seconds: 60, latencyP50S: 1, latencyP99S: 2 });
    for (const fn of ['ingest', 'collect'] as const) {
      expect(stack[fn], fn).toEqual({
        memoryMb: FUNCTION_MEMORY_MB[fn],
        timeoutS: FUNCTION_TIMEOUT_SECONDS[fn],
        batchSize: EVENT_SOURCE_BATCH_SIZE[fn],
        batchingWindowS: fn === 'collect' ? COLLECT_BATCHING_WINDOW_SECONDS : 0,
        maxConcurrency: EVENT_SOURCE_CONCURRENCY[fn],
        reservedConcurrency: null,
        visibilityTimeoutS: sixTimesVisibilitySeconds(FUNCTION_TIMEOUT_SECONDS[fn]),
      });
    }
    expect(stack.maxReceiveCount).toBe(MAX_RECEIVE_COUNT);
  });
});
