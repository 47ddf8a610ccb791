/**
 * runFireLoop against a real HTTP server on the real clock: it fires every request while
 * earlier ones still stream. Whether the later ones start before the first ends depends on the
 * machine keeping up, so this file is in the timing project (vitest.config.ts).
 */
import { describe, expect, it } from 'vitest';
import { createOpenAITarget } from '../../../lambdas/adapters/http/openai-target';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import { runFireLoop } from '../../../lambdas/core/fire/fire-loop';
import { startMockServer } from '../../../lambdas/mocks/mock-server';
import { scheduledRequest } from '../../support/fixtures';
import { machineLoad, tolerance } from '../../support/timing';

const req = (index: number, offsetMs: number) => scheduledRequest(index, offsetMs);
const ms = (n: number) => BigInt(Math.round(n * 1e6));

describe('runFireLoop against a real HTTP server on the real clock', () => {
  it('fires every request once, in schedule order, while earlier ones are still streaming', async () => {
    // Request 0 must outlast the sending of all 40. The mock writes token k at arrival + ttft
    // + k x itl, and every overdue token at once after a stall: with a stream as short as the
    // schedule (itl 5 ms), one stall of a busy machine ended request 0 before the loop had
    // caught up (it sends one overdue request a turn of the event loop). A stream of
    // 30 + 9 x 100 ms, widened with the machine's load, outlasts both.
    const itlMs = tolerance('fire loop overlap', 100);
    const server = await startMockServer({ ttftMs: 30, itlMs, outputTokens: 10 });
    const target = createOpenAITarget({ name: 'mock', baseUrl: server.url, timeoutMs: 10_000, clock: systemClock });
    try {
      const requests = Array.from({ length: 40 }, (_, i) => ({
        ...req(i, i * 2),
        streaming: true,
        body: Buffer.from(`{"messages":[{"role":"user","content":"q${i}"}],"stream":true}`),
      }));
      const outcomes = await runFireLoop(requests, {
        runId: 'real',
        target,
        clock: systemClock,
        startNs: systemClock.nowNs() + ms(50),
        workerId: 'w',
      });
      expect(outcomes.map((o) => o.result?.error ?? null)).toEqual(requests.map(() => null));
      expect(outcomes.every((o) => o.result!.contentChunkNs.length === 10)).toBe(true);
      expect(server.requests.map((r) => r.headers['x-request-id'])).toEqual(outcomes.map((o) => o.requestId));
      // All 40 are due within 78 ms, long before request 0 ends. A loop that waited for a
      // response before the next send would have started 1 by then, one that capped requests
      // in flight at k would have started k; a busy machine delays the last few.
      const firstEnd = outcomes[0]!.result!.requestEndNs;
      const lateMs = outcomes.map((o) => Number(o.result!.requestStartNs - o.scheduledNs) / 1e6);
      const startedBeforeFirstEnd = outcomes.filter((o) => o.result!.requestStartNs < firstEnd).length;
      expect(
        startedBeforeFirstEnd,
        `sent late by up to ${Math.max(...lateMs).toFixed(0)} ms (${machineLoad()})`,
      ).toBeGreaterThan(requests.length / 2);
    } finally {
      await target.close();
      await server.close();
    }
  });
});
