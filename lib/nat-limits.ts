/**
 * What a NAT gateway can carry to one destination, against what the fire function needs of it
 * at the declared peak. Pure; `cdk synth` warns with it when `vpc` is set (the targets may be
 * reached through a NAT gateway), and docs/deploy.md#vpc says the rule. AWS's limits, what a
 * destination is and how the connections are estimated: docs/sizing.md#through-a-nat-gateway.
 */
import type { TargetConfig } from '../lambdas/runtime/config';
import { amplifiedPeak, type AmplifiedRuns, type FireSizing } from './sizing';

export const NAT_GATEWAY_DOC = 'https://docs.aws.amazon.com/vpc/latest/userguide/nat-gateway-basics.html';
/** Simultaneous connections one NAT gateway address holds to one destination. */
export const NAT_CONNECTIONS_PER_DESTINATION = 55_000;
/** New connections a second to one destination (AWS: about 900, about 55,000 a minute). */
export const NAT_NEW_CONNECTIONS_PER_SECOND = 900;

export interface DestinationLoad {
  /** `host:port`. */
  destination: string;
  targets: string[];
  /** Requests a second to the destination at the peak (every target gets the whole traffic). */
  requestsPerSecond: number;
  /** Requests in flight at the peak: requests a second x the mean response. */
  inFlight: number;
  /** The estimate: each lane's pool at its busiest, for every lane of a slot. */
  connections: number;
  /** Every lane of a slot with its pool full. */
  connectionsCeiling: number;
  /** The connections a slot's lanes open, over a minute (or over the slot, when shorter). */
  newConnectionsPerSecond: number;
  /** One connection per request: a target that does not keep connections alive. */
  newConnectionsPerSecondWithoutReuse: number;
}

export interface NatLimitsInput extends AmplifiedRuns {
  targets: readonly TargetConfig[];
}

/** A target's destination: its URL's host and port, or the SageMaker runtime of its region (`region`: the stack's, when known). */
export function destinationOf(t: TargetConfig, region: string | undefined): string {
  if (t.kind === 'sagemaker') return `runtime.sagemaker.${t.region ?? region ?? '<stack region>'}.amazonaws.com:443`;
  const url = new URL(t.url);
  return `${url.hostname}:${url.port || (url.protocol === 'http:' ? '80' : '443')}`;
}

/** The connections a target needs at the peak, grouped by destination. */
export function destinationLoads(config: NatLimitsInput, sizing: FireSizing, region?: string): DestinationLoad[] {
  const peak = amplifiedPeak(config);
  const lanes = sizing.lanesPerSlot;
  const laneInFlight = (peak / lanes) * sizing.meanResponseSeconds;
  const perLane = Math.min(sizing.connectionsPerTarget, Math.ceil(laneInFlight + 3 * Math.sqrt(laneInFlight)));
  const byDestination = new Map<string, string[]>();
  for (const t of config.targets) {
    const d = destinationOf(t, region);
    byDestination.set(d, [...(byDestination.get(d) ?? []), t.name]);
  }
  return [...byDestination].map(([destination, targets]) => {
    const n = targets.length;
    const connections = n * lanes * perLane;
    return {
      destination,
      targets,
      requestsPerSecond: n * peak,
      inFlight: Math.round(n * peak * sizing.meanResponseSeconds),
      connections,
      connectionsCeiling: n * lanes * sizing.connectionsPerTarget,
      newConnectionsPerSecond: Math.round(connections / Math.min(sizing.slotSeconds, 60)),
      newConnectionsPerSecondWithoutReuse: Math.round(n * peak),
    };
  });
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');
const names = (targets: string[]) =>
  targets.length === 1 ? `target ${targets[0]}` : `targets ${targets.slice(0, -1).join(', ')} and ${targets.at(-1)}`;

/** A warning (its id and text) for each destination whose estimate passes a NAT gateway's limits. */
export function natLimitWarnings(
  config: NatLimitsInput,
  sizing: FireSizing,
  region?: string,
): { id: string; message: string }[] {
  return destinationLoads(config, sizing, region)
    .filter(
      (d) =>
        d.connections > NAT_CONNECTIONS_PER_DESTINATION || d.newConnectionsPerSecond > NAT_NEW_CONNECTIONS_PER_SECOND,
    )
    .map((d) => {
      const over = (value: number, limit: number) => (value > limit ? 'over' : 'within');
      const message =
        `capture-replay: ${d.destination} (${names(d.targets)}), if the fire function reaches it through a NAT gateway: ` +
        `at the peak about ${count(d.connections)} simultaneous connections (${d.targets.length} x ` +
        `${sizing.lanesPerSlot} lanes a slot, each pool at its busiest; ` +
        `${count(d.inFlight)} requests in flight, at most ${count(d.connectionsCeiling)}), ` +
        `${over(d.connections, NAT_CONNECTIONS_PER_DESTINATION)} the ` +
        `${count(NAT_CONNECTIONS_PER_DESTINATION)} a NAT gateway address holds to one destination; ` +
        `about ${count(d.newConnectionsPerSecond)} new connections a second (a slot's lanes open theirs at ` +
        `its start; ${count(d.newConnectionsPerSecondWithoutReuse)} if the target closes each connection), ` +
        `${over(d.newConnectionsPerSecond, NAT_NEW_CONNECTIONS_PER_SECOND)} the ` +
        `${count(NAT_NEW_CONNECTIONS_PER_SECOND)} or so it opens a second. ` +
        `Give the NAT gateway more addresses (each holds another ${count(NAT_CONNECTIONS_PER_DESTINATION)}) ` +
        `or the fire function's subnets more NAT gateways, ` +
        (d.destination.startsWith('runtime.sagemaker.')
          ? 'reach the SageMaker runtime through an interface VPC endpoint (no NAT gateway), '
          : '') +
        `or lower peakRequestsPerSecond (docs/deploy.md#vpc, ${NAT_GATEWAY_DOC}).`;
      return { id: `capture-replay:nat-limits:${d.destination}`, message };
    });
}
