/**
 * What a run found as CloudWatch metrics (core/metrics/cloudwatch.ts), from the files the
 * collector wrote (the memory store, as run-analysis.test.ts): each target's counts from its
 * run_manifest.json and its statistics from profile_export_aiperf.json, not computed again;
 * each comparison's verdicts and shifts; dimensions bounded (no run id); a scheduled run's once.
 * And the documents Powertools' Metrics writes of them (adapters/aws/cloudwatch-metrics.ts),
 * valid by the EMF specification's schema and rules (test/support/emf.ts).
 */
import { describe, expect, it } from 'vitest';
import { CloudWatchMetrics, emfDocuments } from '../../../lambdas/adapters/aws/cloudwatch-metrics';
import { BUNDLED_CHART_ASSETS } from '../../../lambdas/adapters/bundled-chart-assets';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import type { ComparisonDocument, Verdict } from '../../../lambdas/core/compare/types';
import {
  capacityMetricSets,
  comparisonsOf,
  DEFAULT_ALARM_ON,
  ERROR_RATE_METRIC,
  METRICS_NAMESPACE,
  runMetricSets,
  targetFiguresOf,
  VERDICT_METRICS,
  verdictScore,
  type MetricSet,
} from '../../../lambdas/core/metrics/cloudwatch';
import { collectRun } from '../../../lambdas/core/pipeline/collect';
import { analyseRunIfFinal, analysisMarkerKey } from '../../../lambdas/core/pipeline/run-analysis';
import { emfProblems, metricIdentities } from '../../support/emf';
import { MS, RecordingNotifier, START, writeRun } from '../../support/scheduled-run';
import { VirtualClock } from '../../support/virtual-clock';

const QUIET = { debug() {}, info() {}, warn() {}, error() {} };
const json = (store: MemoryObjectStore, key: string) =>
  JSON.parse(store.text(key) as string) as Record<string, Record<string, number> & { lost?: number }>;
const valuesOf = (set: MetricSet) => Object.fromEntries(set.metrics.map((m) => [m.name, m.value]));

/** A two-target run collected and analysed on the memory store, as the collector leaves it. */
async function analysedRun(
  runId: string,
  opts: { scheduled?: boolean; unreported?: { target: string; shardId: string }[] } = {},
) {
  const store = new MemoryObjectStore();
  const clock = new VirtualClock(START + 3_700_000n * MS); // past the deadline
  await writeRun(store, runId, { requests: 200, shardSize: 50, ...opts });
  await collectRun(runId, 'A', { store, clock });
  await collectRun(runId, 'B', { store, clock });
  const result = await analyseRunIfFinal(runId, {
    store,
    clock,
    notifier: new RecordingNotifier(),
    resultsBucket: 'results',
    chartAssets: BUNDLED_CHART_ASSETS,
  });
  return { store, clock, result };
}

describe("a run's figures and metric sets", () => {
  it(
    "each target: its manifest's counts and the AIPerf aggregates the collector wrote; dimensions Stack and " +
      'Target, no run id',
    async () => {
      const { store, result } = await analysedRun('r1', { unreported: [{ target: 'B', shardId: '1-0' }] });
      expect(result.figures?.schedule).toBeNull();
      const sets = runMetricSets('CaptureReplay', result.figures!);
      for (const target of ['A', 'B']) {
        const manifest = json(store, `runs/r1/${target}/run_manifest.json`) as unknown as {
          scheduled: number;
          succeeded: number;
          failed: number;
          dropped: number;
          droppedByReason: Record<string, number>;
        };
        const agg = json(store, `runs/r1/${target}/profile_export_aiperf.json`);
        const set = sets.find((s) => s.dimensions.Target === target && !('Metric' in s.dimensions))!;
        expect(set.dimensions).toEqual({ Stack: 'CaptureReplay', Target: target });
        expect(set.dimensionSets).toEqual([['Stack', 'Target']]);
        const fired = manifest.succeeded + manifest.failed;
        expect(valuesOf(set)).toEqual({
          RequestsScheduled: manifest.scheduled,
          RequestsSucceeded: manifest.succeeded,
          RequestsFailed: manifest.failed,
          RequestsDropped: manifest.dropped,
          RequestsLost: manifest.droppedByReason.lost ?? 0,
          ErrorRate: (100 * manifest.failed) / fired,
          RequestLatencyP50: agg.request_latency!.p50,
          RequestLatencyP99: agg.request_latency!.p99,
          TimeToFirstTokenP50: agg.time_to_first_token!.p50,
          TimeToFirstTokenP99: agg.time_to_first_token!.p99,
          InterTokenLatencyP50: agg.inter_token_latency!.p50,
          OutputTokensPerSecond: agg.output_token_throughput!.avg,
          ScheduleLatenessP99: agg.schedule_lag!.p99,
        });
      }
      // The fixture's shard 1-0 of B never reported: its 50 requests are lost, and said so.
      expect(valuesOf(sets.find((s) => s.dimensions.Target === 'B' && !('Metric' in s.dimensions))!).RequestsLost).toBe(
        50,
      );
      const run = sets.at(-1)!;
      expect(run).toEqual({
        dimensions: { Stack: 'CaptureReplay' },
        dimensionSets: [['Stack']],
        metrics: expect.any(Array),
      });
      const lateness = ['A', 'B'].map(
        (t) => json(store, `runs/r1/${t}/profile_export_aiperf.json`).schedule_lag!.p99 as number,
      );
      expect(valuesOf(run)).toEqual({ RequestsLost: 50, ScheduleLatenessP99: Math.max(...lateness) });
      // Bounded cardinality: stack, targets, the compared metrics; never the run.
      expect(JSON.stringify(sets)).not.toContain('r1');
      expect(new Set(sets.flatMap((s) => Object.keys(s.dimensions)))).toEqual(new Set(['Stack', 'Target', 'Metric']));
    },
  );

  it('each comparison: per metric its verdict (-1, 0, +1) and shift (paired: the median difference; error rate in points)', async () => {
    const { store, result } = await analysedRun('r2');
    const doc = JSON.parse(store.text('runs/r2/comparison.json') as string) as ComparisonDocument;
    const sets = runMetricSets('S', result.figures!).filter((s) => 'Metric' in s.dimensions);
    expect(sets.map((s) => s.dimensions.Metric)).toEqual([
      ...comparisonsOf(doc)[0]!.metrics.map((m) => m.tag),
      ERROR_RATE_METRIC,
    ]);
    for (const m of doc.metrics) {
      const set = sets.find((s) => s.dimensions.Metric === m.tag)!;
      expect(set.dimensions).toEqual({ Stack: 'S', Target: 'B', Metric: m.tag });
      expect(set.dimensionSets).toEqual([['Stack', 'Target', 'Metric']]);
      const shift = m.paired_shift?.difference.estimate ?? m.difference.p50.estimate;
      expect(set.metrics).toEqual([
        { name: 'Verdict', unit: 'None', value: verdictScore(m.verdict) },
        ...(shift === null
          ? []
          : [
              {
                name: 'Shift',
                unit: m.unit === 'ms' ? 'Milliseconds' : m.unit === 'tokens' ? 'Count' : 'Count/Second',
                value: shift,
              },
            ]),
      ]);
    }
    // The fixture: B's first token ~20 ms later, worse.
    expect(valuesOf(sets.find((s) => s.dimensions.Metric === 'time_to_first_token')!)).toMatchObject({
      Verdict: -1,
      Shift: expect.closeTo(20, 0),
    });
    const errors = sets.find((s) => s.dimensions.Metric === ERROR_RATE_METRIC)!;
    expect(valuesOf(errors)).toEqual({
      Verdict: verdictScore(doc.errors.verdict),
      Shift: 100 * (doc.errors.difference.estimate as number),
    });
  });

  it('verdicts as numbers: worse -1, better +1, the rest 0', () => {
    const scores = (['worse', 'better', 'no_difference', 'inconclusive', 'changed'] as Verdict[]).map(verdictScore);
    expect(scores).toEqual([-1, 1, 0, 0, 0]);
    // A metric without a direction (output length) is never worse: no alarm names it.
    expect(VERDICT_METRICS).not.toContain('output_sequence_length');
    for (const m of DEFAULT_ALARM_ON) expect(VERDICT_METRICS).toContain(m);
  });

  it(
    'a scheduled run: every set also under its Schedule, and its figures from the finaliser that appended its ' +
      'history line only',
    async () => {
      const { store, clock, result } = await analysedRun('w1', { scheduled: true });
      expect(result.history?.outcome).toBe('appended');
      const sets = runMetricSets('S', result.figures!);
      for (const s of sets.filter((x) => 'Target' in x.dimensions)) {
        expect(s.dimensions.Schedule).toBe('nightly');
        expect(s.dimensionSets).toEqual([
          ['Stack', ...Object.keys(s.dimensions).filter((k) => k !== 'Stack' && k !== 'Schedule')],
          ['Stack', 'Schedule', ...Object.keys(s.dimensions).filter((k) => k !== 'Stack' && k !== 'Schedule')],
        ]);
      }
      // The stack's own set is the stack's: not per schedule.
      expect(sets.at(-1)!.dimensionSets).toEqual([['Stack']]);
      // A second analysis of the run (the marker gone: a finaliser racing the first) writes no metrics again.
      store.objects.delete(analysisMarkerKey('w1'));
      const again = await analyseRunIfFinal('w1', {
        store,
        clock,
        notifier: null,
        resultsBucket: 'results',
        chartAssets: BUNDLED_CHART_ASSETS,
      });
      expect(again).toMatchObject({ status: 'analysed', history: { outcome: 'present' } });
      expect(again.figures).toBeUndefined();
    },
  );

  it('a figure the files do not hold is left out, never written as 0; nothing fired: no error rate', () => {
    const t = targetFiguresOf(
      'A',
      { scheduled: 3, succeeded: 0, failed: 0, dropped: 3, droppedByReason: { unsupported_content_type: 3 } },
      null,
    );
    const [set] = runMetricSets('S', { schedule: null, targets: [t], comparison: null });
    expect(valuesOf(set!)).toEqual({
      RequestsScheduled: 3,
      RequestsSucceeded: 0,
      RequestsFailed: 0,
      RequestsDropped: 3,
      RequestsLost: 0,
    });
    // A manifest that is not one: counts of 0, no statistic.
    expect(targetFiguresOf('A', 'nonsense', [1, 2]).manifest).toEqual({
      scheduled: 0,
      succeeded: 0,
      failed: 0,
      dropped: 0,
      droppedByReason: {},
    });
    expect(runMetricSets('S', { schedule: null, targets: [t], comparison: null })).toHaveLength(2);
  });

  it("a capacity search: each target's sustained factor, none when no factor was", () => {
    const sets = capacityMetricSets('local', {
      targets: [{ name: 'A', sustained_factor: 2.4 } as never, { name: 'B', sustained_factor: null } as never],
    });
    expect(sets.map((s) => [s.dimensions, valuesOf(s)])).toEqual([
      [{ Stack: 'local', Target: 'A' }, { CapacityFactorSustained: 2.4 }],
      [{ Stack: 'local', Target: 'B' }, {}],
    ]);
  });

  it('a namespace CloudWatch takes; not AWS/, not empty, no space or control character', () => {
    for (const ok of ['capture-replay', 'team/llm.replay', 'a#b:c_d'])
      expect(METRICS_NAMESPACE.test(ok), ok).toBe(true);
    for (const bad of ['', 'AWS/SageMaker', 'has space', 'tab\t', 'x'.repeat(256)])
      expect(METRICS_NAMESPACE.test(bad), bad).toBe(false);
  });
});

describe('the documents Powertools writes', () => {
  it(
    'one EMF document per set and dimension set, valid by the specification, with no `service` dimension and ' +
      'nothing Powertools warns of',
    async () => {
      const { result } = await analysedRun('w2', { scheduled: true });
      const sets = runMetricSets('CaptureReplay', result.figures!);
      const warnings: unknown[] = [];
      const docs = emfDocuments(sets, 'capture-replay', Date.now(), {
        ...QUIET,
        warn: (...args: unknown[]) => void warnings.push(args),
      });
      expect(warnings).toEqual([]);
      expect(docs).toHaveLength(sets.reduce((n, s) => n + s.dimensionSets.length, 0));
      for (const doc of docs) expect(emfProblems(doc)).toEqual([]);
      expect(docs.slice(0, 2)).toEqual([
        {
          _aws: {
            Timestamp: expect.any(Number),
            CloudWatchMetrics: [
              { Namespace: 'capture-replay', Dimensions: [['Stack', 'Target']], Metrics: expect.any(Array) },
            ],
          },
          Stack: 'CaptureReplay',
          Target: 'A',
          ...valuesOf(sets[0]!),
        },
        {
          _aws: {
            Timestamp: expect.any(Number),
            CloudWatchMetrics: [
              {
                Namespace: 'capture-replay',
                Dimensions: [['Stack', 'Schedule', 'Target']],
                Metrics: expect.any(Array),
              },
            ],
          },
          Stack: 'CaptureReplay',
          Schedule: 'nightly',
          Target: 'A',
          ...valuesOf(sets[0]!),
        },
      ]);
      // The timestamp asked: the run's end.
      expect(
        (emfDocuments(sets, 'capture-replay', result.figures!.endedAtMs!, QUIET)[0]!._aws as { Timestamp: number })
          .Timestamp,
      ).toBe(result.figures!.endedAtMs);
      expect(JSON.stringify(docs)).not.toContain('service');
      // What CloudWatch makes of them: each metric at each of its levels.
      const ids = metricIdentities(docs);
      expect(ids).toContain('capture-replay|TimeToFirstTokenP99|Stack,Target');
      expect(ids).toContain('capture-replay|TimeToFirstTokenP99|Schedule,Stack,Target');
      expect(ids).toContain('capture-replay|Verdict|Metric,Schedule,Stack,Target');
      expect(ids).toContain('capture-replay|RequestsLost|Stack');
    },
  );

  it("the functions' writer prints the same documents on standard output, and nothing when disabled", () => {
    const sets = capacityMetricSets('S', { targets: [{ name: 'A', sustained_factor: 2 } as never] });
    const at = Date.now();
    const printed: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    const saved = process.env.POWERTOOLS_METRICS_DISABLED;
    process.stdout.write = ((chunk: string) => (printed.push(String(chunk)), true)) as typeof process.stdout.write;
    try {
      process.env.POWERTOOLS_METRICS_DISABLED = 'false';
      new CloudWatchMetrics('ns', QUIET).publish(sets, at);
      process.env.POWERTOOLS_METRICS_DISABLED = 'true';
      new CloudWatchMetrics('ns', QUIET).publish(sets, at);
    } finally {
      process.stdout.write = write;
      if (saved === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
      else process.env.POWERTOOLS_METRICS_DISABLED = saved;
    }
    expect(printed.map((l) => JSON.parse(l) as unknown)).toEqual(emfDocuments(sets, 'ns', at, QUIET));
  });

  it(
    "the specification's rules are checked: a dimension that is not a member, a unit it does not know, a " +
      'metric that is not a number',
    () => {
      const good = {
        _aws: {
          Timestamp: 1,
          CloudWatchMetrics: [{ Namespace: 'n', Dimensions: [['Stack']], Metrics: [{ Name: 'M', Unit: 'Count' }] }],
        },
        Stack: 's',
        M: 1,
      };
      expect(emfProblems(good)).toEqual([]);
      expect(emfProblems({ ...good, Stack: undefined })).toEqual(['dimension Stack: not a string member of the root']);
      expect(emfProblems({ ...good, M: 'one' })).toEqual([
        'metric M: not a number (or an array of at most 100) on the root',
      ]);
      expect(
        emfProblems({
          ...good,
          _aws: {
            ...good._aws,
            CloudWatchMetrics: [{ ...good._aws.CloudWatchMetrics[0], Metrics: [{ Name: 'M', Unit: 'Tokens' }] }],
          },
        })[0],
      ).toMatch(/^schema: _aws\.CloudWatchMetrics\.0\.Metrics\.0\.Unit/);
      expect(emfProblems({ ...good, _aws: { ...good._aws, Timestamp: 1.5 } })[0]).toMatch(/^schema: _aws\.Timestamp/);
    },
  );
});
