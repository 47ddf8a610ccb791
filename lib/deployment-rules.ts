/**
 * The configuration's rules that span settings, or the configuration and where it deploys:
 * what to replay automatically, where alarms go, whether the concurrency fits the account,
 * and whether the capture bucket's Region and account let new captures reach the stack.
 * Each problem at the path of the setting to change, one line each (lib/config.ts reports
 * them with every other problem at once).
 */
import { didYouMean } from '../lambdas/core/suggest';
import { concurrencyProblems } from './concurrency';
import type { DeploymentConfig } from './config';
import { placementProblems, type DeployEnvironment } from './placement';
import { amplifiedPeak, fireSizingOf } from './sizing';

export interface ConfigProblem {
  path: (string | number)[];
  message: string;
}

/** The targets new capture files replay to: every configured one, a subset, or none. */
export function autoReplayTargets(c: Pick<DeploymentConfig, 'autoReplay' | 'targets'>): string[] {
  if (c.autoReplay === false) return [];
  if (c.autoReplay === true) return c.targets.map((t) => t.name);
  return c.autoReplay.targets;
}

function autoReplayProblems(c: DeploymentConfig): ConfigProblem[] {
  if (c.autoReplay === false) {
    return c.schedules.length > 0
      ? []
      : [
          {
            path: ['autoReplay'],
            message: 'autoReplay false replays nothing without schedules: declare schedules, or set autoReplay to true',
          },
        ];
  }
  if (c.autoReplay === true) return [];
  const names = c.targets.map((t) => t.name);
  const seen = new Set<string>();
  return c.autoReplay.targets.flatMap((t, i): ConfigProblem[] => {
    const path = ['autoReplay', 'targets', i];
    if (!names.includes(t))
      return [
        {
          path,
          message: `"${t}" is not a configured target (${names.map((n) => `"${n}"`).join(', ')})${didYouMean(t, names)}`,
        },
      ];
    if (seen.has(t)) return [{ path, message: `target "${t}" is named twice` }];
    seen.add(t);
    return [];
  });
}

function alarmProblems(c: DeploymentConfig): ConfigProblem[] {
  if (c.alarms?.topicArn && c.alarms.emails) {
    return [
      {
        path: ['alarms', 'emails'],
        message:
          'emails are subscribed to the topic the stack creates; with topicArn, subscribe them to that topic yourself',
      },
    ];
  }
  return [];
}

function concurrencyRuleProblems(c: DeploymentConfig): ConfigProblem[] {
  const sizing = fireSizingOf(c);
  return concurrencyProblems({
    fireConcurrency: c.maxFireConcurrency ?? sizing.maxConcurrency,
    fireSource: c.maxFireConcurrency === undefined ? 'peakRequestsPerSecond' : 'maxFireConcurrency',
    reserveFire: c.reserveFireConcurrency,
    accountConcurrency: c.accountConcurrency,
    ingest: c.autoReplay !== false,
    plan: c.schedules.length > 0,
    peak: { requestsPerSecond: amplifiedPeak(c), targets: c.targets.length },
  }).map((p) => ({ path: [p.path], message: p.message }));
}

/**
 * Every cross-setting problem of a configuration whose settings are each valid. `sizing: false`
 * leaves out the rules that size the fire function (its concurrency against the account), for
 * a configuration with settings out of their ranges: the sizing must not run on those.
 */
export function deploymentProblems(
  c: DeploymentConfig,
  env: DeployEnvironment = {},
  { sizing = true }: { sizing?: boolean } = {},
): ConfigProblem[] {
  return [
    ...autoReplayProblems(c),
    ...alarmProblems(c),
    ...(sizing ? concurrencyRuleProblems(c) : []),
    ...placementProblems(c, env).map((p) => ({ path: [p.path], message: p.message })),
  ];
}
