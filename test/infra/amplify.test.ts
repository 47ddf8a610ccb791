/**
 * Amplified replay in the stack (issue 20 item 5): `amplify` for new capture files (file and
 * mirror modes) reaches the ingest function's environment, a schedule's reaches the plan
 * function's, the fire function is sized for the amplified peak (the declared captured peak
 * times the largest factor any run of the deployment uses), and a deployment without it keeps
 * its environment. Synthesized without bundling (nothing here reads the code).
 */
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { CaptureReplayStack } from '../../lib/capture-replay-stack';
import { DeploymentConfigError, parseDeploymentConfig } from '../../lib/config';
import { amplifiedPeak, fireSizingOf } from '../../lib/sizing';
import { ENV, parseRuntimeConfig } from '../../lambdas/runtime/config';
import { templateApp } from '../support/cdk-app';

const targets = [
  { name: 'A', url: 'https://a.example.com' },
  { name: 'B', url: 'https://b.example.com' },
];
const nightly = {
  name: 'peak2x',
  expression: 'cron(0 2 * * ? *)',
  timezone: 'UTC',
  window: { daysAgo: 1, from: '14:00', to: '15:00' },
  targets: ['A', 'B'],
};

function synth(raw: Record<string, unknown>, id: string) {
  const app = templateApp();
  const template = Template.fromStack(
    new CaptureReplayStack(app, id, {
      config: parseDeploymentConfig({ captureBucket: 'my-capture-bucket', targets, ...raw }),
    }),
  );
  const fn = (name: string) =>
    Object.entries(template.findResources('AWS::Lambda::Function')).find(([logicalId]) =>
      logicalId.startsWith(`Stateless${name}`),
    )![1] as {
      Properties: {
        Environment: { Variables: Record<string, string> };
        MemorySize: number;
        ReservedConcurrentExecutions?: number;
      };
    };
  return { template, fn };
}

/** The sizing of the same targets declared at `peak` requests per second, nothing amplified. */
const sized = (peak: number) =>
  fireSizingOf(parseDeploymentConfig({ captureBucket: 'my-capture-bucket', targets, peakRequestsPerSecond: peak }));

describe('amplify in the deployment', () => {
  it('new files at 2x (mirror mode too) and a schedule at 3x: each function gets its factor, the fire function ' +
    'is sized for 3x the declared peak', () => {
    const { template, fn } = synth(
      { mode: 'mirror', amplify: 2, peakRequestsPerSecond: 40, schedules: [{ ...nightly, amplify: 3 }] },
      'Amplified',
    );
    expect(fn('Ingest').Properties.Environment.Variables[ENV.amplify]).toBe('2');
    const schedules = JSON.parse(fn('Plan').Properties.Environment.Variables[ENV.schedules]!) as { amplify?: number }[];
    expect(schedules.map((s) => s.amplify)).toEqual([3]);
    const want = sized(120);
    expect(want).not.toEqual(sized(40));
    expect(fn('Fire').Properties).toMatchObject({
      MemorySize: want.memoryMb,
      ReservedConcurrentExecutions: want.maxConcurrency,
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: want.batchSize,
      ScalingConfig: { MaximumConcurrency: want.maxConcurrency },
    });
    // What the ingest function reads from that environment.
    const runtime = parseRuntimeConfig({
      ...fn('Ingest').Properties.Environment.Variables,
      [ENV.resultsBucket]: 'results-bucket',
      [ENV.replayQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/replay',
      [ENV.collectQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/collect',
    });
    expect(runtime.amplify).toBe(2);
  }, 120_000);

  it('without amplify: no AMPLIFY variable, the fire function sized for the declared peak', () => {
    const { fn } = synth({ peakRequestsPerSecond: 40 }, 'Plain');
    expect(Object.keys(fn('Ingest').Properties.Environment.Variables)).not.toContain(ENV.amplify);
    expect(fn('Fire').Properties).toMatchObject({
      MemorySize: sized(40).memoryMb,
      ReservedConcurrentExecutions: sized(40).maxConcurrency,
    });
  }, 120_000);

  it('the amplified peak counts the runs that happen: new files only when replayed, every schedule', () => {
    expect(
      amplifiedPeak({ peakRequestsPerSecond: 10, amplify: 4, autoReplay: false, schedules: [{ amplify: 2 }, {}] }),
    ).toBe(20);
    expect(
      amplifiedPeak({ peakRequestsPerSecond: 10, amplify: 4, autoReplay: true, schedules: [{ amplify: 2 }] }),
    ).toBe(40);
    expect(amplifiedPeak({ peakRequestsPerSecond: 10, amplify: 0.5, schedules: [] })).toBe(5);
    expect(amplifiedPeak({ peakRequestsPerSecond: 10, autoReplay: false, schedules: [] })).toBe(10);
  });

  it('refuses a factor that is not in (0, 1000], for new files and for a schedule, by path', () => {
    let message = '';
    try {
      parseDeploymentConfig({
        captureBucket: 'my-capture-bucket',
        targets,
        amplify: 0,
        schedules: [{ ...nightly, amplify: 1001 }],
      });
    } catch (error) {
      expect(error).toBeInstanceOf(DeploymentConfigError);
      message = (error as Error).message;
    }
    expect(message).toMatch(/captureReplay\.amplify: .*0/);
    expect(message).toMatch(/captureReplay\.schedules\.0\.amplify: .*1000/);
  });
});
