/**
 * A rehearsal before schedule zero: the hot path compiled before the first request is due.
 *
 * V8 runs new code in its interpreter and optimises a function only after it has run often.
 * A replay that opens at 2,000 requests/s runs its first thousand requests (undici's pool,
 * client and HTTP parser, the target's measuring, the fire loop) through cold code, several
 * times slower per request: requests fall behind, the pool opens a connection for every one
 * that finds the others busy, and the whole first second is late. Measured against an
 * independent server on 2 vCPUs, 320-1,318 requests of a 10 s run at 2,000/s were more than
 * 5 ms late in its first second and 3-188 in the other nine; with the same jump preceded by two
 * seconds at 300/s, about 60 (bench/RESULTS.md).
 *
 * So before schedule zero is taken, each target's client code runs `requests` times against a
 * sink in this process (the bundled mocks, answering at once, with the same streaming or not):
 * a twin of the target's client (same kind, same options, the sink's address), fed by the fire
 * loop with the plan's own bodies. Nothing is sent to the target; the twin's connections and
 * outcomes are discarded. The functions compiled are the ones the run uses (V8 keeps optimised
 * code per function, shared by every client the same code builds).
 */
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import type { Clock, TargetClient } from '../ports';
import { createSageMakerTarget, sageMakerRuntimeClientConfig } from '../adapters/sagemaker/sagemaker-target';
import { runFireLoop } from '../core/fire/fire-loop';
import type { ScheduledRequest } from '../core/types';
import { startMockSageMaker } from '../mocks/mock-sagemaker';
import { startMockServer } from '../mocks/mock-server';
import { createTargetClient, type TargetClientSpec } from './target-clients';

/** Bodies taken from the plan (cycled): enough for their sizes and shapes, few to hold. */
export const REHEARSAL_BODIES = 64;
/** Requests in flight at once to the sink. */
const REHEARSAL_IN_FLIGHT = 32;
/** Due-time spacing of the rehearsal's requests (ms): the precise wait is rehearsed too. */
const REHEARSAL_SPACING_MS = 0.1;

export interface RehearsalResult {
  /** Requests the twins sent, over every target. */
  requests: number;
  /** Of those, answered without an error by the sink (a twin that fails everything compiles the wrong path). */
  succeeded: number;
  /** Wall time of the whole rehearsal (ms). */
  ms: number;
}

/** A sink answering at once, with the twin that sends to it: same kind, same options, the sink's address. */
async function twinOf(spec: TargetClientSpec, clock: Clock): Promise<{ twin: TargetClient; close(): Promise<void> }> {
  const name = `${spec.name}-rehearsal`;
  if (spec.kind === 'http') {
    const sink = await startMockServer({ ttftMs: 0, itlMs: 0, outputTokens: 4, recordRequests: false, preciseTimers: false });
    // The user's API key is not the sink's business: the twin sends none.
    const { apiKey: _key, ...options } = spec;
    const twin = createTargetClient({ ...options, name, baseUrl: sink.url, path: '/v1/chat/completions' }, clock);
    return { twin, close: async () => (await twin.close(), await sink.close()) };
  }
  const sink = await startMockSageMaker({ ttftMs: 0, itlMs: 0, outputTokens: 4, recordRequests: false, preciseTimers: false, requireAuth: false });
  // The SDK's own stack (middleware, signing, node:http) with made-up credentials: nothing here can reach AWS.
  const client = new SageMakerRuntimeClient({
    ...sageMakerRuntimeClientConfig({ timeoutMs: spec.timeoutMs }),
    region: 'us-east-1',
    endpoint: sink.url,
    credentials: { accessKeyId: 'REHEARSAL', secretAccessKey: 'REHEARSAL' },
  });
  const twin = createSageMakerTarget({ ...spec.sagemaker, name, region: 'us-east-1', timeoutMs: spec.timeoutMs, clock, client, ...(spec.responseExcerptChars !== undefined ? { responseExcerptChars: spec.responseExcerptChars } : {}) });
  return { twin, close: async () => (await twin.close(), client.destroy(), await sink.close()) };
}

/** `count` requests to the sink with the first bodies of `plan` (cycled), due REHEARSAL_SPACING_MS apart. */
export function rehearsalRequests(plan: readonly ScheduledRequest[], count: number): ScheduledRequest[] {
  const sample = plan.slice(0, REHEARSAL_BODIES);
  if (sample.length === 0) return [];
  return Array.from({ length: count }, (_, i) => ({ ...(sample[i % sample.length] as ScheduledRequest), index: i, offsetMs: i * REHEARSAL_SPACING_MS }));
}

/**
 * Runs each target's twin `requests` times against its sink, with that target's planned
 * requests (`samples[i]`, the first REHEARSAL_BODIES are used). Targets with nothing planned
 * are skipped; the sinks are stopped whatever happens.
 */
export async function rehearse(specs: readonly TargetClientSpec[], samples: readonly (readonly ScheduledRequest[])[], requests: number, clock: Clock): Promise<RehearsalResult> {
  const started = performance.now();
  let sent = 0;
  let succeeded = 0;
  for (const [i, spec] of specs.entries()) {
    const batch = requests > 0 ? rehearsalRequests(samples[i] ?? [], requests) : [];
    if (batch.length === 0) continue;
    const { twin, close } = await twinOf(spec, clock);
    try {
      const outcomes = await runFireLoop(batch, { runId: 'rehearsal', target: twin, clock, startNs: clock.nowNs(), workerId: 'rehearsal', maxInFlight: REHEARSAL_IN_FLIGHT });
      sent += outcomes.length;
      succeeded += outcomes.filter((o) => o.result !== null && o.result.error === null).length;
    } finally {
      await close();
    }
  }
  return { requests: sent, succeeded, ms: performance.now() - started };
}
