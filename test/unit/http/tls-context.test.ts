/**
 * Every TLS connection to a target shares the process's client context (lambdas/adapters/http/tls-context.ts):
 * spares the reserve opens, connections an undici pool opens itself, and the SageMaker client's https agent.
 * `tls.connect` is watched (its options), the connections go nowhere (a closed loopback port).
 */
import tls from 'node:tls';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createOpenAITarget } from '../../../lambdas/adapters/http/openai-target';
import { createSocketReserve } from '../../../lambdas/adapters/http/socket-reserve';
import { clientTlsContext } from '../../../lambdas/adapters/http/tls-context';
import { sageMakerRuntimeClientConfig } from '../../../lambdas/adapters/sagemaker/sagemaker-target';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import { until } from '../../support/until';

const CLOSED = 'https://127.0.0.1:9';

afterEach(() => vi.restoreAllMocks());

/** The secure contexts tls.connect was given, one per call. */
function watchConnects() {
  const contexts: unknown[] = [];
  const real = tls.connect.bind(tls);
  vi.spyOn(tls, 'connect').mockImplementation(((options: tls.ConnectionOptions, ...rest: unknown[]) => {
    contexts.push(options?.secureContext);
    return (real as (...a: unknown[]) => tls.TLSSocket)(options, ...rest);
  }) as typeof tls.connect);
  return contexts;
}

describe('one TLS client context', () => {
  it("the reserve's spares are opened with it", async () => {
    const contexts = watchConnects();
    const reserve = createSocketReserve(new URL(CLOSED));
    reserve.warm(2);
    await until(() => reserve.stats().dropped === 2, 'both refused', 10_000, 5);
    reserve.close();
    expect(contexts).toHaveLength(2);
    expect(contexts.every((c) => c === clientTlsContext())).toBe(true);
  });

  it('a pool without a reserve connects with it too', async () => {
    const contexts = watchConnects();
    const target = createOpenAITarget({ name: 't', baseUrl: CLOSED, timeoutMs: 5_000, clock: systemClock });
    const result = await target.send({
      requestId: 'r',
      correlationId: 'c',
      contentType: 'application/json',
      body: new TextEncoder().encode('{}'),
      streaming: false,
    });
    await target.close();
    expect(result.error?.type).toBe('ConnectionError');
    expect(contexts.length).toBeGreaterThan(0);
    expect(contexts.every((c) => c === clientTlsContext())).toBe(true);
  });

  it("the SageMaker client's https agent carries it", async () => {
    const config = sageMakerRuntimeClientConfig({ region: 'us-east-1', timeoutMs: 5_000 });
    // NodeHttpHandler resolves its options (the agents among them) into `configProvider`.
    const handler = config.requestHandler as unknown as {
      configProvider: Promise<{ httpsAgent: { options: tls.ConnectionOptions } }>;
    };
    expect((await handler.configProvider).httpsAgent.options.secureContext).toBe(clientTlsContext());
  });
});
