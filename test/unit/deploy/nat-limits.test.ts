/**
 * A NAT gateway's limits per destination (lib/nat-limits.ts) against the fire function's
 * connections at the declared peak: targets grouped by host and port, the estimate between the
 * requests in flight and the lanes' pools full, and a warning only past 55,000 simultaneous
 * connections or about 900 new ones a second.
 */
import { describe, expect, it } from 'vitest';
import { parseDeploymentConfig } from '../../../lib/config';
import {
  destinationLoads,
  destinationOf,
  NAT_CONNECTIONS_PER_DESTINATION,
  NAT_NEW_CONNECTIONS_PER_SECOND,
  natLimitWarnings,
} from '../../../lib/nat-limits';
import { fireSizingOf } from '../../../lib/sizing';

const VPC = { vpcId: 'vpc-1', subnetIds: ['s'], securityGroupIds: ['g'], availabilityZones: ['a'] };
const sameHost = [
  { name: 'A', url: 'https://llm.example.com/a' },
  { name: 'B', url: 'https://llm.example.com:443/b' },
];

function loadsOf(raw: Record<string, unknown>, region?: string) {
  const config = parseDeploymentConfig({ captureBucket: 'my-capture-bucket', vpc: VPC, ...raw });
  const sizing = fireSizingOf(config);
  return {
    sizing,
    loads: destinationLoads(config, sizing, region),
    warnings: natLimitWarnings(config, sizing, region),
  };
}

describe('NAT gateway limits per destination', () => {
  it("a destination is a host and port (the scheme's default port), or the SageMaker runtime of a region", () => {
    expect(
      destinationOf(
        { name: 'A', kind: 'http', url: 'https://LLM.example.com/v1', path: '/v1/chat/completions' },
        undefined,
      ),
    ).toBe('llm.example.com:443');
    expect(destinationOf({ name: 'A', kind: 'http', url: 'http://10.0.0.5/v1', path: '/' }, undefined)).toBe(
      '10.0.0.5:80',
    );
    expect(destinationOf({ name: 'A', kind: 'http', url: 'http://10.0.0.5:8080', path: '/' }, undefined)).toBe(
      '10.0.0.5:8080',
    );
    expect(destinationOf({ name: 'S', kind: 'sagemaker', endpointName: 'ep' }, 'eu-west-1')).toBe(
      'runtime.sagemaker.eu-west-1.amazonaws.com:443',
    );
    expect(destinationOf({ name: 'S', kind: 'sagemaker', endpointName: 'ep', region: 'us-west-2' }, 'eu-west-1')).toBe(
      'runtime.sagemaker.us-west-2.amazonaws.com:443',
    );
    expect(destinationOf({ name: 'S', kind: 'sagemaker', endpointName: 'ep' }, undefined)).toBe(
      'runtime.sagemaker.<stack region>.amazonaws.com:443',
    );
  });

  it(
    '10,000/s to two targets on one host (2 s median, 30 s p99): about 91,300 connections and 1,522 new a ' +
      'second, over both limits',
    () => {
      const { sizing, loads, warnings } = loadsOf({ peakRequestsPerSecond: 10_000, targets: sameHost });
      expect(sizing).toMatchObject({
        lanesPerSlot: 110,
        connectionsPerTarget: 450,
        meanResponseSeconds: 3.94,
        slotSeconds: 120,
      });
      // A lane: 10,000 / 110 = 90.9 requests/s x 3.94 s = 358.2 in flight; + 3 x sqrt(358.2) = 415.0,
      // 415 connections. Two targets x 110 lanes x 415 = 91,300; in flight 2 x 10,000 x 3.94 =
      // 78,800; pools full 2 x 110 x 450 = 99,000. The slot's lanes open theirs within a minute: 91,300 / 60.
      expect(loads).toEqual([
        {
          destination: 'llm.example.com:443',
          targets: ['A', 'B'],
          requestsPerSecond: 20_000,
          inFlight: 78_800,
          connections: 91_300,
          connectionsCeiling: 99_000,
          newConnectionsPerSecond: 1522,
          newConnectionsPerSecondWithoutReuse: 20_000,
        },
      ]);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.id).toBe('capture-replay:nat-limits:llm.example.com:443');
      const text = warnings[0]!.message;
      expect(text).toContain('llm.example.com:443 (targets A and B)');
      expect(text).toContain('about 91,300 simultaneous connections');
      expect(text).toContain(
        '78,800 requests in flight, at most 99,000), over the 55,000 a NAT gateway address holds to one destination',
      );
      expect(text).toContain('about 1,522 new connections a second');
      expect(text).toContain('20,000 if the target closes each connection), over the 900 or so it opens a second');
      expect(text).toMatch(/more addresses.*more NAT gateways, or lower peakRequestsPerSecond/);
      expect(text).not.toContain('SageMaker');
      expect(text).toContain('https://docs.aws.amazon.com/vpc/latest/userguide/nat-gateway-basics.html');
    },
  );

  it('the same traffic to two hosts: two destinations, each within both limits', () => {
    const { loads, warnings } = loadsOf({
      peakRequestsPerSecond: 10_000,
      targets: [sameHost[0], { name: 'B', url: 'https://other.example.com' }],
    });
    expect(loads.map((d) => [d.destination, d.connections, d.newConnectionsPerSecond])).toEqual([
      ['llm.example.com:443', 45_650, 761],
      ['other.example.com:443', 45_650, 761],
    ]);
    for (const d of loads) {
      expect(d.connections).toBeLessThanOrEqual(NAT_CONNECTIONS_PER_DESTINATION);
      expect(d.newConnectionsPerSecond).toBeLessThanOrEqual(NAT_NEW_CONNECTIONS_PER_SECOND);
    }
    expect(warnings).toEqual([]);
  });

  it('the default peak (50/s) is far within them', () => {
    const { loads, warnings } = loadsOf({ targets: sameHost });
    expect(loads).toHaveLength(1);
    expect(loads[0]!.connections).toBeLessThan(1000);
    expect(warnings).toEqual([]);
  });

  it('short slots: 1,000/s to two targets on one host in 10 s slots opens 913 connections a second, over the rate alone', () => {
    const { sizing, loads, warnings } = loadsOf({ peakRequestsPerSecond: 1000, slotSeconds: 10, targets: sameHost });
    expect(sizing.lanesPerSlot).toBe(11);
    // 2 x 11 lanes x 415 connections = 9,130 each slot, every 10 s.
    expect(loads[0]).toMatchObject({ connections: 9130, newConnectionsPerSecond: 913 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain('within the 55,000');
    expect(warnings[0]!.message).toMatch(
      new RegExp(
        /about 913 new connections a second \(a slot's lanes open theirs at its start; 2,000 if the target /.source +
          /closes each connection\), over the 900 or so/.source,
      ),
    );
  });

  it('SageMaker targets of one region share its runtime; another region is another destination', () => {
    const a = { name: 'A', kind: 'sagemaker', endpointName: 'ep-a' };
    const shared = loadsOf(
      {
        peakRequestsPerSecond: 10_000,
        targets: [a, { name: 'B', kind: 'sagemaker', endpointName: 'ep-b', region: 'us-east-1' }],
      },
      'us-east-1',
    );
    expect(shared.loads.map((d) => [d.destination, d.targets])).toEqual([
      ['runtime.sagemaker.us-east-1.amazonaws.com:443', ['A', 'B']],
    ]);
    expect(shared.warnings.map((w) => w.id)).toEqual([
      'capture-replay:nat-limits:runtime.sagemaker.us-east-1.amazonaws.com:443',
    ]);
    expect(shared.warnings[0]!.message).toContain(
      'reach the SageMaker runtime through an interface VPC endpoint (no NAT gateway)',
    );
    const apart = loadsOf(
      {
        peakRequestsPerSecond: 10_000,
        targets: [a, { name: 'B', kind: 'sagemaker', endpointName: 'ep-b', region: 'eu-west-1' }],
      },
      'us-east-1',
    );
    expect(apart.loads.map((d) => [d.destination, d.targets])).toEqual([
      ['runtime.sagemaker.us-east-1.amazonaws.com:443', ['A']],
      ['runtime.sagemaker.eu-west-1.amazonaws.com:443', ['B']],
    ]);
    expect(apart.warnings).toEqual([]);
  });
});
