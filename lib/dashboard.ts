/**
 * The stack's CloudWatch dashboard (the `dashboard` setting, on by default): what the runs found
 * where an AWS team already looks. Per target, each run's latency and errors over time, beside a
 * SageMaker endpoint's own ModelLatency and Invocations; per scheduled comparison, its verdicts
 * and shifts; the pipeline's health (how late requests left, queue age, lost requests, dead
 * letters) and every alarm of the stack. Every metric of the runs it shows is one the functions
 * write (lambdas/core/metrics/cloudwatch.ts; test/infra/dashboard.test.ts checks the names).
 *
 * Dashboards are global to an account: its name is the stack's and the Region's, so the same
 * stack name in two Regions gets two dashboards. Its URL is the DashboardUrl output.
 */
import { Aws, Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { COMPARED_METRICS } from '../lambdas/core/compare/types';
import {
  COMPARISON_METRICS,
  DIMENSION,
  INGEST_METRICS,
  RUN_METRICS,
  TARGET_METRICS,
  VERDICT_METRICS,
} from '../lambdas/core/metrics/cloudwatch';
import type { SageMakerTargetConfig } from '../lambdas/runtime/config';
import type { DeploymentConfig } from './config';
import type { CaptureReplayStateful } from './stateful';

/** One data point per hour: a file-mode stack's runs (a few minutes each) and a nightly schedule's alike. */
const RUN_PERIOD = Duration.hours(1);
/** The queues' health, as the stack's alarms watch it. */
const QUEUE_PERIOD = Duration.minutes(5);

export interface RunsDashboardProps {
  config: DeploymentConfig;
  stateful: CaptureReplayStateful;
  /** Every alarm of the stack, shown by state. */
  alarms: readonly cloudwatch.IAlarm[];
}

/** The dashboard's name: the stack's and the Region's (dashboards are global to an account). */
export function dashboardNameOf(stackName: string): string {
  return `${stackName}-${Aws.REGION}`;
}

/** The console page of a dashboard, in the stack's Region. */
export function dashboardUrlOf(name: string): string {
  return `https://${Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards/dashboard/${name}`;
}

export class RunsDashboard extends Construct {
  public readonly dashboard: cloudwatch.Dashboard;
  public readonly dashboardName: string;

  private readonly namespace: string;
  private readonly stackName: string;

  constructor(scope: Construct, id: string, props: RunsDashboardProps) {
    super(scope, id);
    const { config } = props;
    this.namespace = config.metricsNamespace;
    this.stackName = Stack.of(this).stackName;
    this.dashboardName = dashboardNameOf(this.stackName);
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: this.dashboardName,
      defaultInterval: Duration.days(7),
    });
    this.dashboard.addWidgets(this.header(config));
    for (const t of config.targets) this.dashboard.addWidgets(...this.targetRow(t));
    for (const s of config.schedules) {
      for (const candidate of s.targets.slice(1))
        this.dashboard.addWidgets(...this.verdictRow(s.name, s.targets[0] as string, candidate));
    }
    this.dashboard.addWidgets(...this.healthRow(config, props.stateful));
    this.dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: [...props.alarms], width: 24, height: 4 }),
    );
  }

  /** A metric of the runs, with the stack's dimension and these others. */
  private runMetric(
    name: string,
    dimensions: Record<string, string>,
    statistic: string,
    label?: string,
  ): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: name,
      dimensionsMap: { [DIMENSION.stack]: this.stackName, ...dimensions },
      statistic,
      period: RUN_PERIOD,
      ...(label ? { label } : {}),
    });
  }

  private header(config: DeploymentConfig): cloudwatch.TextWidget {
    const schedules =
      config.schedules.length > 0
        ? ` Scheduled comparisons: ${config.schedules.map((s) => `\`${s.name}\``).join(', ')}: a Verdict of +1 ` +
          `is better, 0 the same or inconclusive, -1 worse, from the candidate's side.`
        : '';
    return new cloudwatch.TextWidget({
      markdown: [
        `# capture-replay: ${this.stackName}`,
        `What each replay found, written by the collector as metrics in namespace \`${this.namespace}\` ` +
          `(dimensions Stack, Target; Schedule for scheduled runs), one data point per run, shown per ` +
          `hour.${schedules} Each run's files and report are in the results bucket under runs/<run-id>/; a ` +
          `schedule's trend page under schedules/<name>/.`,
      ].join('\n\n'),
      width: 24,
      height: 3,
    });
  }

  /** A target: its runs' latency and errors, and a SageMaker endpoint's own metrics beside them. */
  private targetRow(t: DeploymentConfig['targets'][number]): cloudwatch.IWidget[] {
    const target = { [DIMENSION.target]: t.name };
    const M = TARGET_METRICS;
    const sagemaker = t.kind === 'sagemaker';
    const width = sagemaker ? 8 : 12;
    const latency = new cloudwatch.GraphWidget({
      title: `${t.name}: latency per run (ms)`,
      width,
      left: [
        this.runMetric(M.latencyP50.name, target, 'Average', 'request latency p50'),
        this.runMetric(M.latencyP99.name, target, 'Maximum', 'request latency p99'),
        this.runMetric(M.ttftP50.name, target, 'Average', 'time to first token p50'),
        this.runMetric(M.ttftP99.name, target, 'Maximum', 'time to first token p99'),
        this.runMetric(M.itlP50.name, target, 'Average', 'inter-token latency p50'),
      ],
      leftYAxis: { min: 0, showUnits: false },
    });
    const requests = new cloudwatch.GraphWidget({
      title: `${t.name}: requests and errors per run`,
      width,
      left: [
        this.runMetric(M.succeeded.name, target, 'Sum', 'succeeded'),
        this.runMetric(M.failed.name, target, 'Sum', 'failed'),
        this.runMetric(M.dropped.name, target, 'Sum', 'dropped'),
        this.runMetric(M.lost.name, target, 'Sum', 'lost'),
      ],
      right: [this.runMetric(M.errorRate.name, target, 'Maximum', 'error rate (%)')],
      leftYAxis: { min: 0, showUnits: false },
      rightYAxis: { min: 0, max: 100, showUnits: false },
    });
    return sagemaker ? [latency, requests, this.endpointWidget(t, width)] : [latency, requests];
  }

  /**
   * A SageMaker target's endpoint as SageMaker measures it (namespace AWS/SageMaker, dimensions
   * EndpointName and VariantName): ModelLatency (microseconds) and Invocations. With the target's
   * variant, that variant's; without, every variant's (a search: the variant is the endpoint's).
   */
  private endpointWidget(t: SageMakerTargetConfig, width: number): cloudwatch.GraphWidget {
    const region = t.region ? { region: t.region } : {};
    const of = (metricName: string, statistic: string, label: string): cloudwatch.IMetric =>
      t.variant
        ? new cloudwatch.Metric({
            namespace: 'AWS/SageMaker',
            metricName,
            dimensionsMap: { EndpointName: t.endpointName, VariantName: t.variant },
            statistic,
            period: RUN_PERIOD,
            label,
            ...region,
          })
        : new cloudwatch.MathExpression({
            expression:
              `SEARCH('{AWS/SageMaker,EndpointName,VariantName} MetricName="${metricName}" ` +
              `EndpointName="${t.endpointName}"', '${statistic}', ${RUN_PERIOD.toSeconds()})`,
            label,
            period: RUN_PERIOD,
            ...(t.region ? { searchRegion: t.region } : {}),
          });
    return new cloudwatch.GraphWidget({
      title: `${t.name}: endpoint ${t.endpointName} (AWS/SageMaker)`,
      width,
      left: [of('ModelLatency', 'Average', 'ModelLatency (us)')],
      right: [of('Invocations', 'Sum', 'Invocations')],
      leftYAxis: { min: 0, showUnits: false },
      rightYAxis: { min: 0, showUnits: false },
    });
  }

  /** A schedule's comparison of one candidate: each metric's verdict, and the latencies' shifts. */
  private verdictRow(schedule: string, baseline: string, candidate: string): cloudwatch.IWidget[] {
    const dims = (metric: string) => ({
      [DIMENSION.schedule]: schedule,
      [DIMENSION.target]: candidate,
      [DIMENSION.metric]: metric,
    });
    const verdicts = new cloudwatch.GraphWidget({
      title: `${schedule}: ${candidate} vs ${baseline}, verdict (+1 better, -1 worse)`,
      width: 12,
      left: VERDICT_METRICS.map((m) => this.runMetric(COMPARISON_METRICS.verdict.name, dims(m), 'Minimum', m)),
      leftYAxis: { min: -1, max: 1, showUnits: false },
    });
    const latencies = COMPARED_METRICS.filter((m) => m.unit === 'ms').map((m) => m.tag);
    const shifts = new cloudwatch.GraphWidget({
      title: `${schedule}: ${candidate} - ${baseline}, shift (ms)`,
      width: 12,
      left: latencies.map((m) => this.runMetric(COMPARISON_METRICS.shift.name, dims(m), 'Average', m)),
      leftAnnotations: [{ value: 0, color: '#aaaaaa' }],
      leftYAxis: { showUnits: false },
    });
    return [verdicts, shifts];
  }

  /** The pipeline itself: how late requests left, how long messages wait, what was lost. */
  private healthRow(config: DeploymentConfig, stateful: CaptureReplayStateful): cloudwatch.IWidget[] {
    const lateness = new cloudwatch.GraphWidget({
      title: 'Fire lateness',
      width: 8,
      left: [this.runMetric(RUN_METRICS.latenessP99.name, {}, 'Maximum', 'schedule lateness p99 (ms)')],
      leftAnnotations: [{ value: config.lateToleranceMs, label: 'lateToleranceMs', color: '#d62728' }],
      right: [this.runMetric(INGEST_METRICS.expectedLateness.name, {}, 'Maximum', 'expected at ingest (s)')],
      leftYAxis: { min: 0, showUnits: false },
      rightYAxis: { min: 0, showUnits: false },
    });
    const queues = [
      ['ingest', stateful.ingest],
      ['replay', stateful.replay],
      ['collect', stateful.collect],
      ...(stateful.schedules ? [['plan', stateful.schedules.plan] as const] : []),
    ] as const;
    const age = new cloudwatch.GraphWidget({
      title: 'Queue age, oldest message (s)',
      width: 8,
      left: queues.map(([name, pair]) =>
        pair.queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: QUEUE_PERIOD, label: name }),
      ),
      leftYAxis: { min: 0, showUnits: false },
    });
    const lost = new cloudwatch.GraphWidget({
      title: 'Lost requests and dead letters',
      width: 8,
      left: [this.runMetric(RUN_METRICS.lost.name, {}, 'Sum', 'requests lost')],
      right: queues.map(([name, pair]) =>
        pair.dlq.metricApproximateNumberOfMessagesVisible({
          statistic: 'Maximum',
          period: QUEUE_PERIOD,
          label: `${name} dead letters`,
        }),
      ),
      leftYAxis: { min: 0, showUnits: false },
      rightYAxis: { min: 0, showUnits: false },
    });
    return [lateness, age, lost];
  }
}
