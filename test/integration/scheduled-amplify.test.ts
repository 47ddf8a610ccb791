/**
 * A scheduled run with `amplify: 2` on moto with IAM enforced (issue 20 item 5): the plan,
 * fire and collect functions run their real handlers with their synthesized environments,
 * signing as users holding exactly their synthesized statements (as scheduled-ab.test.ts).
 *
 * Checked: each target's mock receives every request of the window twice (each captured
 * event's copy 0 and copy 1), the manifests count 2x the window, the records carry their copy
 * index outside AIPerf's metadata, the ingest report counts the copies, and the comparison
 * pairs A and B request by request (event + copy): every request is a pair.
 */
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { windowRunId } from '../../lambdas/core/scheduled-runs/contract';
import { makePlanHandler } from '../../lambdas/handlers/plan';
import {
  clientConfig,
  deployStateful,
  errorsOf,
  FUNCTIONS,
  json,
  planFunction,
  show,
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

const CAPTURE_BUCKET = 'scheduled-amplify-captures';
const PARTITION = 'datacapture/demo-endpoint/AllTraffic/2026/04/29/01';
const SCHEDULED = '2026-04-29T02:00:00Z';
const T0 = Date.parse('2026-04-29T01:00:00Z');
/** 24 requests 10 s apart in the window (01:00-02:00): 4 minutes of capture. */
const IDS = Array.from({ length: 24 }, (_, i) => `ev-${String(i).padStart(3, '0')}`);
const RUN: FnName[] = ['plan', 'fire', 'collect'];

async function loggedIds(file: string): Promise<string[]> {
  const text = existsSync(file) ? await readFile(file, 'utf8') : '';
  return text
    .split('\n')
    .filter((l) => l.endsWith('}'))
    .map((l) => {
      const body = JSON.parse(
        Buffer.from((JSON.parse(l) as { body_base64: string }).body_base64, 'base64').toString(),
      ) as { messages: { content: string }[] };
      return /request (ev-\d+)$/.exec(body.messages[0]!.content)?.[1] ?? 'unrecognised';
    });
}

describeWithMoto('a scheduled run with amplify 2 on moto, IAM enforced', () => {
  let moto: Moto;
  let dir: string;
  let mocks: MockProcess[] = [];
  let logs: { A: string; B: string };
  let running: Running[] = [];
  let operator: { s3: S3Client; sqs: SQSClient };
  let results = '';
  let planQueue = '';
  const users = new Map<FnName, Credentials>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scheduled-amplify-'));
    logs = { A: join(dir, 'a.log'), B: join(dir, 'b.log') };
    mocks = await Promise.all(
      [logs.A, logs.B].map((log) =>
        startMockProcess(['--ttft-ms', '5', '--itl-ms', '1', '--output-tokens', '3', '--log', log]),
      ),
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
        captureBucket: CAPTURE_BUCKET,
        capturePrefix: 'datacapture/',
        targets: [
          { name: 'A', url: mocks[0]!.url },
          { name: 'B', url: mocks[1]!.url },
        ],
        // 4 minutes of capture in 4 s, at twice its traffic.
        schedules: [
          {
            name: 'peak2x',
            expression: 'cron(0 2 * * ? *)',
            timezone: 'UTC',
            window: { daysAgo: 0, from: '01:00', to: '02:00' },
            targets: ['A', 'B'],
            timeScale: 60,
            amplify: 2,
          },
        ],
        leadSeconds: 5,
        graceSeconds: 30,
        requestTimeoutSeconds: 60,
      },
      'ScheduledAmplify',
    );
    const deployment = await deployStateful(template, s3, sqs);
    const ref = (type: string, prefix: string) =>
      deployment.resolver.resources[logicalIds(template, type, prefix)[0]!]!;
    results = ref('AWS::S3::Bucket', 'StatefulResults').Ref;
    planQueue = ref('AWS::SQS::Queue', 'StatefulPlanQueue').Ref;
    const specs = [...FUNCTIONS.filter((f) => RUN.includes(f.name)), planFunction(makePlanHandler)];
    for (const f of specs) {
      const { statements } = functionPolicies(template, f.prefix, deployment.resolver);
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
    await Promise.all(running.map((r) => r.source.stop()));
    await Promise.all(mocks.map((m) => m.stop()));
    await moto?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('fires 2x the window to each target, each copy its own request, counted and paired by event + copy', async () => {
    const runId = windowRunId('peak2x', SCHEDULED);
    await operator.sqs.send(
      new SendMessageCommand({
        QueueUrl: planQueue,
        MessageBody: JSON.stringify({ v: 1, kind: 'window', schedule: 'peak2x', scheduledTime: SCHEDULED }),
      }),
    );
    const denials = () =>
      running.flatMap((r) => r.calls.filter((c) => c.status === 403).map((c) => `${r.name}: ${show(c)}`)).join('; ');
    await waitForObject(
      operator.s3,
      results,
      `runs/${runId}/`,
      'comparison.json',
      90_000,
      () =>
        `denied: ${denials() || 'none'}; ${errorsOf(running)} ` +
        running
          .flatMap((r) =>
            r.source.stats.errors.flatMap((e) =>
              ((e as { recordErrors?: unknown[] }).recordErrors ?? []).map((x) => String((x as Error).stack ?? x)),
            ),
          )
          .join(' | '),
    );
    await Promise.all(running.map((r) => r.source.idle(2500)));

    for (const target of ['A', 'B'] as const) {
      const ids = await loggedIds(logs[target]);
      expect(ids.length, `${target}: requests received`).toBe(2 * IDS.length);
      expect([...ids].sort(), `${target}: each captured request twice`).toEqual(IDS.flatMap((id) => [id, id]).sort());
      expect(await json(operator.s3, results, `runs/${runId}/${target}/run_manifest.json`), target).toMatchObject({
        scheduled: 2 * IDS.length,
        succeeded: 2 * IDS.length,
        failed: 0,
        dropped: 0,
        balanced: true,
      });
      const text = (
        await operator.s3.send(
          new GetObjectCommand({ Bucket: results, Key: `runs/${runId}/${target}/profile_export.jsonl` }),
        )
      ).Body!;
      const records = (await text.transformToString())
        .split('\n')
        .filter(Boolean)
        .map(
          (l) =>
            JSON.parse(l) as {
              metadata: Record<string, unknown>;
              capture_replay: { capture_event_id: string; capture_copy?: number };
            },
        );
      const keys = records.map((r) => `${r.capture_replay.capture_event_id}/${r.capture_replay.capture_copy}`);
      expect(new Set(keys).size, `${target}: one record per event and copy`).toBe(2 * IDS.length);
      expect(
        keys.filter((k) => k.endsWith('/1')),
        `${target}: copy 1 of every event`,
      ).toHaveLength(IDS.length);
      for (const r of records) expect(Object.keys(r.metadata)).not.toContain('capture_copy');
    }
    const report = (await json(operator.s3, results, `runs/${runId}/ingest_report.json`)) as {
      timing: { amplification?: unknown };
    };
    expect(report.timing.amplification).toEqual({
      factor: 2,
      capturedRequests: IDS.length,
      scheduledRequests: 2 * IDS.length,
    });
    const comparison = (await json(operator.s3, results, `runs/${runId}/comparison.json`)) as {
      comparisons: { mode: string; pairs: { used: number; excluded: Record<string, number> } }[];
    };
    expect(comparison.comparisons[0]).toMatchObject({ mode: 'paired', pairs: { used: 2 * IDS.length } });
    expect(denials()).toBe('');
  }, 150_000);
});
