/**
 * A SageMaker endpoint as a target of the deployed pipeline, on emulated AWS: the stack is
 * synthesized with two targets, an OpenAI-compatible HTTP one (the bundled mock server) and a
 * SageMaker one (the bundled mock SageMaker runtime, its own process, reached by the fire
 * function's runtime client through the endpoint override of deps.ts), its stateful
 * resources made on moto, and the real ingest, fire and collect handlers run on recorded
 * clients as in iam.test.ts (test/support/iam/deployment.ts).
 *
 * What is checked: the describe below.
 */
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startMockServer, type MockServer } from '../../lambdas/mocks/mock-server';
import { iamCallsFor, type AwsCall } from '../support/iam/aws-call-recorder';
import {
  ACCOUNT,
  clientConfig,
  deployStateful,
  distinct,
  errorsOf,
  REGION,
  show,
  startFunctions,
  synthesizeStack,
  RUN_TEST_TIMEOUT_MS,
  RUN_WAIT_MS,
  waitForObject,
  type Deployment,
  type FnName,
  type Running,
} from '../support/iam/deployment';
import { UNAUTHENTICATED } from '../support/iam/moto-iam';
import { evaluate, explain, unusedActions, unusedResources } from '../support/iam/policy-evaluator';
import { logicalIds } from '../support/iam/template-policies';
import { describeWithMoto, startMoto, type Moto } from '../support/moto';
import type { MockProcess } from '../support/processes';
import {
  startMockSageMakerProcess,
  waitForLoggedRequests,
  type LoggedSageMakerRequest,
} from '../support/sagemaker-mock';

const CAPTURE_BUCKET = 'capture-bucket';
/** Mixed case on purpose: invoked as written, authorized as SageMaker writes it in ARNs (lower case). */
const ENDPOINT = 'Replay-LLM-1';
const ENDPOINT_ARN = `arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint/replay-llm-1`;
const CSV = '5.1,3.5,1.4,0.2\n6.2,2.9,4.3,1.3';
const KEY = 'datacapture/demo-endpoint/AllTraffic/2026/04/29/00/mixed.jsonl';

const line = (id: string, ms: number, input: object, output?: object) =>
  JSON.stringify({
    captureData: {
      endpointInput: { mode: 'INPUT', ...input },
      ...(output ? { endpointOutput: { mode: 'OUTPUT', ...output } } : {}),
    },
    eventMetadata: { eventId: id, inferenceTime: new Date(Date.parse('2026-04-29T00:00:00Z') + ms).toISOString() },
    eventVersion: '0',
  });
const chat = (content: string) => ({
  observedContentType: 'application/json',
  data: JSON.stringify({ messages: [{ role: 'user', content }], max_tokens: 8 }),
  encoding: 'JSON',
});
const CAPTURE =
  [
    line('chat-1', 0, chat('first')),
    line(
      'csv-1',
      400,
      { observedContentType: 'text/csv', data: CSV, encoding: 'CSV' },
      { observedContentType: 'text/csv', data: '0.42\n0.77', encoding: 'CSV' },
    ),
    line('chat-2', 800, chat('second')),
  ].join('\n') + '\n';

interface Manifest {
  scheduled: number;
  succeeded: number;
  failed: number;
  dropped: number;
  droppedByReason: Record<string, number>;
  balanced: boolean;
}

/**
 * A capture file of chat and CSV records lands in the capture bucket. Each target gets its
 * own plan of it: the HTTP target sends the chat records and counts the CSV one as dropped
 * (unsupported_content_type) in its manifest; the SageMaker target sends all of them, the CSV
 * body byte for byte with its content type, each with InferenceId = our request id. Every
 * AWS call each function made (the fire function's SageMaker invocations included, as the
 * action and endpoint ARN AWS authorizes) is evaluated against the function's synthesized
 * policy: all allowed, the SageMaker grant used by both actions on that endpoint only, and a
 * call to any other endpoint denied.
 */
describeWithMoto('a SageMaker endpoint and an HTTP target in one pipeline run (moto, mock runtime)', () => {
  let moto: Moto;
  let admin: { s3: S3Client; sqs: SQSClient };
  let http: MockServer;
  let sagemaker: MockProcess;
  let dir = '';
  let logFile = '';
  let deployment: Deployment;
  let running: Running[] = [];
  let results = '';
  const fn = (name: FnName) => running.find((r) => r.name === name)!;
  const text = async (key: string) =>
    (await admin.s3.send(new GetObjectCommand({ Bucket: results, Key: key }))).Body!.transformToString();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sagemaker-pipeline-'));
    logFile = join(dir, 'sagemaker-requests.jsonl');
    moto = await startMoto();
    const config = clientConfig(moto.endpoint, UNAUTHENTICATED);
    admin = { s3: new S3Client(config), sqs: new SQSClient(config) };
    http = await startMockServer({ ttftMs: 20, itlMs: 4, outputTokens: 6 });
    sagemaker = await startMockSageMakerProcess([
      '--ttft-ms',
      '20',
      '--itl-ms',
      '4',
      '--output-tokens',
      '6',
      '--endpoint',
      ENDPOINT,
      '--log',
      logFile,
    ]);
    await admin.s3.send(new CreateBucketCommand({ Bucket: CAPTURE_BUCKET }));
    const template = await synthesizeStack(
      {
        captureBucket: CAPTURE_BUCKET,
        capturePrefix: 'datacapture/',
        targets: [
          { name: 'A', url: http.url },
          { name: 'B', kind: 'sagemaker', endpointName: ENDPOINT },
        ],
        leadSeconds: 5,
        graceSeconds: 30,
        requestTimeoutSeconds: 60,
      },
      'SageMakerPipeline',
    );
    deployment = await deployStateful(template, admin.s3, admin.sqs);
    results = deployment.resolver.resources[logicalIds(template, 'AWS::S3::Bucket', 'StatefulResults')[0]!]!.Ref;
    running = await startFunctions(deployment, moto.endpoint, () => UNAUTHENTICATED, {
      motoSigning: false,
      sageMakerEndpoint: sagemaker.url,
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(running.map((r) => r.source.stop()));
    await http?.close();
    await sagemaker?.stop();
    await moto?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'replays the CSV record to the SageMaker target byte for byte and counts it as dropped for the HTTP target',
    async () => {
      await admin.s3.send(new PutObjectCommand({ Bucket: CAPTURE_BUCKET, Key: KEY, Body: CAPTURE }));
      const manifestOf = async (target: string) =>
        JSON.parse(
          await text(
            await waitForObject(admin.s3, results, 'runs/', `/${target}/run_manifest.json`, RUN_WAIT_MS, () =>
              errorsOf(running),
            ),
          ),
        ) as Manifest;
      const [a, b] = [await manifestOf('A'), await manifestOf('B')];
      expect(a).toMatchObject({
        scheduled: 3,
        succeeded: 2,
        failed: 0,
        dropped: 1,
        droppedByReason: { unsupported_content_type: 1 },
        balanced: true,
      });
      expect(b).toMatchObject({ scheduled: 3, succeeded: 3, failed: 0, dropped: 0, balanced: true });
      await Promise.all(running.map((r) => r.source.idle(2500)));

      // The HTTP target got the two chat requests, nothing else.
      expect(http.requests).toHaveLength(2);
      expect(http.requests.every((r) => r.headers['content-type'] === 'application/json')).toBe(true);

      // The SageMaker endpoint got all three: chat streamed, CSV whole, as captured.
      const logged = await waitForLoggedRequests(logFile, () => true, 3);
      expect(logged).toHaveLength(3);
      const csv = logged.filter((r) => r.headers['content-type'] === 'text/csv');
      expect(csv).toHaveLength(1);
      expect(csv[0]).toMatchObject({ method: 'POST', path: `/endpoints/${ENDPOINT}/invocations` });
      expect(Buffer.from(csv[0]!.body_base64, 'base64').equals(Buffer.from(CSV))).toBe(true);
      expect(csv[0]!.headers.accept).toBe('text/csv'); // the captured output's content type
      const chats = logged.filter((r) => r.headers['content-type'] === 'application/json');
      expect(chats.map((r) => r.path)).toEqual([
        `/endpoints/${ENDPOINT}/invocations-response-stream`,
        `/endpoints/${ENDPOINT}/invocations-response-stream`,
      ]);
      for (const r of chats)
        expect(JSON.parse(Buffer.from(r.body_base64, 'base64').toString())).toMatchObject({
          stream: true,
          stream_options: { include_usage: true },
        });
      // Every invocation was signed (SigV4 with the function's credentials).
      expect(
        logged.every((r: LoggedSageMakerRequest) =>
          r.headers.authorization?.startsWith('AWS4-HMAC-SHA256 Credential=testing/'),
        ),
      ).toBe(true);

      // InferenceId = our request id: the endpoint's own Data Capture joins back to our records.
      const runDir = (
        await waitForObject(admin.s3, results, 'runs/', '/B/profile_export.jsonl', 10_000, () => '')
      ).slice(0, -'B/profile_export.jsonl'.length);
      const records = (await text(`${runDir}B/profile_export.jsonl`))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { metadata: { x_request_id: string }; capture_replay: { event_id?: string } });
      expect(records).toHaveLength(3);
      expect(logged.map((r) => r.headers['x-amzn-sagemaker-inference-id']).sort()).toEqual(
        records.map((r) => r.metadata.x_request_id).sort(),
      );
      // The run recorded where B's requests went.
      const aggregates = JSON.parse(await text(`${runDir}B/profile_export_aiperf.json`)) as {
        capture_replay?: { targets?: unknown };
      };
      expect(aggregates.capture_replay?.targets).toEqual(
        expect.arrayContaining([{ name: 'B', kind: 'sagemaker', endpoint_name: ENDPOINT }]),
      );

      for (const r of running) {
        expect(
          r.recordings.flatMap((x) => x.unmapped),
          `${r.name}: unmapped commands`,
        ).toEqual([]);
        expect(r.source.stats.handlerErrors + r.source.stats.failedRecords, `${r.name}: ${errorsOf([r])}`).toBe(0);
      }
    },
    RUN_TEST_TIMEOUT_MS,
  );

  it("records the fire function's SageMaker invocations as AWS authorizes them: both actions, that endpoint's ARN", () => {
    const invocations = fn('fire').calls.filter((c) => c.service === 'sagemaker');
    expect(new Set(invocations.map((c) => `${c.operation} ${c.action} ${c.resource} ${c.status}`))).toEqual(
      new Set([
        `InvokeEndpoint sagemaker:InvokeEndpoint ${ENDPOINT_ARN} 200`,
        `InvokeEndpointWithResponseStream sagemaker:InvokeEndpointWithResponseStream ${ENDPOINT_ARN} 200`,
        `InvokeEndpointWithResponseStream sagemaker:InvokeEndpoint ${ENDPOINT_ARN} 200`,
      ]),
    );
    // Only the fire function invokes endpoints.
    for (const name of ['ingest', 'collect'] as const)
      expect(fn(name).calls.filter((c) => c.service === 'sagemaker')).toEqual([]);
  });

  it.each(['ingest', 'fire', 'collect'] as const)(
    'every AWS call of %s is allowed by its synthesized policy',
    (name) => {
      const { statements } = fn(name).policies;
      const denied = distinct(fn(name).calls).filter((c) => evaluate(statements, c) !== 'allowed');
      expect(denied.map((c) => `${show(c)}: ${evaluate(statements, c)}`)).toEqual([]);
    },
  );

  it('the SageMaker grant is exactly what the invocations used, and nothing else passes it', () => {
    const { statements } = fn('fire').policies;
    const invocations = distinct(fn('fire').calls.filter((c) => c.service === 'sagemaker'));
    // One statement allows them, and without it they are denied.
    const grants = new Set(invocations.flatMap((c) => explain(statements, c).allowedBy));
    expect(grants.size).toBe(1);
    const [grant] = [...grants];
    const without = statements.filter((_, i) => i !== grant);
    for (const c of invocations) expect(evaluate(without, c), show(c)).toBe('implicit-deny');
    // Every action and resource it grants was used by some invocation: nothing broader.
    const mine = [statements[grant!]!];
    expect([...unusedActions(mine, invocations), ...unusedResources(mine, invocations)]).toEqual([]);
    // Another endpoint (same account and region), the same endpoint elsewhere, an inference
    // component the target does not name, other SageMaker actions: denied. A request is
    // allowed only if every IAM request it makes is.
    const request = (
      input: Record<string, unknown>,
      command = 'InvokeEndpointCommand',
      region = REGION,
      account = ACCOUNT,
    ): AwsCall[] => iamCallsFor('SageMakerRuntimeClient', command, input, { region, partition: 'aws', account });
    const other = (action: string): AwsCall[] => [
      { service: 'sagemaker', operation: action, action, resource: ENDPOINT_ARN, context: {} },
    ];
    const refused = [
      request({ EndpointName: 'other-endpoint' }),
      request({ EndpointName: 'other-endpoint' }, 'InvokeEndpointWithResponseStreamCommand'),
      request({ EndpointName: `${ENDPOINT}-2` }),
      request({ EndpointName: ENDPOINT }, 'InvokeEndpointCommand', 'us-west-2'),
      request({ EndpointName: ENDPOINT }, 'InvokeEndpointWithResponseStreamCommand', REGION, '210987654321'),
      request({ EndpointName: ENDPOINT, InferenceComponentName: 'some-component' }),
      other('sagemaker:InvokeEndpointAsync'),
      other('sagemaker:DescribeEndpoint'),
    ];
    for (const calls of refused)
      expect(
        calls.map((c) => evaluate(statements, c)),
        calls.map(show).join('; '),
      ).toContain('implicit-deny');
    // The same request as the target's is allowed, whatever the case it names the endpoint in.
    for (const calls of [
      request({ EndpointName: ENDPOINT }),
      request({ EndpointName: ENDPOINT.toLowerCase() }, 'InvokeEndpointWithResponseStreamCommand'),
    ]) {
      expect(calls.map((c) => evaluate(statements, c))).toEqual(calls.map(() => 'allowed'));
    }
  });
});
