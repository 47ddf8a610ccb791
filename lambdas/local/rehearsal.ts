/**
 * The CLI's rehearsal before schedule zero (the shared part, and why: core/fire/rehearsal.ts):
 * each target's twin is its client kind built from the same spec, pointed at the bundled mocks
 * started in this process (answering at once, with the same streaming or not).
 */
import type { Clock } from '../ports';
import { collectGarbage, promoteYoungGeneration } from '../adapters/full-gc';
import { rehearsalSageMakerClient } from '../adapters/sagemaker/rehearsal-sink';
import { createSageMakerTarget } from '../adapters/sagemaker/sagemaker-target';
import { rehearseTwins, type RehearsalResult, type Twin } from '../core/fire/rehearsal';
import type { ScheduledRequest } from '../core/types';
import { startMockSageMaker } from '../mocks/mock-sagemaker';
import { startMockServer } from '../mocks/mock-server';
import { isCheapConnect } from './open-ahead';
import type { MeasuredConnect } from './preflight';
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

/** How many passes a thread rehearses, and so how it collects garbage before schedule zero (collectBeforeZero). */
export type RehearsalPasses = 1 | 2;

/**
 * Two passes when every target's preflight connect was cheap (open-ahead.ts: the lead opens
 * spares for the first 100 ms only), else one. A full collection drops the optimised code that
 * names objects none of which is alive any more, and after a rehearsal that is much of the hot
 * path (a finished response's maps, the twin's closures; V8's --trace-deopt calls it "weak
 * objects"). Made just before schedule zero, as one pass has it, the run's first second compiles
 * that code again while it fires. With two passes the full collection runs between them, the
 * second compiles the code again, and just before zero only the young generation is collected.
 * Over TLS the lead opens a second's worth of spares, V8 collects in full on its own during it
 * and drops the code anyway, and the second pass only made the run later. Measured, both ways:
 * bench/RESULTS.md, "The first second's compiles, and a rehearsal in two passes".
 */
export function rehearsalPasses(
  connects: readonly (MeasuredConnect | null)[] | undefined,
  targets: number,
): RehearsalPasses {
  if (!connects || targets === 0) return 1;
  for (let i = 0; i < targets; i++) if (!isCheapConnect(connects[i] ?? null)) return 1;
  return 2;
}

/** This thread's last rehearsal made a second pass: the full collection is made, only scavenges are left. */
let secondPassMade = false;

/**
 * Runs each target's twin `requests` times against its sink, with that target's planned
 * requests (`samples[i]`, the first REHEARSAL_BODIES are used); with two `passes`, collects
 * garbage in full (`collect`) and runs them `requests` times again. Targets with nothing
 * planned are skipped; the sinks are stopped whatever happens. Why two: rehearsalPasses.
 */
export async function rehearse(
  specs: readonly TargetClientSpec[],
  samples: readonly (readonly ScheduledRequest[])[],
  requests: number,
  clock: Clock,
  passes: RehearsalPasses = 1,
  collect: () => void = collectGarbage,
): Promise<RehearsalResult> {
  const startedNs = clock.nowNs();
  const twins = specs.map((spec) => () => twinOf(spec, clock));
  secondPassMade = false;
  const first = await rehearseTwins(twins, samples, requests, clock);
  if (passes === 1 || first.requests === 0) return first;
  collect();
  const second = await rehearseTwins(twins, samples, requests, clock);
  secondPassMade = true;
  return {
    requests: first.requests + second.requests,
    succeeded: first.succeeded + second.succeeded,
    ms: Number(clock.nowNs() - startedNs) / 1e6,
  };
}

/**
 * The collection just before schedule zero, once the connections opened ahead are made
 * (open-ahead.ts): after a second pass, two scavenges (what is alive, the prepared requests and
 * the connections, is promoted; no code is dropped: full-gc.ts); otherwise a full collection.
 */
export function collectBeforeZero(): void {
  if (secondPassMade) promoteYoungGeneration();
  else collectGarbage();
}
