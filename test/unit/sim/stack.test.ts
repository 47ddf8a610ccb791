/**
 * The stack the simulator runs is the one `cdk synth` builds for the same traffic: every
 * setting it takes from lib/ (memory, timeouts, batch sizes, maximum and reserved concurrency,
 * visibility timeouts, redrive, and the fire function's lead, grace, shard size and
 * connections) read back from the synthesized template (no bundling).
 */
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { CaptureReplayStack } from '../../../lib/capture-replay-stack';
import { parseDeploymentConfig } from '../../../lib/config';
import { ENV } from '../../../lambdas/runtime/config';
import { stackFor, type FunctionSettings } from '../../../sim/settings';
import { templateApp } from '../../support/cdk-app';

type Props = Record<string, unknown>;

function synthesized(rate: number, targets: number) {
  const app = templateApp();
  const config = parseDeploymentConfig({
    peakRequestsPerSecond: rate,
    targets: Array.from({ length: targets }, (_, i) => ({ name: `t${i}`, url: 'https://target.example.com' })),
  });
  const t = Template.fromStack(new CaptureReplayStack(app, 'SimStack', { config }));
  const fns = t.findResources('AWS::Lambda::Function') as Record<string, { Properties: Props }>;
  const mappings = Object.values(t.findResources('AWS::Lambda::EventSourceMapping')) as { Properties: Props }[];
  const queues = t.findResources('AWS::SQS::Queue') as Record<string, { Properties: Props }>;
  const read = (prefix: string): { settings: FunctionSettings; env: Record<string, unknown> } => {
    const [id, fn] = Object.entries(fns).find(([k]) => k.startsWith(`Stateless${prefix}`)) ?? [];
    const mapping = mappings.find((m) => (m.Properties.FunctionName as { Ref?: string }).Ref === id) as {
      Properties: Props;
    };
    const queueId = ((mapping.Properties.EventSourceArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'] ??
      [])[0] as string;
    const p = (fn as { Properties: Props }).Properties;
    return {
      settings: {
        memoryMb: p.MemorySize as number,
        timeoutS: p.Timeout as number,
        batchSize: mapping.Properties.BatchSize as number,
        batchingWindowS: (mapping.Properties.MaximumBatchingWindowInSeconds as number | undefined) ?? 0,
        maxConcurrency: ((mapping.Properties.ScalingConfig as { MaximumConcurrency?: number } | undefined)
          ?.MaximumConcurrency ?? null) as number | null,
        reservedConcurrency: (p.ReservedConcurrentExecutions as number | undefined) ?? null,
        visibilityTimeoutS: (queues[queueId] as { Properties: Props }).Properties.VisibilityTimeout as number,
      },
      env: (p.Environment as { Variables: Record<string, unknown> }).Variables,
    };
  };
  const replay = Object.values(queues).find(
    (q) =>
      (q.Properties.RedrivePolicy as { maxReceiveCount?: number } | undefined)?.maxReceiveCount !== undefined &&
      (q.Properties.VisibilityTimeout as number) === read('Fire').settings.visibilityTimeoutS,
  );
  return {
    fire: read('Fire'),
    ingest: read('Ingest'),
    collect: read('Collect'),
    maxReceiveCount: (replay!.Properties.RedrivePolicy as { maxReceiveCount: number }).maxReceiveCount,
  };
}

describe('the simulated stack is the synthesized one', () => {
  // One synthesis (no bundling) takes seconds, tens of them on a busy machine.
  it.each([
    [200, 2],
    [10_000, 2],
  ])('at %i requests/s to %i targets', { timeout: 180_000 }, (rate, targets) => {
    const t = synthesized(rate, targets);
    const { stack, problems } = stackFor({ ratePerTarget: rate, targets, seconds: 60, latencyP50S: 1, latencyP99S: 2 });
    expect(problems).toEqual([]);
    expect(stack.fire).toEqual(t.fire.settings);
    expect(stack.ingest).toEqual(t.ingest.settings);
    expect(stack.collect).toEqual(t.collect.settings);
    expect(stack.maxReceiveCount).toBe(t.maxReceiveCount);
    const env = t.fire.env;
    expect(String(stack.leadS * 1000)).toBe(env[ENV.leadMs]);
    expect(String(stack.graceS * 1000)).toBe(env[ENV.graceMs]);
    expect(String(stack.slotS * 1000)).toBe(env[ENV.slotMs]);
    expect(String(stack.maxShardRequests)).toBe(env[ENV.maxShardRequests]);
    expect(String(stack.connectionsPerTarget)).toBe(env[ENV.maxConnectionsPerTarget]);
    expect(String(stack.requestTimeoutS * 1000)).toBe(env[ENV.requestTimeoutMs]);
    expect(String(stack.lateToleranceMs)).toBe(env[ENV.lateToleranceMs]);
    expect(stack.latePolicy).toBe(env[ENV.latePolicy]);
  });

  it('says why synth refuses a traffic, and still gives the settings it would have', () => {
    // 10,000/s to two targets needs 650 concurrent fire invocations: more than an account of 500 has.
    const { stack, problems } = stackFor({
      ratePerTarget: 10_000,
      targets: 2,
      seconds: 60,
      latencyP50S: 2,
      latencyP99S: 30,
      accountConcurrency: 500,
    });
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((p) => p.startsWith('synth refuses: '))).toBe(true);
    expect(stack.fire.maxConcurrency).toBeGreaterThan(400);
  });
});
