/**
 * Issue 19's goal in the template: at `peakRequestsPerSecond: 10000` to two targets, on the
 * configuration's defaults otherwise (LLM responses: median 2 s, p99 30 s), `cdk synth` gives a
 * stack that a default AWS account accepts. Synthesized with cdk.json's feature flags, without
 * bundling (test/support/cdk-app.ts).
 *
 * AWS's limits, each from its page: the describe below.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it, vi } from 'vitest';
import { CaptureReplayStack } from '../../lib/capture-replay-stack';
import { parseDeploymentConfig } from '../../lib/config';
import { templateApp } from '../support/cdk-app';
import type { CfnTemplate } from '../support/iam/template-policies';

vi.setConfig({ testTimeout: 120_000 });

const ACCOUNT_CONCURRENCY = 1000;
const KEPT_UNRESERVED = 100;
const MAX_EVENT_SOURCE_CONCURRENCY = 1000;
const MIN_EVENT_SOURCE_CONCURRENCY = 2;
const MAX_TIMEOUT_S = 900;
const MEMORY_MB = { min: 128, max: 10_240 };

interface FunctionProps {
  MemorySize?: number;
  Timeout?: number;
  ReservedConcurrentExecutions?: number;
}
interface MappingProps {
  FunctionName: { Ref: string };
  ScalingConfig?: { MaximumConcurrency?: number };
}

function synthesize(): CfnTemplate {
  const app = templateApp({ featureFlags: true });
  const config = parseDeploymentConfig({
    captureBucket: 'my-captures',
    targets: [
      { name: 'A', url: 'https://a.example.com' },
      { name: 'B', url: 'https://b.example.com' },
    ],
    peakRequestsPerSecond: 10_000,
  });
  return Template.fromStack(new CaptureReplayStack(app, 'TenThousand', { config })).toJSON() as CfnTemplate;
}

/**
 * AWS's limits, each from its page:
 * - Concurrent executions: 1,000 per Region by default (new accounts less), and reserved
 *   concurrency must leave at least 100 of it unreserved, so at most 900 reserved in all.
 *   https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
 *   https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html
 *   https://docs.aws.amazon.com/lambda/latest/api/API_PutFunctionConcurrency.html
 * - An SQS event source's ScalingConfig.MaximumConcurrency: 2 to 1,000.
 *   https://docs.aws.amazon.com/lambda/latest/api/API_ScalingConfig.html
 *   https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-lambda-eventsourcemapping-scalingconfig.html
 * - A function's timeout: at most 900 s (15 minutes); its memory: 128 MB to 10,240 MB.
 *   https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
 */
describe('10,000 requests/s to two targets on the defaults', () => {
  const t = synthesize();
  const functions = Object.entries(t.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function') as unknown as [
    string,
    { Properties: FunctionProps },
  ][];
  const mappings = Object.values(t.Resources).filter(
    (r) => r.Type === 'AWS::Lambda::EventSourceMapping',
  ) as unknown as { Properties: MappingProps }[];
  const fireIds = functions.map(([id]) => id).filter((id) => id.startsWith('StatelessFire'));

  it('has one fire function fed by one SQS event source', () => {
    expect(fireIds).toHaveLength(1);
    expect(mappings.filter((m) => m.Properties.FunctionName.Ref === fireIds[0])).toHaveLength(1);
  });

  it('reserves for the fire function at most the 900 a default account lets be reserved, and no more than that in all', () => {
    const fire = functions.find(([id]) => id === fireIds[0])![1].Properties;
    expect(fire.ReservedConcurrentExecutions).toBeDefined();
    expect(fire.ReservedConcurrentExecutions).toBeLessThanOrEqual(ACCOUNT_CONCURRENCY - KEPT_UNRESERVED);
    const reserved = functions.reduce((n, [, f]) => n + (f.Properties.ReservedConcurrentExecutions ?? 0), 0);
    expect(reserved).toBeLessThanOrEqual(ACCOUNT_CONCURRENCY - KEPT_UNRESERVED);
  });

  it('gives the fire event source a MaximumConcurrency of 2-1,000, within what the function has reserved', () => {
    const fire = functions.find(([id]) => id === fireIds[0])![1].Properties;
    const max = mappings.find((m) => m.Properties.FunctionName.Ref === fireIds[0])!.Properties.ScalingConfig
      ?.MaximumConcurrency;
    expect(max).toBeGreaterThanOrEqual(MIN_EVENT_SOURCE_CONCURRENCY);
    expect(max).toBeLessThanOrEqual(MAX_EVENT_SOURCE_CONCURRENCY);
    // More than the reserved concurrency would have Lambda throttle the event source's invokes.
    expect(max).toBeLessThanOrEqual(fire.ReservedConcurrentExecutions!);
    // Every event source's maximum within AWS's range too.
    for (const m of mappings) {
      const c = m.Properties.ScalingConfig?.MaximumConcurrency;
      if (c !== undefined)
        expect(c, m.Properties.FunctionName.Ref).toBeGreaterThanOrEqual(MIN_EVENT_SOURCE_CONCURRENCY);
      if (c !== undefined) expect(c, m.Properties.FunctionName.Ref).toBeLessThanOrEqual(MAX_EVENT_SOURCE_CONCURRENCY);
    }
  });

  it("keeps every function within Lambda's timeout and memory limits", () => {
    for (const [id, f] of functions) {
      expect(f.Properties.Timeout ?? 3, id).toBeLessThanOrEqual(MAX_TIMEOUT_S);
      expect(f.Properties.MemorySize ?? 128, id).toBeGreaterThanOrEqual(MEMORY_MB.min);
      expect(f.Properties.MemorySize ?? 128, id).toBeLessThanOrEqual(MEMORY_MB.max);
    }
  });
});
