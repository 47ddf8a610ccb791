/**
 * What the SageMaker target's integration files share: fake static credentials in the environment (as the SDK's
 * default chain reads them) with every setting of the machine's that could take part cleared, and small builders
 * for targets, chat bodies and requests.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createSageMakerTarget, type SageMakerTargetOptions } from '../../lambdas/adapters/sagemaker/sagemaker-target';
import { systemClock } from '../../lambdas/adapters/system-clock';
import type { TargetClient, TargetRequest } from '../../lambdas/ports';

export const REGION = 'eu-west-3';
export const ACCESS_KEY = 'AKIDEXAMPLE';
const CLEARED = [
  'AWS_PROFILE',
  'AWS_DEFAULT_PROFILE',
  'AWS_ENDPOINT_URL',
  'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS',
  'AWS_DEFAULT_REGION',
  'AWS_MAX_ATTEMPTS',
  'AWS_RETRY_MODE',
];

/** The environment for setEnv: fake credentials, nothing of the machine's (`dir` holds no config files). */
export function sageMakerTestEnv(dir: string): Record<string, string | undefined> {
  return {
    AWS_ACCESS_KEY_ID: ACCESS_KEY,
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    AWS_SESSION_TOKEN: 'fake-session-token',
    AWS_REGION: REGION,
    ...Object.fromEntries(CLEARED.map((k) => [k, undefined])),
    AWS_CONFIG_FILE: join(dir, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
  };
}

/** A target named B on ep-chat (10 s timeout) unless `extra` says otherwise, kept in `targets` to be closed. */
export function sageMakerTestTarget(
  targets: TargetClient[],
  extra: Partial<SageMakerTargetOptions> = {},
): TargetClient {
  const t = createSageMakerTarget({
    name: 'B',
    endpointName: 'ep-chat',
    timeoutMs: 10_000,
    clock: systemClock,
    ...extra,
  });
  targets.push(t);
  return t;
}

export const chat = (extra: object = {}) =>
  Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'hi there' }], ...extra }));

export function request(body: Uint8Array, extra: Partial<TargetRequest> = {}): TargetRequest {
  return {
    requestId: randomUUID(),
    correlationId: 'corr',
    contentType: 'application/json',
    body,
    streaming: false,
    ...extra,
  };
}
