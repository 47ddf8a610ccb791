/**
 * The CLI's targets as plain data, and the one place their clients are built: in the main
 * thread, and in each fire worker (fire-workers.ts), which builds its own clients (its own
 * undici pool, its own SageMaker client) from the same spec. A spec crosses the thread
 * boundary as a structured clone, so it holds strings and numbers only (no URL object, no
 * function). Either kind's client opens connections ahead (`openAhead`: an HTTP target's undici
 * pool's socket reserve, a SageMaker target's SDK agents' reserve; open-ahead.ts opens them
 * during the lead).
 */
import type { Clock, TargetClient } from '../ports';
import { createOpenAITarget } from '../adapters/http/openai-target';
import { createSageMakerTarget } from '../adapters/sagemaker/sagemaker-target';
import type { SageMakerTargetSpec } from '../adapters/sagemaker/target-spec';
import { regionConfig } from './aws-region';

interface CommonSpec {
  name: string;
  timeoutMs: number;
  /** 0: no response text kept in error messages (--no-response-excerpts); absent: the default. */
  responseExcerptChars?: number;
}

export type TargetClientSpec =
  | (CommonSpec & { kind: 'http'; baseUrl: string; path: string; apiKey?: string })
  | (CommonSpec & { kind: 'sagemaker'; sagemaker: SageMakerTargetSpec });

export function createTargetClient(spec: TargetClientSpec, clock: Clock): TargetClient {
  const excerpts = spec.responseExcerptChars !== undefined ? { responseExcerptChars: spec.responseExcerptChars } : {};
  return spec.kind === 'sagemaker'
    ? createSageMakerTarget({
        name: spec.name,
        ...spec.sagemaker,
        ...regionConfig(spec.sagemaker.region),
        timeoutMs: spec.timeoutMs,
        clock,
        ...excerpts,
      })
    : createOpenAITarget({
        name: spec.name,
        baseUrl: spec.baseUrl,
        path: spec.path,
        timeoutMs: spec.timeoutMs,
        clock,
        reserveConnections: true,
        ...(spec.apiKey ? { apiKey: spec.apiKey } : {}),
        ...excerpts,
      });
}
