/**
 * The functions' side of issue 18's settings: AUTO_REPLAY_TARGETS (the targets new capture
 * files replay to, a JSON list the stack writes for the ingest function) and
 * SECRETS_MAX_AGE_SECONDS (the fire function's secrets cache), and the ingest's choice of
 * targets from them.
 */
import { describe, expect, it } from 'vitest';
import { ingestTargets } from '../../../lambdas/handlers/ingest';
import { ENV, parseRuntimeConfig } from '../../../lambdas/runtime/config';

const env = {
  [ENV.resultsBucket]: 'results',
  [ENV.replayQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/1/replay',
  [ENV.collectQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/1/collect',
  [ENV.targets]: '[{"name":"A","url":"https://a.example.com"},{"name":"B","kind":"sagemaker","endpointName":"ep"}]',
};
const problems = (extra: Record<string, string>) => {
  try {
    parseRuntimeConfig({ ...env, ...extra });
  } catch (error) {
    return (error as Error).message.split('\n').slice(1);
  }
  throw new Error('expected the configuration to be refused');
};

describe('AUTO_REPLAY_TARGETS', () => {
  it('absent: every target replays new captures', () => {
    const config = parseRuntimeConfig(env);
    expect(config.autoReplayTargets).toBeUndefined();
    expect(ingestTargets(config).map((t) => t.name)).toEqual(['A', 'B']);
  });

  it("a subset, in the configured order whatever the list's", () => {
    expect(ingestTargets(parseRuntimeConfig({ ...env, [ENV.autoReplayTargets]: '["B"]' })).map((t) => t.name)).toEqual([
      'B',
    ]);
    expect(
      ingestTargets(parseRuntimeConfig({ ...env, [ENV.autoReplayTargets]: '["B","A"]' })).map((t) => t.name),
    ).toEqual(['A', 'B']);
  });

  it('refuses a name that is not a target, an empty list and text that is not JSON', () => {
    expect(problems({ [ENV.autoReplayTargets]: '["C"]' })).toEqual([
      '- AUTO_REPLAY_TARGETS: "C" is not one of the targets (A, B)',
    ]);
    expect(problems({ [ENV.autoReplayTargets]: '[]' })[0]).toMatch(/^- AUTO_REPLAY_TARGETS: /);
    expect(problems({ [ENV.autoReplayTargets]: 'A' })).toEqual(['- AUTO_REPLAY_TARGETS: not JSON']);
  });
});

describe('SECRETS_MAX_AGE_SECONDS', () => {
  it('is an optional integer, 0 to 3600', () => {
    expect(parseRuntimeConfig(env).secretsMaxAgeSeconds).toBeUndefined();
    expect(parseRuntimeConfig({ ...env, [ENV.secretsMaxAgeSeconds]: '0' }).secretsMaxAgeSeconds).toBe(0);
    expect(parseRuntimeConfig({ ...env, [ENV.secretsMaxAgeSeconds]: '300' }).secretsMaxAgeSeconds).toBe(300);
    for (const bad of ['3601', '-1', '1.5', 'five'])
      expect(problems({ [ENV.secretsMaxAgeSeconds]: bad })[0], bad).toMatch(/^- SECRETS_MAX_AGE_SECONDS: /);
  });
});
