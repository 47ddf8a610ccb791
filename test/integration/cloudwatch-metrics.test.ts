/**
 * The runs' CloudWatch metrics on moto, IAM enforced (issue 34): a scheduled A/B run through
 * the plan, fire and collect functions' real handlers, each signing as a user holding exactly
 * its synthesized statements (as scheduled-amplify.test.ts). What the functions print is read:
 * the EMF documents Powertools' Metrics writes (the collector's, what the run found; the plan
 * function's, the run's capacity) must parse as CloudWatch's specification requires (its
 * schema and rules: test/support/emf.ts), name the metrics and dimensions the stack's
 * dashboard and alarms read, hold the figures of the run's own files, and be written once.
 * No function calls CloudWatch: EMF goes through the logs.
 */
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { ComparisonDocument } from '../../lambdas/core/compare/types';
import {
  comparisonsOf,
  DEFAULT_METRICS_NAMESPACE,
  ERROR_RATE_METRIC,
  INGEST_METRICS,
  RUN_METRICS,
  TARGET_METRICS,
  verdictScore,
} from '../../lambdas/core/metrics/cloudwatch';
import { windowRunId } from '../../lambdas/core/scheduled-runs/contract';
import { makePlanHandler } from '../../lambdas/handlers/plan';
import { emfLines, emfProblems, identityOf, metricIdentities } from '../support/emf';
import {
  clientConfig,
  deployStateful,
  errorsOf,
  FUNCTIONS,
  json,
  planFunction,
  startFunctions,
  synthesizeStack,
  waitForObject,
  type FnName,
  type Running,
} from '../support/iam/deployment';
import {
  createUserWithPolicy,
  motoCompatibleS3Signing,
  setMotoEnforcement,
  UNAUTHENTICATED,
  withMotoBatchShim,
  type Credentials,
} from '../support/iam/moto-iam';
import { functionPolicies, logicalIds } from '../support/iam/template-policies';
import { streamedChatLine } from '../support/capture-week';
import { describeWithMoto, startMoto, type Moto } from '../support/moto';
import { startMockProcess, type MockProcess } from '../support/processes';
import { setEnv } from '../support/set-env';

const STACK = 'MetricsStack';
const CAPTURE_BUCKET = 'metrics-captures';
const PARTITION = 'datacapture/demo-endpoint/AllTraffic/2026/04/29/01';
const SCHEDULED = '2026-04-29T02:00:00Z';
const T0 = Date.parse('2026-04-29T01:00:00Z');
/** 24 requests 10 s apart, replayed 60 times as fast: 4 s. */
const IDS = Array.from({ length: 24 }, (_, i) => `ev-${String(i).padStart(3, '0')}`);
const RUN: FnName[] = ['plan', 'fire', 'collect'];

describeWithMoto("the runs' CloudWatch metrics, written as EMF by the functions on moto (IAM enforced)", () => {
  let moto: Moto;
  let dir: string;
  let mocks: MockProcess[] = [];
  let running: Running[] = [];
  let operator: { s3: S3Client; sqs: SQSClient };
  let results = '';
  let planQueue = '';
  const users = new Map<FnName, Credentials>();
  const printed: string[] = [];
  let restore = () => {};

  beforeAll(async () => {
    // Metrics are off in test runs (vitest.config.ts): on here, before the functions' deps are made.
    const restoreEnv = setEnv({ POWERTOOLS_METRICS_DISABLED: 'false' });
    const write = process.stdout.write.bind(process.stdout);
    const spy = vi
      .spyOn(process.stdout, 'write')
      .mockImplementation(
        ((chunk: string | Uint8Array, ...rest: never[]) => (
          printed.push(String(chunk)), write(chunk, ...rest)
        )) as typeof process.stdout.write,
      );
    restore = () => (spy.mockRestore(), restoreEnv());
    dir = mkdtempSync(join(tmpdir(), 'cloudwatch-metrics-'));
    // B answers its first token 30 ms later than A.
    mocks = await Promise.all(
      [5, 35].map((ttft) => startMockProcess(['--ttft-ms', String(ttft), '--itl-ms', '1', '--output-tokens', '3'])),
    );
    moto = await startMoto({ env: { INITIAL_NO_AUTH_ACTION_COUNT: '0' } });
    await setMotoEnforcement(moto.endpoint, false);
    const setup = clientConfig(moto.endpoint, UNAUTHENTICATED);
    const s3 = new S3Client(setup);
    const sqs = new SQSClient(setup);
    await s3.send(new CreateBucketCommand({ Bucket: CAPTURE_BUCKET }));
    await s3.send(
      new PutObjectCommand({
        Bucket: CAPTURE_BUCKET,
        Key: `${PARTITION}/00-03-887-0a1b2c3d.jsonl`,
        Body: IDS.map((id, i) => streamedChatLine(id, T0 + i * 10_000)).join('\n') + '\n',
      }),
    );
    const template = await synthesizeStack(
      {
        stackName: STACK,
        captureBucket: CAPTURE_BUCKET,
        capturePrefix: 'datacapture/',
        targets: [
          { name: 'A', url: mocks[0]!.url },
          { name: 'B', url: mocks[1]!.url },
        ],
        schedules: [
          {
            name: 'nightly',
            expression: 'cron(0 2 * * ? *)',
            timezone: 'UTC',
            window: { daysAgo: 0, from: '01:00', to: '02:00' },
            targets: ['A', 'B'],
            timeScale: 60,
          },
        ],
        leadSeconds: 5,
        graceSeconds: 30,
        requestTimeoutSeconds: 60,
      },
      STACK,
    );
    const deployment = await deployStateful(template, s3, sqs);
    const ref = (type: string, prefix: string) =>
      deployment.resolver.resources[logicalIds(template, type, prefix)[0]!]!;
    results = ref('AWS::S3::Bucket', 'StatefulResults').Ref;
    planQueue = ref('AWS::SQS::Queue', 'StatefulPlanQueue').Ref;
    const specs = [...FUNCTIONS.filter((f) => RUN.includes(f.name)), planFunction(makePlanHandler)];
    for (const f of specs) {
      const { statements } = functionPolicies(template, f.prefix, deployment.resolver);
      // No function may call CloudWatch: its metrics go through its logs.
      expect(JSON.stringify(statements), f.name).not.toContain('cloudwatch:');
      users.set(
        f.name,
        await createUserWithPolicy(moto.endpoint, UNAUTHENTICATED, `fn-${f.name}`, withMotoBatchShim(statements)),
      );
    }
    const operatorCreds = await createUserWithPolicy(moto.endpoint, UNAUTHENTICATED, 'operator', [
      { Effect: 'Allow', Action: '*', Resource: '*' },
    ]);
    await setMotoEnforcement(moto.endpoint, true);
    const operatorS3 = new S3Client(clientConfig(moto.endpoint, operatorCreds));
    motoCompatibleS3Signing(operatorS3, operatorCreds);
    operator = { s3: operatorS3, sqs: new SQSClient(clientConfig(moto.endpoint, operatorCreds)) };
    running = await startFunctions(deployment, moto.endpoint, (name) => users.get(name)!, {
      motoSigning: true,
      functions: specs,
    });
  }, 120_000);

  afterAll(async () => {
    restore();
    await Promise.all(running.map((r) => r.source.stop()));
    await Promise.all(mocks.map((m) => m.stop()));
    await moto?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a scheduled A/B run: valid EMF documents, once, naming what the dashboard and alarms read, with the ' +
    "figures of the run's files", async () => {
    const runId = windowRunId('nightly', SCHEDULED);
    await operator.sqs.send(
      new SendMessageCommand({
        QueueUrl: planQueue,
        MessageBody: JSON.stringify({ v: 1, kind: 'window', schedule: 'nightly', scheduledTime: SCHEDULED }),
      }),
    );
    await waitForObject(operator.s3, results, `runs/${runId}/`, 'comparison.json', 90_000, () => errorsOf(running));
    await Promise.all(running.map((r) => r.source.idle(2500)));

    const docs = emfLines(printed);
    for (const doc of docs) expect(emfProblems(doc), JSON.stringify(doc)).toEqual([]);
    // Bounded dimensions: the stack, the schedule, the targets, the compared metrics; never the run.
    expect(JSON.stringify(docs)).not.toContain(runId);
    expect(new Set(docs.flatMap((d) => Object.keys(d).filter((k) => typeof d[k] === 'string')))).toEqual(
      new Set(['Stack', 'Schedule', 'Target', 'Metric']),
    );
    for (const d of docs)
      expect(d).toMatchObject({
        Stack: STACK,
        _aws: { CloudWatchMetrics: [{ Namespace: DEFAULT_METRICS_NAMESPACE }] },
      });

    const ids = metricIdentities(docs);
    const id = (name: string, dims: string[]) => identityOf(DEFAULT_METRICS_NAMESPACE, name, dims);
    for (const m of Object.values(TARGET_METRICS)) {
      expect(ids, m.name).toContain(id(m.name, ['Stack', 'Target']));
      expect(ids, m.name).toContain(id(m.name, ['Stack', 'Schedule', 'Target']));
    }
    for (const name of ['Verdict', 'Shift'])
      expect(ids, name).toContain(id(name, ['Stack', 'Schedule', 'Target', 'Metric']));
    for (const m of [...Object.values(RUN_METRICS), ...Object.values(INGEST_METRICS)])
      expect(ids, m.name).toContain(id(m.name, ['Stack']));

    // The figures are the files': each target's counts and AIPerf statistics; written once at each level (with and without the schedule).
    const scheduled = (d: Record<string, unknown>) => 'Schedule' in d;
    for (const target of ['A', 'B']) {
      const own = docs.filter((d) => d.Target === target && d.Metric === undefined);
      expect(own.map(scheduled), target).toEqual([false, true]);
      const manifest = await json(operator.s3, results, `runs/${runId}/${target}/run_manifest.json`);
      const agg = (await json(operator.s3, results, `runs/${runId}/${target}/profile_export_aiperf.json`)) as Record<
        string,
        Record<string, number>
      >;
      const { Schedule: _schedule, _aws: _a, ...values } = own[1]!;
      expect(own[0]).toMatchObject({ ...values, _aws: expect.any(Object) });
      expect(own[1]).toMatchObject({
        Schedule: 'nightly',
        RequestsScheduled: IDS.length,
        RequestsSucceeded: manifest.succeeded,
        RequestsFailed: manifest.failed,
        RequestsLost: 0,
        TimeToFirstTokenP99: agg.time_to_first_token!.p99,
        RequestLatencyP50: agg.request_latency!.p50,
        ScheduleLatenessP99: agg.schedule_lag!.p99,
      });
    }
    // Each verdict is comparison.json's, from B's side.
    const comparison = (await json(
      operator.s3,
      results,
      `runs/${runId}/comparison.json`,
    )) as unknown as ComparisonDocument;
    const [c] = comparisonsOf(comparison);
    for (const m of c!.metrics) {
      const [doc, ...again] = docs.filter((d) => d.Metric === m.tag && scheduled(d));
      expect(again, m.tag).toEqual([]);
      expect(doc, m.tag).toMatchObject({ Target: 'B', Schedule: 'nightly', Verdict: verdictScore(m.verdict) });
    }
    expect(docs.find((d) => d.Metric === ERROR_RATE_METRIC && scheduled(d))).toMatchObject({
      Verdict: verdictScore(c!.errors.verdict),
      Shift: 100 * (c!.errors.difference.estimate as number),
    });
    // The plan function said the run's capacity: on time.
    expect(docs.find((d) => INGEST_METRICS.expectedLateness.name in d)).toMatchObject({
      ExpectedLatenessSeconds: 0,
      UndersizedRuns: 0,
    });
  }, 150_000);
});
