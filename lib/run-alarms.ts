/**
 * Alarms on what the runs found, with the stack's alarm actions (lib/alarm-topic.ts): the other
 * alarms of the stack watch its plumbing (queues, dead letters, sizing); these watch the runs'
 * metrics (lambdas/core/metrics/cloudwatch.ts).
 *
 * - A scheduled comparison whose verdict is `worse` on a metric the schedule names (`alarmOn`,
 *   default DEFAULT_ALARM_ON): one alarm per schedule and candidate, on the least of those
 *   metrics' Verdict (-1 worse). Missing data keeps the state: a nightly schedule's alarm stays
 *   in ALARM until a later run's verdict is no longer worse.
 * - A run whose results are not to be trusted: one that lost requests (a fire invocation that
 *   never reported), or whose schedule lateness p99 exceeded lateToleranceMs (the replayer, not
 *   the target, was late). Each run is an event: no data is not breaching.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { COMPARISON_METRICS, DEFAULT_ALARM_ON, DIMENSION, RUN_METRICS } from '../lambdas/core/metrics/cloudwatch';
import { notifyAlarms } from './alarm-topic';
import type { DeploymentConfig } from './config';

/** The alarms' period: a run's data point is in one of them (EMF metrics land within a minute or two of the log line). */
const PERIOD = Duration.minutes(5);

export interface RunAlarmsProps {
  config: Pick<DeploymentConfig, 'metricsNamespace' | 'schedules' | 'lateToleranceMs'>;
  /** Where the stack's alarms notify; none: no action (as the stack's other alarms). */
  topic?: sns.ITopic | undefined;
}

export class RunAlarms extends Construct {
  /** Per schedule and candidate target: its worse-verdict alarm. */
  public readonly verdictAlarms: { schedule: string; candidate: string; metrics: string[]; alarm: cloudwatch.Alarm }[] =
    [];
  public readonly lostRequestsAlarm: cloudwatch.Alarm;
  public readonly lateRunAlarm: cloudwatch.Alarm;
  public readonly alarms: cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, props: RunAlarmsProps) {
    super(scope, id);
    const { config } = props;
    const stack = Stack.of(this).stackName;
    const metric = (name: string, dimensions: Record<string, string>, statistic: string) =>
      new cloudwatch.Metric({
        namespace: config.metricsNamespace,
        metricName: name,
        dimensionsMap: { [DIMENSION.stack]: stack, ...dimensions },
        statistic,
        period: PERIOD,
      });

    for (const s of config.schedules) {
      const names = s.alarmOn ?? [...DEFAULT_ALARM_ON];
      if (names.length === 0) continue;
      const baseline = s.targets[0] as string;
      for (const candidate of s.targets.slice(1)) {
        const usingMetrics = Object.fromEntries(
          names.map((m, i) => [
            `v${i}`,
            metric(
              COMPARISON_METRICS.verdict.name,
              { [DIMENSION.schedule]: s.name, [DIMENSION.target]: candidate, [DIMENSION.metric]: m },
              'Minimum',
            ),
          ]),
        );
        const alarm = new cloudwatch.Alarm(this, `WorseVerdict-${s.name}-${candidate}`, {
          alarmDescription:
            `capture-replay: schedule ${s.name}: ${candidate} is worse than ${baseline} on ${names.join(', ')} ` +
            `(a Verdict of -1); the run's report.html and the schedule's trend page say by how much`,
          metric: new cloudwatch.MathExpression({
            expression: `MIN([${Object.keys(usingMetrics).join(', ')}])`,
            usingMetrics,
            period: PERIOD,
            label: 'least verdict',
          }),
          threshold: -1,
          evaluationPeriods: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: cloudwatch.TreatMissingData.IGNORE,
        });
        this.verdictAlarms.push({ schedule: s.name, candidate, metrics: names, alarm });
      }
    }
    this.lostRequestsAlarm = new cloudwatch.Alarm(this, 'LostRequestsAlarm', {
      alarmDescription:
        'capture-replay: a run lost requests (scheduled, never reported: a fire invocation died or timed ' +
        'out); its results are incomplete and not to be trusted (its run_manifest.json counts them under dropped, lost)',
      metric: metric(RUN_METRICS.lost.name, {}, 'Maximum'),
      threshold: 0,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.lateRunAlarm = new cloudwatch.Alarm(this, 'LateRunAlarm', {
      alarmDescription:
        `capture-replay: a run's requests left late, schedule lateness p99 above lateToleranceMs ` +
        `(${config.lateToleranceMs} ms): the replayer could not keep the captured timing, so the run's ` +
        `latencies are not to be trusted (see the ingest report's capacity and the FireSizing output)`,
      metric: metric(RUN_METRICS.latenessP99.name, {}, 'Maximum'),
      threshold: config.lateToleranceMs,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.alarms = [...this.verdictAlarms.map((v) => v.alarm), this.lostRequestsAlarm, this.lateRunAlarm];
    if (props.topic) notifyAlarms(this.alarms, props.topic);
  }
}
