/**
 * autoReplay `{ "targets": ["A"] }` on moto: a deployment with targets A and B, synthesized with
 * the subset, its functions running their real handlers with their template environments
 * (test/support/iam/deployment.ts). A capture file put in the bucket reaches the ingest through
 * the S3 notification; the run is planned, fired and collected for A only: B's server gets no
 * request and has no results. Every AWS call is evaluated against the function's synthesized
 * statements by AWS's policy logic, as test/integration/iam.test.ts's first tier does.
 */
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startMockServer, type MockServer } from '../../lambdas/mocks/mock-server';
import {
  clientConfig,
  deployStateful,
  distinct,
  errorsOf,
  json,
  show,
  startFunctions,
  synthesizeStack,
  waitForObject,
  type Deployment,
  type Running,
} from '../support/iam/deployment';
import { UNAUTHENTICATED } from '../support/iam/moto-iam';
import { evaluate } from '../support/iam/policy-evaluator';
import { logicalIds } from '../support/iam/template-policies';
import { describeWithMoto, startMoto, type Moto } from '../support/moto';
import { REPO_ROOT } from '../support/processes';

const CAPTURE_BUCKET = 'auto-replay-captures';
const SAMPLE = join(REPO_ROOT, 'samples/datacapture/demo-endpoint/AllTraffic/2026/04/29/00/14-03-887-0a1b2c3d.jsonl');

describeWithMoto('autoReplay to a subset of the targets, on moto', () => {
  let moto: Moto;
  let s3: S3Client;
  let a: MockServer;
  let b: MockServer;
  let deployment: Deployment;
  let running: Running[] = [];
  let results = '';

  beforeAll(async () => {
    moto = await startMoto();
    const config = clientConfig(moto.endpoint, UNAUTHENTICATED);
    s3 = new S3Client(config);
    a = await startMockServer({ ttftMs: 10, itlMs: 2, outputTokens: 4 });
    b = await startMockServer({ ttftMs: 10, itlMs: 2, outputTokens: 4 });
    await s3.send(new CreateBucketCommand({ Bucket: CAPTURE_BUCKET }));
    const template = await synthesizeStack(
      {
        captureBucket: CAPTURE_BUCKET,
        capturePrefix: 'datacapture/',
        targets: [
          { name: 'A', url: a.url },
          { name: 'B', url: b.url },
        ],
        autoReplay: { targets: ['A'] },
        leadSeconds: 5,
        graceSeconds: 30,
        requestTimeoutSeconds: 60,
      },
      'AutoReplaySubset',
    );
    deployment = await deployStateful(template, s3, new SQSClient(config));
    results = deployment.resolver.resources[logicalIds(template, 'AWS::S3::Bucket', 'StatefulResults')[0]!]!.Ref;
    running = await startFunctions(deployment, moto.endpoint, () => UNAUTHENTICATED, { motoSigning: false });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(running.map((r) => r.source.stop()));
    await a?.close();
    await b?.close();
    await moto?.stop();
  });

  it('a new capture file is planned, fired and collected for A alone; B gets nothing', async () => {
    await s3.send(
      new PutObjectCommand({
        Bucket: CAPTURE_BUCKET,
        Key: 'datacapture/demo-endpoint/AllTraffic/2026/04/29/00/subset.jsonl',
        Body: readFileSync(SAMPLE),
      }),
    );
    const manifestKey = await waitForObject(s3, results, 'runs/', '/A/run_manifest.json', 60_000, () =>
      errorsOf(running),
    );
    const manifest = await json(s3, results, manifestKey);
    expect(manifest).toMatchObject({ failed: 0, balanced: true });
    expect(manifest.succeeded).toBe(manifest.scheduled);
    expect(a.requests.length).toBe(manifest.scheduled);
    await Promise.all(running.map((r) => r.source.idle(2500)));
    expect(b.requests).toEqual([]);
    // Nothing of B's anywhere: no shard, no results, no manifest.
    const runPrefix = manifestKey.slice(0, manifestKey.indexOf('/A/') + 1);
    const keys = ((await s3.send(new ListObjectsV2Command({ Bucket: results }))).Contents ?? []).map((o) => o.Key!);
    expect(keys.filter((k) => k.startsWith(`${runPrefix}A/`)).length).toBeGreaterThan(0);
    expect(keys.filter((k) => /(^|\/)B\//.test(k))).toEqual([]);
  }, 90_000);

  it('every call each function made is allowed by its synthesized statements', () => {
    for (const r of running) {
      expect(r.calls.length, `${r.name} made no AWS call`).toBeGreaterThan(0);
      const denied = distinct(r.calls.filter((c) => !c.impliedBy)).filter(
        (c) => evaluate(r.policies.statements, c) !== 'allowed',
      );
      expect(denied.map(show), r.name).toEqual([]);
    }
  });
});
