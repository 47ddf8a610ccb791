/**
 * S3's 409 ConditionalRequestConflict met by the real pipeline, on moto with IAM enforced
 * (each function signs as an IAM user holding its synthesized statements, as iam.test.ts
 * tier 2). The fire and collect functions' S3 clients answer the first conditional PutObject
 * on each key with a 409, as S3 does while another conditional write to the key is in flight
 * (test/support/s3-conflicts.ts): a 409 is no verdict, so the shard must still be claimed,
 * fired once and its results written; in mirror mode the hour's roll-up must still merge.
 */
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ENV } from '../../lambdas/runtime/config';
import {
  clientConfig,
  deployStateful,
  errorsOf,
  FUNCTIONS,
  json,
  show,
  startFunctions,
  synthesizeStack,
  waitForObject,
  type FnName,
  type Running,
  type Variant,
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
import { faultCaptureLine } from '../support/fault-server';
import { describeWithMoto, startMoto, type Moto } from '../support/moto';
import { REPO_ROOT, startMockProcess, type MockProcess } from '../support/processes';
import { injectConditionalConflicts, type InjectedConflicts } from '../support/s3-conflicts';

const CAPTURE_BUCKET = 'capture-bucket';
const SAMPLE = join(REPO_ROOT, 'samples/datacapture/demo-endpoint/AllTraffic/2026/04/29/00/14-03-887-0a1b2c3d.jsonl');

describeWithMoto('S3 409 ConditionalRequestConflict: retried, not taken as a lost race (moto, IAM enforced)', () => {
  let moto: Moto;
  let mock: MockProcess;
  let logDir: string;
  let operator: S3Client;
  let results = '';
  let running: Running[] = [];
  const injected = new Map<FnName, InjectedConflicts>();
  const variants: Partial<Record<FnName, Variant>> = {};

  const mockRequests = () =>
    readFileSync(join(logDir, 'mock.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '');
  const denials = () =>
    running.flatMap((r) => r.calls.filter((c) => c.status === 403).map((c) => `${r.name}: ${show(c)} ${c.errorName}`));
  const exists = async (key: string) => {
    try {
      await (await operator.send(new GetObjectCommand({ Bucket: results, Key: key }))).Body!.transformToByteArray();
      return true;
    } catch {
      return false;
    }
  };
  const keysUnder = async (prefix: string) =>
    ((await operator.send(new ListObjectsV2Command({ Bucket: results, Prefix: prefix }))).Contents ?? []).map(
      (o) => o.Key!,
    );

  beforeAll(async () => {
    moto = await startMoto({ env: { INITIAL_NO_AUTH_ACTION_COUNT: '0' } });
    logDir = mkdtempSync(join(tmpdir(), 'conflicts-'));
    mock = await startMockProcess([
      '--ttft-ms',
      '5',
      '--itl-ms',
      '2',
      '--output-tokens',
      '4',
      '--log',
      join(logDir, 'mock.jsonl'),
    ]);
    // Setup window: enforcement off while the users and the stateful resources are created.
    await setMotoEnforcement(moto.endpoint, false);
    const setup = clientConfig(moto.endpoint, UNAUTHENTICATED);
    await new S3Client(setup).send(new CreateBucketCommand({ Bucket: CAPTURE_BUCKET }));
    const template = await synthesizeStack({
      captureBucket: CAPTURE_BUCKET,
      capturePrefix: 'datacapture/',
      targets: [{ name: 'A', url: mock.url }],
      leadSeconds: 5,
      graceSeconds: 30,
      requestTimeoutSeconds: 60,
    });
    const deployment = await deployStateful(template, new S3Client(setup), new SQSClient(setup));
    results = deployment.resolver.resources[logicalIds(template, 'AWS::S3::Bucket', 'StatefulResults')[0]!]!.Ref;
    const users = new Map<FnName, Credentials>();
    for (const f of FUNCTIONS)
      users.set(
        f.name,
        await createUserWithPolicy(
          moto.endpoint,
          UNAUTHENTICATED,
          `fn-${f.name}`,
          withMotoBatchShim(functionPolicies(template, f.prefix, deployment.resolver).statements),
        ),
      );
    const operatorCreds = await createUserWithPolicy(moto.endpoint, UNAUTHENTICATED, 'operator', [
      { Effect: 'Allow', Action: '*', Resource: '*' },
    ]);
    await setMotoEnforcement(moto.endpoint, true);
    operator = new S3Client(clientConfig(moto.endpoint, operatorCreds));
    motoCompatibleS3Signing(operator, operatorCreds);
    running = await startFunctions(deployment, moto.endpoint, (name) => users.get(name)!, {
      motoSigning: true,
      variant: (name) => variants[name],
      configureS3: (name, s3) => {
        if (name === 'fire' || name === 'collect') injected.set(name, injectConditionalConflicts(s3));
      },
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(running.map((r) => r.source.stop()));
    await mock?.stop();
    await moto?.stop();
    if (logDir) rmSync(logDir, { recursive: true, force: true });
  });

  it('file mode: every shard claim and results write first answered 409 is retried: ' +
    'each shard fired once, its results written', async () => {
    await operator.send(
      new PutObjectCommand({
        Bucket: CAPTURE_BUCKET,
        Key: 'datacapture/demo-endpoint/AllTraffic/2026/04/29/00/conflicts.jsonl',
        Body: readFileSync(SAMPLE),
      }),
    );
    const manifestKey = await waitForObject(
      operator,
      results,
      'runs/',
      '/A/run_manifest.json',
      60_000,
      () =>
        `denied: ${denials().join('; ') || 'none'}; 409s: ${injected.get('fire')?.keys.join(', ')}; ${errorsOf(running)}`,
    );
    const runId = manifestKey.split('/')[1]!;
    const manifest = await json(operator, results, manifestKey);
    expect(manifest).toMatchObject({ failed: 0, balanced: true });
    expect(manifest.scheduled).toBeGreaterThan(0);
    expect(manifest.succeeded).toBe(manifest.scheduled);
    // Each request reached the target exactly once: nothing was lost, nothing fired twice.
    expect(mockRequests()).toHaveLength(manifest.scheduled as number);

    // Every shard's claim and results write met a 409 first, and both ended up in S3.
    const fire = injected.get('fire')!.keys.filter((k) => k.startsWith(`work/${runId}/`));
    const claims = fire.filter((k) => k.includes('/_claims/'));
    const written = fire.filter((k) => k.includes('/_results/'));
    expect(claims.length).toBeGreaterThan(0);
    expect(
      written
        .map((k) =>
          k
            .split('/')
            .pop()!
            .replace(/\.jsonl$/, ''),
        )
        .sort(),
    ).toEqual(claims.map((k) => k.split('/').pop()!).sort());
    expect((await keysUnder(`work/${runId}/A/_claims/`)).sort()).toEqual([...claims].sort());
    for (const key of written) expect(await exists(key), key).toBe(true);

    await Promise.all(running.map((r) => r.source.idle(2500)));
    expect(denials()).toEqual([]);
    for (const r of running)
      expect(r.source.stats.handlerErrors + r.source.stats.failedRecords, `${r.name}: ${errorsOf([r])}`).toBe(0);
  }, 120_000);

  it("mirror mode: the hour roll-up's conditional writes first answered 409 are retried and the run is in the hour", async () => {
    // Mirror mode is the ingest's configuration (REPLAY_MODE), switched as iam.test.ts does.
    variants.ingest = { env: { [ENV.mode]: 'mirror', [ENV.lagMs]: '6000' } };
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 1000;
    const before = mockRequests().length;
    const lines = [
      faultCaptureLine(1, 'ok', { timeMs: t0, prompt: 'c-1' }),
      faultCaptureLine(2, 'ok', { timeMs: t0 + 1000, prompt: 'c-2' }),
    ];
    await operator.send(
      new PutObjectCommand({
        Bucket: CAPTURE_BUCKET,
        Key: 'datacapture/demo-endpoint/AllTraffic/mirror-conflicts.jsonl',
        Body: lines.join('\n') + '\n',
      }),
    );
    const hour = new Date(t0).toISOString().slice(0, 13);
    const hourly = await waitForObject(
      operator,
      results,
      `hours/${hour}/`,
      '/A/run_manifest.json',
      60_000,
      () => `409s: ${injected.get('collect')?.keys.join(', ')}; ${errorsOf(running)}`,
    );
    expect(await json(operator, results, hourly)).toMatchObject({ scheduled: 2, succeeded: 2, balanced: true });
    expect(mockRequests().length - before).toBe(2);
    const state = `hours/${hour}/A/`;
    expect(
      injected.get('collect')!.keys.filter((k) => k.startsWith(state)).length,
      'the roll-up state met a 409',
    ).toBeGreaterThan(0);
    delete variants.ingest;
    await Promise.all(running.map((r) => r.source.idle(2500)));
    expect(denials()).toEqual([]);
    for (const r of running)
      expect(r.source.stats.handlerErrors + r.source.stats.failedRecords, `${r.name}: ${errorsOf([r])}`).toBe(0);
  }, 120_000);
});
