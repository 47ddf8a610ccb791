/**
 * The CLI's rehearsal before schedule zero (the shared part, and why: core/fire/rehearsal.ts):
 * each target's twin is its client kind built from the same spec, pointed at the bundled mocks
 * started in this process (answering at once, with the same streaming or not).
 */
import type { Clock } from '../ports';
import { collectGarbage } from '../adapters/full-gc';
import { rehearsalSageMakerClient } from '../adapters/sagemaker/rehearsal-sink';
import { createSageMakerTarget } from '../adapters/sagemaker/sagemaker-target';
import { rehearseTwins, type RehearsalResult, type Twin } from '../core/fire/rehearsal';
import type { ScheduledRequest } from '../core/types';
import { startMockSageMaker } from '../mocks/mock-sagemaker';
import { startMockServer } from '../mocks/mock-server';
import { createTargetClient, type TargetClientSpec } from './target-clients';

export {
  autoRehearsalRequests,
  REHEARSAL_BODIES,
  rehearsalRequests,
  type RehearsalResult,
} from '../core/fire/rehearsal';

/** A sink answering at once, with the twin that sends to it: same kind, same options, the sink's address. */
async function twinOf(spec: TargetClientSpec, clock: Clock): Promise<Twin> {
  const name = `${spec.name}-rehearsal`;
  if (spec.kind === 'http') {
    const sink = await startMockServer({
      ttftMs: 0,
      itlMs: 0,
      outputTokens: 4,
      recordRequests: false,
      preciseTimers: false,
    });
    // The user's API key is not the sink's business: the twin sends none.
    const { apiKey: _key, ...options } = spec;
    const twin = createTargetClient({ ...options, name, baseUrl: sink.url, path: '/v1/chat/completions' }, clock);
    return { twin, close: async () => (await twin.close(), await sink.close()) };
  }
  const sink = await startMockSageMaker({
    ttftMs: 0,
    itlMs: 0,
    outputTokens: 4,
    recordRequests: false,
    preciseTimers: false,
    requireAuth: false,
  });
  const client = rehearsalSageMakerClient(sink.url, spec.timeoutMs);
  const twin = createSageMakerTarget({
    ...spec.sagemaker,
    name,
    region: 'us-east-1',
    timeoutMs: spec.timeoutMs,
    clock,
    client,
    ...(spec.responseExcerptChars !== undefined ? { responseExcerptChars: spec.responseExcerptChars } : {}),
  });
  return { twin, close: async () => (await twin.close(), client.destroy(), await sink.close()) };
}

/**
 * Runs each target's twin `requests` times against its sink, with that target's planned
 * requests (`samples[i]`, the first REHEARSAL_BODIES are used), then collects garbage in full
 * (`collect`) and runs them `requests` times again: twice `requests` in all. Targets with
 * nothing planned are skipped; the sinks are stopped whatever happens.
 *
 * Why two passes: a full collection drops the optimised code that names objects of which none
 * is alive any more, and after a rehearsal that is much of the hot path (V8 traced 40-90
 * functions dropped, "weak objects": a finished response's maps, the twin's closures). Made just
 * before schedule zero, the collection left the run's first second to compile them all again
 * while it fired (bench/RESULTS.md); made here, the second pass compiles them before the run,
 * and just before zero the CLI only scavenges (full-gc.ts). The same count again: a function
 * run once per request is optimised after about as many runs as a busy replay's first pass has
 * (V8's invocation count for TurboFan is 3,000; auto's first pass is up to 2,000).
 */
export async function rehearse(
  specs: readonly TargetClientSpec[],
  samples: readonly (readonly ScheduledRequest[])[],
  requests: number,
  clock: Clock,
  collect: () => void = collectGarbage,
): Promise<RehearsalResult> {
  const startedNs = clock.nowNs();
  const twins = specs.map((spec) => () => twinOf(spec, clock));
  const first = await rehearseTwins(twins, samples, requests, clock);
  if (first.requests === 0) return first;
  collect();
  const second = await rehearseTwins(twins, samples, requests, clock);
  return {
    requests: first.requests + second.requests,
    succeeded: first.succeeded + second.succeeded,
    ms: Number(clock.nowNs() - startedNs) / 1e6,
  };
}
