/**
 * Traffic above the sizing is said, not hidden (issue 30): the default stack (peak 50
 * requests/s) is synthesized, its stateful resources made on moto, and its ingest function runs
 * its real handler with its template environment. A 10 s capture at 1,000 requests/s lands in
 * the capture bucket: the ingest cuts more lanes than the fire event source may run at once,
 * and its report says how late the run will be at least, why, and the value of
 * peakRequestsPerSecond that fits; its log says it as a warning, and its metrics (CloudWatch EMF,
 * written by Powertools' Metrics) carry what the stack's alarm watches. The fire and collect
 * functions are not run: nothing here needs the requests sent.
 */
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { DEFAULT_METRICS_NAMESPACE } from '../../lambdas/core/metrics/cloudwatch';
import type { CapacityReport } from '../../lambdas/core/pipeline/capacity';
import { ENV } from '../../lambdas/runtime/config';
import { setEnv } from '../support/set-env';
import { captureBuffer } from '../support/capture-gen';
import {
  clientConfig,
  deployStateful,
  errorsOf,
  FUNCTIONS,
  json,
  startFunctions,
  synthesizeStack,
  waitForObject,
  type Deployment,
  type Running,
} from '../support/iam/deployment';
import { UNAUTHENTICATED } from '../support/iam/moto-iam';
import { functionEnvironment, logicalIds } from '../support/iam/template-policies';
import { describeWithMoto, startMoto, type Moto } from '../support/moto';
import { until } from '../support/until';

const CAPTURE_BUCKET = 'undersized-captures';
const STACK = 'DefaultSized';
const RATE = 1000;
const SECONDS = 10;

describeWithMoto('a default stack given a 1,000 requests/s capture, on moto', () => {
  let moto: Moto;
  let s3: S3Client;
  let deployment: Deployment;
  let running: Running[] = [];
  let results = '';
  let ingestEnv: Record<string, string> = {};
  const printed: string[] = [];
  const spies: { mockRestore(): void }[] = [];
  let restoreEnv = () => {};

  beforeAll(async () => {
    // The metrics are off in test runs (vitest.config.ts): on here, where they are read.
    restoreEnv = setEnv({ POWERTOOLS_METRICS_DISABLED: 'false' });
    moto = await startMoto();
    const config = clientConfig(moto.endpoint, UNAUTHENTICATED);
    s3 = new S3Client(config);
    await s3.send(new CreateBucketCommand({ Bucket: CAPTURE_BUCKET }));
    // Every sizing setting at its default: only where the captures are and a target.
    const template = await synthesizeStack(
      {
        captureBucket: CAPTURE_BUCKET,
        capturePrefix: 'datacapture/',
        targets: [{ name: 'A', url: 'https://a.example.com' }],
      },
      STACK,
    );
    deployment = await deployStateful(template, s3, new SQSClient(config));
    results = deployment.resolver.resources[logicalIds(template, 'AWS::S3::Bucket', 'StatefulResults')[0]!]!.Ref;
    ingestEnv = functionEnvironment(template, 'StatelessIngest', deployment.resolver);
    // The Powertools logger prints each line as one string, to the process's streams through a
    // Console of its own, or to the global console in its dev mode (POWERTOOLS_DEV): read both.
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      spies.push(
        vi
          .spyOn(stream, 'write')
          .mockImplementation(
            ((chunk: string | Uint8Array, ...rest: never[]) => (
              printed.push(String(chunk)), write(chunk, ...rest)
            )) as typeof stream.write,
          ),
      );
    }
    for (const method of ['info', 'warn'] as const) {
      const original = console[method].bind(console);
      spies.push(
        vi
          .spyOn(console, method)
          .mockImplementation((...args: unknown[]) => (printed.push(args.map(String).join(' ')), original(...args))),
      );
    }
    // The deployed lead (startFunctions shortens it for the runs it fires; none is fired here).
    running = await startFunctions(deployment, moto.endpoint, () => UNAUTHENTICATED, {
      motoSigning: false,
      functions: FUNCTIONS.filter((f) => f.name === 'ingest'),
      env: { [ENV.leadMs]: ingestEnv[ENV.leadMs]! },
    });
  }, 120_000);

  afterAll(async () => {
    for (const spy of spies) spy.mockRestore();
    restoreEnv();
    await Promise.all(running.map((r) => r.source.stop()));
    await moto?.stop();
  });

  it('its ingest report says how late the run will be at least, and names peakRequestsPerSecond with the value ' +
    'that fits; the log warns with the metric', async () => {
    const body = captureBuffer({
      ratePerSecond: RATE,
      durationSeconds: SECONDS,
      startTime: Date.UTC(2026, 3, 29, 0, 0, 0),
      bodyBytes: 300,
    });
    await s3.send(
      new PutObjectCommand({
        Bucket: CAPTURE_BUCKET,
        Key: 'datacapture/ep/AllTraffic/2026/04/29/00/busy.jsonl',
        Body: body,
      }),
    );
    const key = await waitForObject(s3, results, 'runs/', '/ingest_report.json', 90_000, () => errorsOf(running));
    const report = (await json(s3, results, key)) as { totals: { accepted: number }; capacity: CapacityReport };
    expect(report.totals.accepted).toBe(RATE * SECONDS);

    // What the template gave: the fire event source's MaximumConcurrency, and the lane's rate
    // (a lane holds at most maxShardRequests over its slot, so as many a second as that per slot second).
    const fireSource = Object.values(deployment.template.Resources).find(
      (r) =>
        r.Type === 'AWS::Lambda::EventSourceMapping' &&
        JSON.stringify(r.Properties?.EventSourceArn).includes('StatefulReplayQueue'),
    )!;
    const concurrency = (fireSource.Properties!.ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency;
    expect(ingestEnv[ENV.fireConcurrency]).toBe(String(concurrency));
    const laneRate = Number(ingestEnv[ENV.maxShardRequests]) / (Number(ingestEnv[ENV.slotMs]) / 1000);
    const lanes = Math.ceil(RATE / laneRate);
    expect(lanes, 'the default stack is sized below 1,000 requests/s').toBeGreaterThan(concurrency);

    // Request i is due at i ms (1,000 a second, spread through each captured second) in lane i
    // mod `lanes`. The first `concurrency` lanes start; the first of them to send its last request
    // frees its place for lane `concurrency`, whose first request was due at `concurrency` ms.
    const last = RATE * SECONDS - 1;
    const lastOf = (lane: number) => last - ((last - lane) % lanes);
    const firstEnd = Math.min(...Array.from({ length: concurrency }, (_, lane) => lastOf(lane)));
    const c = report.capacity;
    expect(c).toMatchObject({
      lanesAtOnce: lanes,
      concurrency,
      onTime: false,
      lateLanes: lanes - concurrency,
      busiestSecondRequests: RATE,
      raise: { setting: 'peakRequestsPerSecond', value: RATE },
    });
    if (lanes - concurrency === 1) expect(c.expectedLatenessSeconds).toBe((firstEnd - concurrency) / 1000);
    expect(c.expectedLatenessSeconds).toBeGreaterThan(SECONDS - 1);
    expect(c.reason).toContain(`raise peakRequestsPerSecond to ${RATE}`);
    expect(c.reason).toContain('lower bound');

    // The handler's warning: the setting, its value and the run's expected lateness; and the
    // metrics CloudWatch reads from their own EMF line (namespace, Stack dimension, both metrics).
    // Both are written once the run's messages are sent, after the report.
    const lines = () =>
      printed
        .flatMap((text) => text.split('\n'))
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    await until(
      () => lines().some((l) => '_aws' in l) && lines().some((l) => l.level === 'WARN'),
      "the ingest's capacity log line and metrics",
      60_000,
      100,
    );
    const [warning, ...moreWarnings] = lines().filter(
      (l) => l.level === 'WARN' && String(l.message).startsWith('run expected late'),
    );
    expect(moreWarnings).toEqual([]);
    expect(warning).toMatchObject({
      message: `run expected late by at least ${c.expectedLatenessSeconds} s: raise peakRequestsPerSecond to ${RATE}`,
      raise: 'peakRequestsPerSecond',
      raiseTo: RATE,
    });
    const [metrics, ...more] = lines().filter((l) => '_aws' in l);
    expect(more).toEqual([]);
    expect(metrics).toEqual({
      _aws: {
        Timestamp: expect.any(Number),
        CloudWatchMetrics: [
          {
            Namespace: DEFAULT_METRICS_NAMESPACE,
            Dimensions: [['Stack']],
            Metrics: [
              { Name: 'ExpectedLatenessSeconds', Unit: 'Seconds' },
              { Name: 'UndersizedRuns', Unit: 'Count' },
            ],
          },
        ],
      },
      Stack: STACK,
      ExpectedLatenessSeconds: c.expectedLatenessSeconds,
      UndersizedRuns: 1,
    });
  }, 150_000);
});
