/**
 * `cdk synth` warns when `vpc` is set and one destination's connections at the peak pass a NAT
 * gateway's limits (lib/nat-limits.ts; test/unit/deploy/nat-limits.test.ts has the arithmetic):
 * at 10,000 requests/s to two targets on one host, not at the default peak, and not without a
 * VPC (the function then reaches its targets without a NAT gateway of the user's).
 */
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { CaptureReplayStack } from '../../lib/capture-replay-stack';
import { parseDeploymentConfig } from '../../lib/config';
import { templateApp } from '../support/cdk-app';

const VPC = {
  vpcId: 'vpc-1',
  subnetIds: ['subnet-1', 'subnet-2'],
  securityGroupIds: ['sg-1'],
  availabilityZones: ['us-east-1a', 'us-east-1b'],
};
const targets = [
  { name: 'A', url: 'https://llm.example.com' },
  { name: 'B', url: 'https://llm.example.com' },
];

/** The NAT warnings of a stack synthesized from `raw` (templateApp: no code bundled). */
function natWarnings(id: string, raw: Record<string, unknown>): string[] {
  const stack = new CaptureReplayStack(templateApp(), id, {
    config: parseDeploymentConfig({ captureBucket: 'my-capture-bucket', targets, ...raw }),
  });
  return Annotations.fromStack(stack)
    .findWarning('*', Match.stringLikeRegexp('NAT gateway'))
    .map((w) => String(w.entry.data));
}

describe('NAT gateway limits at synth', () => {
  it('a VPC at 10,000 requests/s to two targets on one host: one warning for the host, with the estimate, the ' +
    'limits and what to do', () => {
    const warnings = natWarnings('NatPeak', { vpc: VPC, peakRequestsPerSecond: 10_000 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      new RegExp(
        /^capture-replay: llm\.example\.com:443 \(targets A and B\), if the fire function reaches it /.source +
          /through a NAT gateway: at the peak about 91,300 simultaneous connections/.source,
      ),
    );
    expect(warnings[0]).toContain('over the 55,000 a NAT gateway address holds to one destination');
    expect(warnings[0]).toContain('about 1,522 new connections a second');
    expect(warnings[0]).toContain('lower peakRequestsPerSecond');
    expect(warnings[0]).toContain('[ack: capture-replay:nat-limits:llm.example.com:443]');
  }, 120_000);

  it('no warning at the default peak with a VPC, nor at 10,000 requests/s without one', () => {
    expect(natWarnings('NatDefault', { vpc: VPC })).toEqual([]);
    expect(natWarnings('NatNoVpc', { peakRequestsPerSecond: 10_000 })).toEqual([]);
  }, 120_000);
});
