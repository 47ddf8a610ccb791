/**
 * The fire handler's warm-up state is the process's (lambdas/handlers/fire.ts): what a process
 * has rehearsed and its invocations under way are shared by every handler it makes, as the
 * optimised code and the heap a full collection pauses are. A harness that makes one handler
 * per concurrent invocation (test/support/aws-meter.ts LambdaMeter) then rehearses once, and
 * never pauses one invocation's slot with another's full collection.
 */
import type { Context, SQSEvent } from 'aws-lambda';
import { expect, it, vi } from 'vitest';
import type * as WarmUpModule from '../../../lambdas/handlers/fire-warm-up';
import type { WarmUpState } from '../../../lambdas/handlers/fire-warm-up';
import type { Deps } from '../../../lambdas/runtime/deps';

const seen = vi.hoisted(() => ({ states: [] as unknown[] }));
vi.mock('../../../lambdas/handlers/fire-warm-up', async (importOriginal) => {
  const real = await importOriginal<typeof WarmUpModule>();
  class RecordingWarmUp extends real.InvocationWarmUp {
    constructor(deps: Deps, state: WarmUpState) {
      super(deps, state);
      seen.states.push(state);
    }
  }
  return { ...real, InvocationWarmUp: RecordingWarmUp };
});

// The files of a worker share its modules (vitest.config.ts): another may have loaded the
// handler with the real warm-up already. Loaded afresh, it gets the recording one.
vi.resetModules();
const { makeFireHandler } = await import('../../../lambdas/handlers/fire');

it('every handler of a process warms up with one state: rehearsed once, invocations counted together', async () => {
  const deps = { clock: { resync: () => undefined, nowNs: () => 0n } } as unknown as Deps;
  const first = makeFireHandler(() => deps);
  const second = makeFireHandler(() => deps);
  const empty: SQSEvent = { Records: [] };
  await Promise.all([
    first(empty, { awsRequestId: 'one' } as Context),
    second(empty, { awsRequestId: 'two' } as Context),
  ]);
  expect(seen.states).toHaveLength(2);
  expect(seen.states[0]).toBe(seen.states[1]);
  expect((seen.states[0] as WarmUpState).active).toBe(0);
});
