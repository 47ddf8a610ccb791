/**
 * The CLI's rehearsal before schedule zero (the shared part, and why: core/fire/rehearsal.ts):
 * each target's twin is its client kind built from the same spec, pointed at the bundled mocks
 * started in this process (answering at once, with the same streaming or not).
 */
import type { Clock } from '../ports';
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
 * requests (`samples[i]`, the first REHEARSAL_BODIES are used). Targets with nothing planned
 * are skipped; the sinks are stopped whatever happens.
 */
export function rehearse(
  specs: readonly TargetClientSpec[],
  samples: readonly (readonly ScheduledRequest[])[],
  requests: number,
  clock: Clock,
): Promise<RehearsalResult> {
  return rehearseTwins(
    specs.map((spec) => () => twinOf(spec, clock)),
    samples,
    requests,
    clock,
  );
}
