/**
 * Issue 34 in the template: the runs' dashboard (lib/dashboard.ts) and the alarms on what the
 * runs found (lib/run-alarms.ts), with the stack's alarm actions; the DashboardUrl output; the
 * namespace a deployment sets; no function allowed to call CloudWatch (EMF goes through the
 * logs). Every metric of the runs a widget or an alarm reads is one the functions write: the
 * names and dimensions are checked against the EMF documents the writers make of a real run
 * (the memory store's, as test/unit/metrics/cloudwatch.test.ts). cfn-lint checks a template with
 * every widget kind. Synthesized with cdk.json's feature flags, without bundling.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { emfDocuments } from '../../lambdas/adapters/aws/cloudwatch-metrics';
import { BUNDLED_CHART_ASSETS } from '../../lambdas/adapters/bundled-chart-assets';
import { MemoryObjectStore } from '../../lambdas/adapters/local/memory-store';
import { DEFAULT_ALARM_ON, ingestMetricSets, runMetricSets } from '../../lambdas/core/metrics/cloudwatch';
import { collectRun } from '../../lambdas/core/pipeline/collect';
import { analyseRunIfFinal } from '../../lambdas/core/pipeline/run-analysis';
import { ENV } from '../../lambdas/runtime/config';
import { CaptureReplayStack } from '../../lib/capture-replay-stack';
import { DeploymentConfigError, parseDeploymentConfig } from '../../lib/config';
import { templateApp } from '../support/cdk-app';
import { functionEnvironment, onlyLogicalId, type CfnTemplate } from '../support/iam/template-policies';
import { MS, START, writeRun } from '../support/scheduled-run';
import { REPO_ROOT } from '../support/processes';
import { VirtualClock } from '../support/virtual-clock';

vi.setConfig({ testTimeout: 120_000 });

const TARGETS = [
  { name: 'A', url: 'https://a.example.com' },
  { name: 'B', kind: 'sagemaker', endpointName: 'llm-candidate', variant: 'AllTraffic' },
];
const NIGHTLY = { name: 'nightly', expression: 'cron(0 2 * * ? *)', window: { lastHours: 1 }, targets: ['A', 'B'] };
const base = { captureBucket: 'my-captures', capturePrefix: 'datacapture/', targets: TARGETS };

type Outputs = Record<string, { Value: unknown }>;
function synth(raw: Record<string, unknown>, id: string): CfnTemplate & { Outputs: Outputs } {
  const stack = new CaptureReplayStack(templateApp({ featureFlags: true }), id, { config: parseDeploymentConfig(raw) });
  return Template.fromStack(stack).toJSON() as CfnTemplate & { Outputs: Outputs };
}
const ofType = (t: CfnTemplate, type: string) => Object.entries(t.Resources).filter(([, r]) => r.Type === type);
type Props = Record<string, unknown>;

/** The dashboard's body as CloudWatch reads it (the Region's references filled in). */
function dashboardBody(t: CfnTemplate): { widgets: { type: string; properties: Props }[] } {
  const dashboards = ofType(t, 'AWS::CloudWatch::Dashboard');
  expect(dashboards).toHaveLength(1);
  const body = (dashboards[0]![1].Properties as { DashboardBody: { 'Fn::Join': [string, unknown[]] } }).DashboardBody;
  return JSON.parse(body['Fn::Join'][1].map((p) => (typeof p === 'string' ? p : 'us-east-1')).join('')) as {
    widgets: { type: string; properties: Props }[];
  };
}

/** A metric a widget or an alarm reads: namespace, name, dimensions. */
interface Read {
  where: string;
  namespace: string;
  name: string;
  dimensions: Record<string, string>;
}

function widgetMetrics(t: CfnTemplate): Read[] {
  return dashboardBody(t).widgets.flatMap((w) =>
    ((w.properties.metrics as unknown[][] | undefined) ?? []).flatMap((m) => {
      if (typeof m[0] !== 'string') return []; // an expression (SEARCH)
      const [namespace, name, ...rest] = m.filter((x) => typeof x === 'string') as string[];
      const dimensions: Record<string, string> = {};
      for (let i = 0; i + 1 < rest.length; i += 2) dimensions[rest[i] as string] = rest[i + 1] as string;
      return [{ where: String(w.properties.title), namespace: namespace as string, name: name as string, dimensions }];
    }),
  );
}

function alarmMetrics(t: CfnTemplate): Read[] {
  const dims = (d: { Name: string; Value: unknown }[] | undefined) =>
    Object.fromEntries((d ?? []).map((x) => [x.Name, String(x.Value)]));
  return ofType(t, 'AWS::CloudWatch::Alarm').flatMap(([id, a]) => {
    const p = a.Properties as Props & {
      Metrics?: {
        MetricStat?: {
          Metric: { Namespace: string; MetricName: string; Dimensions?: { Name: string; Value: unknown }[] };
        };
      }[];
    };
    if (p.MetricName)
      return [
        {
          where: id,
          namespace: p.Namespace as string,
          name: p.MetricName as string,
          dimensions: dims(p.Dimensions as never),
        },
      ];
    return (p.Metrics ?? []).flatMap((q) =>
      q.MetricStat
        ? [
            {
              where: id,
              namespace: q.MetricStat.Metric.Namespace,
              name: q.MetricStat.Metric.MetricName,
              dimensions: dims(q.MetricStat.Metric.Dimensions),
            },
          ]
        : [],
    );
  });
}

/** What the writers write for this stack: a scheduled A/B run of `nightly`, a file run of both targets, a run's capacity. */
async function writtenDocuments(stack: string, namespace: string): Promise<Record<string, unknown>[]> {
  const docs: Record<string, unknown>[] = [];
  for (const [runId, scheduled] of [
    ['w1', true],
    ['f1', false],
  ] as const) {
    const store = new MemoryObjectStore();
    const clock = new VirtualClock(START + 3_700_000n * MS);
    await writeRun(store, runId, { requests: 60, scheduled });
    for (const t of ['A', 'B']) await collectRun(runId, t, { store, clock });
    const { figures } = await analyseRunIfFinal(runId, {
      store,
      clock,
      notifier: null,
      resultsBucket: 'r',
      chartAssets: BUNDLED_CHART_ASSETS,
    });
    docs.push(...emfDocuments(runMetricSets(stack, figures!), namespace, Date.now()));
  }
  docs.push(
    ...emfDocuments(ingestMetricSets(stack, { expectedLatenessSeconds: 1, onTime: false }), namespace, Date.now()),
  );
  return docs;
}

/** Whether one of the documents defines this metric with exactly these dimensions and values. */
function written(docs: readonly Record<string, unknown>[], r: Read): boolean {
  return docs.some((doc) => {
    const [directive] = (
      doc._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] }
    ).CloudWatchMetrics;
    if (!directive || directive.Namespace !== r.namespace || !directive.Metrics.some((m) => m.Name === r.name))
      return false;
    const keys = Object.keys(r.dimensions).sort().join(',');
    return (
      directive.Dimensions.some((set) => [...set].sort().join(',') === keys) &&
      Object.entries(r.dimensions).every(([k, v]) => doc[k] === v)
    );
  });
}

describe("the runs' dashboard", () => {
  const t = synth({ ...base, schedules: [NIGHTLY], alarms: { emails: ['ml@example.com'] } }, 'Dashed');

  it('is on by default, named after the stack and its Region, its URL the DashboardUrl output; dashboard: false leaves both out', () => {
    const dashboards = ofType(t, 'AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    expect(dashboards[0]![1].Properties?.DashboardName).toEqual({
      'Fn::Join': ['', ['Dashed-', { Ref: 'AWS::Region' }]],
    });
    const url = t.Outputs.DashboardUrl?.Value;
    expect(url).toEqual({
      'Fn::Join': [
        '',
        [
          'https://',
          { Ref: 'AWS::Region' },
          '.console.aws.amazon.com/cloudwatch/home?region=',
          { Ref: 'AWS::Region' },
          '#dashboards/dashboard/Dashed-',
          { Ref: 'AWS::Region' },
        ],
      ],
    });
    const off = synth({ ...base, dashboard: false }, 'Undashed');
    expect(ofType(off, 'AWS::CloudWatch::Dashboard')).toEqual([]);
    expect(off.Outputs.DashboardUrl).toBeUndefined();
  });

  it(
    "per target its latency and errors; beside a SageMaker target its endpoint's ModelLatency and Invocations; " +
      "per schedule its verdicts; the pipeline's health and every alarm",
    () => {
      const body = dashboardBody(t);
      const titles = body.widgets.map((w) => String(w.properties.title ?? w.properties.markdown ?? ''));
      for (const name of ['A', 'B']) {
        expect(titles).toContain(`${name}: latency per run (ms)`);
        expect(titles).toContain(`${name}: requests and errors per run`);
      }
      const reads = widgetMetrics(t);
      const of = (title: string) => reads.filter((r) => r.where === title);
      expect(of('A: latency per run (ms)').map((r) => r.name)).toEqual([
        'RequestLatencyP50',
        'RequestLatencyP99',
        'TimeToFirstTokenP50',
        'TimeToFirstTokenP99',
        'InterTokenLatencyP50',
      ]);
      expect(of('A: requests and errors per run').map((r) => r.name)).toEqual([
        'RequestsSucceeded',
        'RequestsFailed',
        'RequestsDropped',
        'RequestsLost',
        'ErrorRate',
      ]);
      // B names its variant: SageMaker's own metrics by endpoint and variant.
      expect(of('B: endpoint llm-candidate (AWS/SageMaker)')).toEqual([
        {
          where: 'B: endpoint llm-candidate (AWS/SageMaker)',
          namespace: 'AWS/SageMaker',
          name: 'ModelLatency',
          dimensions: { EndpointName: 'llm-candidate', VariantName: 'AllTraffic' },
        },
        {
          where: 'B: endpoint llm-candidate (AWS/SageMaker)',
          namespace: 'AWS/SageMaker',
          name: 'Invocations',
          dimensions: { EndpointName: 'llm-candidate', VariantName: 'AllTraffic' },
        },
      ]);
      // No endpoint widget for the HTTP target A. A target naming no variant: every variant of its endpoint, in its own Region.
      expect(titles.some((x) => x.startsWith('A: endpoint'))).toBe(false);
      const other = synth(
        { ...base, targets: [{ name: 'C', kind: 'sagemaker', endpointName: 'llm-other', region: 'us-west-2' }] },
        'Searched',
      );
      const c = dashboardBody(other).widgets.find(
        (w) => w.properties.title === 'C: endpoint llm-other (AWS/SageMaker)',
      )!;
      expect(JSON.stringify(c.properties.metrics)).toContain(
        'SEARCH(\'{AWS/SageMaker,EndpointName,VariantName} MetricName=\\"ModelLatency\\" EndpointName=\\"llm-other\\"\'',
      );
      expect(JSON.stringify(c.properties.metrics)).toContain('"region":"us-west-2"');
      // The schedule's comparison of B: every verdict a comparison gives, from B's side.
      expect(of('nightly: B vs A, verdict (+1 better, -1 worse)').map((r) => [r.name, r.dimensions.Metric])).toEqual(
        [
          'request_latency',
          'time_to_first_token',
          'inter_token_latency',
          'time_to_second_token',
          'output_token_throughput_per_user',
          'error_rate',
        ].map((m) => ['Verdict', m]),
      );
      expect(of('nightly: B vs A, verdict (+1 better, -1 worse)')[0]!.dimensions).toEqual({
        Stack: 'Dashed',
        Schedule: 'nightly',
        Target: 'B',
        Metric: 'request_latency',
      });
      // Health: lateness (with the tolerance drawn), queue age, lost requests and dead letters, every alarm.
      expect(of('Fire lateness').map((r) => r.name)).toEqual(['ScheduleLatenessP99', 'ExpectedLatenessSeconds']);
      expect(of('Queue age, oldest message (s)').map((r) => [r.namespace, r.name])).toEqual(
        Array(4).fill(['AWS/SQS', 'ApproximateAgeOfOldestMessage']),
      );
      expect(of('Lost requests and dead letters')[0]).toMatchObject({
        name: 'RequestsLost',
        dimensions: { Stack: 'Dashed' },
      });
      const alarmsWidget = body.widgets.find((w) => w.properties.title === 'Alarms')!;
      expect((alarmsWidget.properties.alarms as unknown[]).length).toBe(ofType(t, 'AWS::CloudWatch::Alarm').length);
    },
  );

  it('every metric of the runs a widget or an alarm reads is one the functions write (name, dimensions, values)', async () => {
    const docs = await writtenDocuments('Dashed', 'capture-replay');
    const reads = [...widgetMetrics(t), ...alarmMetrics(t)].filter((r) => r.namespace === 'capture-replay');
    expect(reads.length).toBeGreaterThanOrEqual(40);
    expect(
      reads.filter((r) => !written(docs, r)).map((r) => `${r.where}: ${r.name} ${JSON.stringify(r.dimensions)}`),
    ).toEqual([]);
    // The check can fail: a name or a dimension the writers do not use is caught.
    expect(
      written(docs, {
        where: '',
        namespace: 'capture-replay',
        name: 'RequestLatencyP90',
        dimensions: { Stack: 'Dashed', Target: 'A' },
      }),
    ).toBe(false);
    expect(
      written(docs, {
        where: '',
        namespace: 'capture-replay',
        name: 'RequestLatencyP99',
        dimensions: { Stack: 'Dashed', Schedule: 'nightly', Target: 'C' },
      }),
    ).toBe(false);
  });
});

describe('alarms on what the runs found', () => {
  const alarmsOf = (t: CfnTemplate) =>
    Object.fromEntries(
      ofType(t, 'AWS::CloudWatch::Alarm')
        .filter(([id]) => id.startsWith('RunAlarms'))
        .map(([id, a]) => [id.replace(/[0-9A-F]{8}$/, ''), a.Properties as Props]),
    );

  it(
    "a schedule's worse verdict on the metrics it names (by default the latencies and errors), with the " +
      "stack's alarm actions; the state kept between runs",
    () => {
      const t = synth(
        {
          ...base,
          schedules: [
            NIGHTLY,
            { ...NIGHTLY, name: 'weekly', targets: ['B', 'A'], alarmOn: ['time_to_first_token'] },
            { ...NIGHTLY, name: 'quiet', alarmOn: [] },
          ],
          alarms: { emails: ['ml@example.com'] },
        },
        'Alarmed',
      );
      const alarms = alarmsOf(t);
      expect(Object.keys(alarms).sort()).toEqual([
        'RunAlarmsLateRunAlarm',
        'RunAlarmsLostRequestsAlarm',
        'RunAlarmsWorseVerdictnightlyB',
        'RunAlarmsWorseVerdictweeklyA',
      ]);
      const topic = { Ref: onlyLogicalId(t, 'AWS::SNS::Topic', 'StatefulAlarmTopic') };
      for (const a of Object.values(alarms)) expect(a.AlarmActions).toEqual([topic]);
      const nightly = alarms.RunAlarmsWorseVerdictnightlyB!;
      expect(nightly).toMatchObject({
        ComparisonOperator: 'LessThanOrEqualToThreshold',
        Threshold: -1,
        EvaluationPeriods: 1,
        TreatMissingData: 'ignore',
      });
      const queries = nightly.Metrics as {
        Id: string;
        Expression?: string;
        ReturnData?: boolean;
        MetricStat?: {
          Metric: { MetricName: string; Namespace: string; Dimensions: { Name: string; Value: string }[] };
          Stat: string;
        };
      }[];
      expect(queries.find((q) => q.ReturnData !== false)!.Expression).toBe(
        `MIN([${DEFAULT_ALARM_ON.map((_, i) => `v${i}`).join(', ')}])`,
      );
      const watched = queries
        .filter((q) => q.MetricStat)
        .map((q) => ({
          ...Object.fromEntries(q.MetricStat!.Metric.Dimensions.map((d) => [d.Name, d.Value])),
          name: q.MetricStat!.Metric.MetricName,
          stat: q.MetricStat!.Stat,
        }));
      expect(watched).toEqual(
        DEFAULT_ALARM_ON.map((m) => ({
          Stack: 'Alarmed',
          Schedule: 'nightly',
          Target: 'B',
          Metric: m,
          name: 'Verdict',
          stat: 'Minimum',
        })),
      );
      // weekly names one metric, with B the baseline: A is its candidate.
      const weekly = JSON.stringify(alarms.RunAlarmsWorseVerdictweeklyA!.Metrics);
      expect(weekly).toContain('{"Name":"Metric","Value":"time_to_first_token"}');
      expect(weekly).toContain('{"Name":"Target","Value":"A"}');
      expect(weekly).not.toContain('"Value":"request_latency"');
    },
  );

  it('a run that lost requests, or whose lateness p99 passed lateToleranceMs: untrustworthy results', () => {
    const t = synth({ ...base, lateToleranceMs: 250 }, 'Trust');
    const alarms = alarmsOf(t);
    expect(alarms.RunAlarmsLostRequestsAlarm).toMatchObject({
      Namespace: 'capture-replay',
      MetricName: 'RequestsLost',
      Dimensions: [{ Name: 'Stack', Value: 'Trust' }],
      Statistic: 'Maximum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(alarms.RunAlarmsLateRunAlarm).toMatchObject({
      MetricName: 'ScheduleLatenessP99',
      Dimensions: [{ Name: 'Stack', Value: 'Trust' }],
      Statistic: 'Maximum',
      Threshold: 250,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    // No alarms setting, no notify: no action, as the stack's other alarms.
    expect(alarms.RunAlarmsLateRunAlarm!.AlarmActions).toBeUndefined();
  });

  it('a schedule naming a metric a comparison does not call worse is refused, with the one meant', () => {
    const refuse = (alarmOn: string[]) => {
      try {
        parseDeploymentConfig({ ...base, schedules: [{ ...NIGHTLY, alarmOn }] });
      } catch (error) {
        expect(error).toBeInstanceOf(DeploymentConfigError);
        return (error as Error).message.split('\n').slice(1);
      }
      throw new Error('accepted');
    };
    expect(refuse(['time_to_frist_token'])).toEqual([
      expect.stringMatching(
        new RegExp(
          /^- captureReplay\.schedules\.0\.alarmOn\.0: "time_to_frist_token" is not a metric a comparison /.source +
            /calls worse \(.*\); did you mean `time_to_first_token`\?$/.source,
        ),
      ),
    ]);
    expect(refuse(['output_sequence_length'])[0]).toContain('is not a metric a comparison calls worse');
  });
});

describe('the namespace, and IAM', () => {
  it('metricsNamespace moves every writer, widget and alarm; AWS/ is refused', () => {
    const t = synth({ ...base, schedules: [NIGHTLY], metricsNamespace: 'ml-team/replay' }, 'Spaced');
    const resolver = {
      partition: 'aws',
      region: 'us-east-1',
      accountId: '123456789012',
      resources: Object.fromEntries(
        Object.keys(t.Resources).map((id) => [id, { Ref: id, Arn: `arn:aws:test:::${id}` }]),
      ),
    };
    for (const fn of ['StatelessIngest', 'StatelessCollect', 'StatelessPlan'])
      expect(functionEnvironment(t, fn, resolver), fn).toMatchObject({
        [ENV.metricsNamespace]: 'ml-team/replay',
        [ENV.stackName]: 'Spaced',
      });
    const ours = [...widgetMetrics(t), ...alarmMetrics(t)].filter((r) => !r.namespace.startsWith('AWS/'));
    expect(new Set(ours.map((r) => r.namespace))).toEqual(new Set(['ml-team/replay']));
    expect(() => parseDeploymentConfig({ ...base, metricsNamespace: 'AWS/Lambda' })).toThrow(
      /metricsNamespace: a CloudWatch namespace/,
    );
  });

  it('no function may call CloudWatch (cloudwatch:PutMetricData or any other): the metrics go through the logs', () => {
    const t = synth({ ...base, schedules: [NIGHTLY], notify: { emails: ['ml@example.com'] } }, 'NoPut');
    const policies = ofType(t, 'AWS::IAM::Policy').map(([, p]) => JSON.stringify(p.Properties));
    expect(policies.length).toBeGreaterThan(3);
    for (const p of policies) expect(p).not.toMatch(/cloudwatch:/i);
  });
});

const cfnLint = spawnSync('sh', ['-c', 'command -v cfn-lint'], { encoding: 'utf8' }).stdout.trim();
describe('cfn-lint', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dashboard-lint-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes the template with the dashboard (SageMaker targets, a schedule) and every run alarm', () => {
    if (!cfnLint) {
      if (process.env.CI === 'true') throw new Error('cfn-lint not found (pip install cfn-lint): required in CI');
      console.warn('[skipped] cfn-lint not found: pip install cfn-lint');
      return;
    }
    const file = join(dir, 'template.json');
    writeFileSync(
      file,
      JSON.stringify(
        synth(
          {
            ...base,
            schedules: [NIGHTLY, { ...NIGHTLY, name: 'weekly', targets: ['B', 'A'] }],
            alarms: { emails: ['ml@example.com'] },
          },
          'Linted',
        ),
      ),
    );
    const lint = spawnSync(cfnLint, [file], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(lint.stdout + lint.stderr).toBe('');
    expect(lint.status).toBe(0);
  });
});
