/**
 * The plan's options in every configuration that holds them (the deployment configuration, a
 * schedule, the functions' environment) are checked by the plan's own rules
 * (lambdas/core/plan/plan-option-schema.ts), each problem said under the option's key there.
 */
import { describe, expect, it } from 'vitest';
import { validatePlanOptions } from '../../../lambdas/core/plan/plan';
import { planOptionProblem } from '../../../lambdas/core/plan/plan-option-schema';
import { scheduleConfigSchema } from '../../../lambdas/core/scheduled-runs/contract';
import { ENV, parseRuntimeConfig } from '../../../lambdas/runtime/config';
import { DeploymentConfigError, parseDeploymentConfig } from '../../../lib/config';

const base = { captureBucket: 'my-captures', targets: [{ name: 'A', url: 'https://a.example.com' }] };

function deploymentProblems(raw: unknown): string[] {
  try {
    parseDeploymentConfig(raw);
  } catch (error) {
    if (!(error instanceof DeploymentConfigError)) throw error;
    return error.message.split('\n').slice(1);
  }
  return [];
}

describe("the plan's options in a configuration", () => {
  it("says the plan's own message, the one the plan gives the same value", () => {
    const planSays = validatePlanOptions({
      runId: 'r',
      targetKind: 'openai-chat',
      timeScale: 0,
      intraSecond: 'spread',
    });
    expect(planOptionProblem('timeScale', 0)).toBe(planSays[0]?.message);
    expect(planOptionProblem('timeScale', 2)).toBeNull();
  });

  it('the deployment configuration names each by its key, the plan refusing what every run would', () => {
    expect(
      deploymentProblems({ ...base, timeScale: 0, amplify: 1001, intraSecond: 'even', modelOverride: '  ' }),
    ).toEqual([
      '- captureReplay.modelOverride: must not be empty',
      '- captureReplay.timeScale: must be a number >= 0.001, 1000 times slower than captured (got 0)',
      '- captureReplay.amplify: must be a number in (0, 1000] (got 1001)',
      "- captureReplay.intraSecond: must be 'spread' or 'burst' (got even)",
    ]);
    expect(
      deploymentProblems({ ...base, timeScale: 0.001, amplify: 1000, intraSecond: 'burst', modelOverride: 'm' }),
    ).toEqual([]);
  });

  it("a schedule names them by the schedule's keys: sample and limit are the plan's sampleRate and limit", () => {
    const schedule = {
      name: 'nightly',
      expression: 'cron(0 2 * * ? *)',
      window: { lastHours: 1 },
      targets: ['A', 'B'],
    };
    const result = scheduleConfigSchema.safeParse({ ...schedule, timeScale: 1e-9, sample: 2, limit: 1.5, amplify: 0 });
    expect(result.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'timeScale: must be a number >= 0.001, 1000 times slower than captured (got 1e-9)',
      'sample: must be in (0, 1] (got 2)',
      'limit: must be a whole number > 0 (got 1.5)',
      'amplify: must be a number in (0, 1000] (got 0)',
    ]);
    expect(
      scheduleConfigSchema.safeParse({ ...schedule, timeScale: 0.001, sample: 1, limit: 1, amplify: 0.5 }).success,
    ).toBe(true);
  });

  it("the functions' environment names them by their variables", () => {
    const env = {
      [ENV.resultsBucket]: 'results',
      [ENV.replayQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/replay',
      [ENV.collectQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/collect',
      [ENV.targets]: JSON.stringify([{ name: 'A', url: 'https://a.example.com' }]),
    };
    expect(parseRuntimeConfig({ ...env, [ENV.timeScale]: '2', [ENV.amplify]: '0.5' })).toMatchObject({
      timeScale: 2,
      amplify: 0.5,
    });
    expect(() =>
      parseRuntimeConfig({ ...env, [ENV.timeScale]: '0.0001', [ENV.amplify]: '5000', [ENV.modelOverride]: ' ' }),
    ).toThrow(
      [
        'invalid configuration:',
        '- TIME_SCALE: must be a number >= 0.001, 1000 times slower than captured (got 0.0001)',
        '- AMPLIFY: must be a number in (0, 1000] (got 5000)',
        '- MODEL_OVERRIDE: must not be empty',
      ].join('\n'),
    );
  });
});
