/**
 * The CLI's `--cloudwatch` (issue 34 item 4), as a user runs it (the built CLI, its own
 * process) against the bundled mock server: `replay`, `compare` and `capacity` write the
 * figures the pipeline's functions write as CloudWatch metrics, the same EMF documents (valid by
 * the specification: test/support/emf.ts), to cloudwatch-emf.jsonl in the run's folder and not
 * to stdout; their values are the run's files'. `--cloudwatch-publish` sends them to CloudWatch
 * (moto here) with PutMetricData, where they are listed under their dimensions.
 */
import { CloudWatchClient, GetMetricStatisticsCommand, ListMetricsCommand } from '@aws-sdk/client-cloudwatch';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ComparisonDocument } from '../../lambdas/core/compare/types';
import { verdictScore } from '../../lambdas/core/metrics/cloudwatch';
import { writeCaptureFile } from '../support/capture-gen';
import { emfProblems } from '../support/emf';
import { awsClientConfig, describeWithMoto, startMoto, type Moto } from '../support/moto';
import { runCli, startMockProcess, type MockProcess } from '../support/processes';

const work = mkdtempSync(join(tmpdir(), 'cr-cloudwatch-flag-'));
const captures = join(work, 'captures');
const out = join(work, 'out');
const docsIn = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const json = (file: string) =>
  JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, number> & Record<string, unknown>>;

describeWithMoto("--cloudwatch: the pipeline's metrics from a run made here", () => {
  let moto: Moto;
  let mock: MockProcess;
  const env = (): NodeJS.ProcessEnv => ({
    AWS_ENDPOINT_URL: moto.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    AWS_CONFIG_FILE: join(work, 'none'),
    AWS_SHARED_CREDENTIALS_FILE: join(work, 'none'),
    AWS_EC2_METADATA_DISABLED: 'true',
  });

  beforeAll(async () => {
    mkdirSync(captures);
    // 20 requests a second for 2 s, streamed: first token, inter-token latency and throughput measured.
    await writeCaptureFile(join(captures, 'c.jsonl'), {
      ratePerSecond: 20,
      durationSeconds: 2,
      startTime: Date.UTC(2026, 3, 29),
      bodyBytes: 200,
    });
    [moto, mock] = await Promise.all([
      startMoto(),
      startMockProcess(['--ttft-ms', '3', '--itl-ms', '1', '--output-tokens', '4']),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([mock?.stop(), moto?.stop()]);
    rmSync(work, { recursive: true, force: true });
  });

  it("replay: cloudwatch-emf.jsonl in the run's folder, its figures the files', and with --cloudwatch-publish " +
    'the same in CloudWatch', async () => {
    const run = await runCli(
      [
        'replay',
        captures,
        '--target',
        `A=${mock.url}`,
        '--target',
        `B=${mock.url}`,
        '--streaming',
        '--out',
        out,
        '--run-id',
        'r1',
        '--rehearsal',
        '0',
        '--no-progress',
        '--cloudwatch',
        'capture-replay',
        '--cloudwatch-stack',
        'CaptureReplay',
        '--cloudwatch-publish',
      ],
      { env: env() },
    );
    expect(run.code, run.stderr).toBe(0);
    const file = join(out, 'r1', 'cloudwatch-emf.jsonl');
    const docs = docsIn(file);
    // Per target, per compared metric of B, and the run's own: one document each.
    expect(run.stdout).toContain(
      `CloudWatch: ${file} (${docs.length} EMF documents, namespace capture-replay, Stack CaptureReplay)\n`,
    );
    expect(run.stdout).not.toContain('"_aws"');
    for (const doc of docs) expect(emfProblems(doc)).toEqual([]);
    for (const target of ['A', 'B']) {
      const manifest = json(join(out, 'r1', target, 'run_manifest.json'));
      const agg = json(join(out, 'r1', target, 'profile_export_aiperf.json'));
      expect(docs.filter((d) => d.Target === target && d.Metric === undefined)).toEqual([
        expect.objectContaining({
          Stack: 'CaptureReplay',
          RequestsScheduled: manifest.scheduled,
          RequestsSucceeded: manifest.succeeded,
          TimeToFirstTokenP50: agg.time_to_first_token!.p50,
          InterTokenLatencyP50: agg.inter_token_latency!.p50,
          OutputTokensPerSecond: agg.output_token_throughput!.avg,
          ScheduleLatenessP99: agg.schedule_lag!.p99,
        }),
      ]);
    }
    const comparison = json(join(out, 'r1', 'comparison.json')) as unknown as ComparisonDocument;
    for (const m of comparison.metrics)
      expect(
        docs.find((d) => d.Metric === m.tag),
        m.tag,
      ).toMatchObject({ Target: 'B', Verdict: verdictScore(m.verdict) });
    expect(docs.find((d) => d.Target === undefined)).toMatchObject({ Stack: 'CaptureReplay', RequestsLost: 0 });

    // Published: every metric of every document under its dimensions, at the run's end.
    const datapoints = docs.reduce(
      (n, d) => n + (d._aws as { CloudWatchMetrics: { Metrics: unknown[] }[] }).CloudWatchMetrics[0]!.Metrics.length,
      0,
    );
    expect(run.stdout).toContain(`CloudWatch: ${datapoints} data points published to namespace capture-replay\n`);
    const cw = new CloudWatchClient(awsClientConfig(moto.endpoint));
    try {
      const listed = (await cw.send(new ListMetricsCommand({ Namespace: 'capture-replay' }))).Metrics ?? [];
      const ids = new Set(
        listed.map(
          (m) =>
            `${m.MetricName}|${(m.Dimensions ?? [])
              .map((d) => `${d.Name}=${d.Value}`)
              .sort()
              .join(',')}`,
        ),
      );
      expect(ids).toContain('TimeToFirstTokenP99|Stack=CaptureReplay,Target=A');
      expect(ids).toContain('Verdict|Metric=time_to_first_token,Stack=CaptureReplay,Target=B');
      expect(ids).toContain('RequestsLost|Stack=CaptureReplay');
      const a = docs.find((d) => d.Target === 'A' && d.Metric === undefined)!;
      const at = (a._aws as { Timestamp: number }).Timestamp;
      const stats = await cw.send(
        new GetMetricStatisticsCommand({
          Namespace: 'capture-replay',
          MetricName: 'TimeToFirstTokenP99',
          Dimensions: [
            { Name: 'Stack', Value: 'CaptureReplay' },
            { Name: 'Target', Value: 'A' },
          ],
          StartTime: new Date(at - 3_600_000),
          EndTime: new Date(at + 3_600_000),
          Period: 7200,
          Statistics: ['Maximum'],
        }),
      );
      expect(stats.Datapoints?.map((p) => p.Maximum)).toEqual([a.TimeToFirstTokenP99]);
    } finally {
      cw.destroy();
    }
  }, 120_000);

  it("compare: the folders' figures and the comparison's, beside it in --out (which it needs)", async () => {
    const cmp = join(work, 'cmp');
    const compared = await runCli(
      [
        'compare',
        join(out, 'r1', 'A'),
        join(out, 'r1', 'B'),
        '--names',
        'old,new',
        '--out',
        cmp,
        '--cloudwatch',
        'team/replay',
      ],
      { env: env() },
    );
    expect(compared.code, compared.stderr).toBe(0);
    const docs = docsIn(join(cmp, 'cloudwatch-emf.jsonl'));
    for (const doc of docs) expect(emfProblems(doc)).toEqual([]);
    expect(new Set(docs.map((d) => d.Target))).toEqual(new Set(['old', 'new', undefined]));
    expect(
      docs.every(
        (d) =>
          d.Stack === 'local' &&
          (d._aws as { CloudWatchMetrics: { Namespace: string }[] }).CloudWatchMetrics[0]!.Namespace === 'team/replay',
      ),
    ).toBe(true);
    expect(docs.filter((d) => d.Metric !== undefined).every((d) => d.Target === 'new')).toBe(true);
    const noOut = await runCli(['compare', join(out, 'r1', 'A'), join(out, 'r1', 'B'), '--cloudwatch', 'x'], {
      env: env(),
    });
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toContain('--cloudwatch writes cloudwatch-emf.jsonl beside the comparison: give --out');
  }, 60_000);

  it("capacity: each target's sustained factor; a flag without --cloudwatch is a usage error", async () => {
    const search = await runCli(
      [
        'capacity',
        captures,
        '--target',
        `A=${mock.url}`,
        '--out',
        out,
        '--run-id',
        'cap',
        '--window',
        '1s',
        '--cooldown',
        '0',
        '--rehearsal',
        '0',
        '--lead',
        '100',
        '--max-factor',
        '2',
        '--goodput',
        'request_latency:5000',
        '--no-progress',
        '--cloudwatch',
        'capture-replay',
      ],
      { env: env() },
    );
    expect(search.code, search.stderr).toBe(0);
    const doc = json(join(out, 'cap', 'capacity.json')) as unknown as { targets: { sustained_factor: number }[] };
    expect(docsIn(join(out, 'cap', 'cloudwatch-emf.jsonl'))).toEqual([
      expect.objectContaining({
        Stack: 'local',
        Target: 'A',
        CapacityFactorSustained: doc.targets[0]!.sustained_factor,
      }),
    ]);
    const alone = await runCli(['replay', captures, '--url', mock.url, '--cloudwatch-stack', 'S'], { env: env() });
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--cloudwatch-stack goes with --cloudwatch <namespace>');
  }, 120_000);
});
