/**
 * `capture-replay verify-deploy` and `link` against a deployed stack on emulated AWS, with
 * IAM enforced. The stack is synthesized with two targets, an OpenAI-compatible HTTP one (the
 * bundled mock server, its own process) and a SageMaker one (the bundled mock runtime, its own
 * process); its stateful resources are made on moto and its real ingest, fire and collect
 * handlers run, each signing as an IAM user holding its synthesized statements
 * (test/support/iam/deployment.ts). A CloudFormation stack on moto carries the synthesized
 * stack's outputs, resolved to what was made. The CLI runs as a user would run it
 * (the built CLI, AWS_ENDPOINT_URL pointing the SDK at moto), signing as an IAM user
 * that holds exactly the policy docs/first-deploy.md gives for these commands (read from the
 * page).
 *
 * moto's gaps and how the test steps around them: the describe below.
 */
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ACCOUNT,
  clientConfig,
  deployStateful,
  errorsOf,
  FUNCTIONS,
  REGION,
  startFunctions,
  synthesizeStack,
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
import type { PolicyStatement } from '../support/iam/policy-evaluator';
import { ENV } from '../../lambdas/runtime/config';
import { functionPolicies, logicalIds, resolveIntrinsics } from '../support/iam/template-policies';
import { describeWithMoto, startMoto, type Moto } from '../support/moto';
import { REPO_ROOT, runCli, startMockProcess, type CliResult, type MockProcess } from '../support/processes';
import { startMockSageMakerProcess } from '../support/sagemaker-mock';

const CAPTURE_BUCKET = 'capture-bucket';
const PREFIX = 'datacapture/';
const STACK = 'ReplayVerify';
const ENDPOINT = 'replay-llm';
/** Fifteen records accepted of the sample (lambdas/local/verify-sample.ts), each replayable by both targets. */
const SAMPLE_RECORDS = 15;

/** The statements docs/first-deploy.md gives for verify-deploy and link, placeholders filled. */
async function documentedPolicy(values: Record<string, string>): Promise<PolicyStatement[]> {
  const page = await readFile(join(REPO_ROOT, 'docs/first-deploy.md'), 'utf8');
  const block = /<!-- verify-policy:start -->\s*```json\n([\s\S]*?)```\s*<!-- verify-policy:end -->/.exec(page);
  if (!block) throw new Error('docs/first-deploy.md has no verify-policy block');
  const filled = Object.entries(values).reduce((text, [k, v]) => text.split(`<${k}>`).join(v), block[1] as string);
  expect(filled, 'every placeholder of the documented policy filled').not.toMatch(/<[a-z-]+>/);
  const statements = (JSON.parse(filled) as { Statement: (PolicyStatement & { Sid: string })[] }).Statement;
  // moto authorizes CloudFormation calls against "*" only (see the header).
  return statements.map((s) => (String(s.Action).includes('cloudformation:') ? { ...s, Resource: '*' } : s));
}

/**
 * moto 5.2.1 cannot check a presigned URL while it enforces IAM (it reads the Authorization
 * header, which a presigned GET does not have, and answers 500): links are fetched with
 * enforcement off for that one request. It also authorizes CloudFormation calls against
 * resource "*" (as Secrets Manager, test/support/iam/moto-iam.ts), so the page's stack-scoped
 * CloudFormation statement is given on "*" here.
 */
describeWithMoto('verify-deploy and link against a deployed stack (moto, IAM enforced)', () => {
  let moto: Moto;
  let http: MockProcess;
  let sagemaker: MockProcess;
  let running: Running[] = [];
  let operator: S3Client;
  let outputs: Record<string, string> = {};
  let dir = '';
  const users = new Map<string, Credentials>();
  let verifiedRun = '';
  /**
   * The ingest in mirror mode with this lag (the deployment's `mode` and `lagSeconds`, switched as the pipeline tests
   * do); null: file mode.
   */
  let mirrorLagMs: number | null = null;

  const results = () => outputs.ResultsBucketName as string;
  const env = (user: string): NodeJS.ProcessEnv => ({
    AWS_ENDPOINT_URL: moto.endpoint,
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: users.get(user)!.accessKeyId,
    AWS_SECRET_ACCESS_KEY: users.get(user)!.secretAccessKey,
    AWS_CONFIG_FILE: join(dir, 'none'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
  });
  const cli = (args: string[], user = 'verifier'): Promise<CliResult> => runCli(args, { env: env(user) });
  /** One request with moto's IAM check off (it cannot check presigned URLs). */
  const fetchLink = async (url: string) => {
    await setMotoEnforcement(moto.endpoint, false);
    try {
      const res = await fetch(url);
      return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
    } finally {
      await setMotoEnforcement(moto.endpoint, true);
    }
  };
  const text = async (bucket: string, key: string) =>
    (await operator.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
  const sampleKeys = async () =>
    (
      (
        await operator.send(
          new ListObjectsV2Command({ Bucket: CAPTURE_BUCKET, Prefix: `${PREFIX}capture-replay-verify/` }),
        )
      ).Contents ?? []
    ).map((o) => o.Key!);
  const exists = async (bucket: string, key: string) =>
    operator.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
      () => true,
      () => false,
    );
  const linkOf = (stdout: string) => stdout.split('\n').find((l) => l.startsWith('http')) ?? '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'verify-deploy-'));
    moto = await startMoto({ env: { INITIAL_NO_AUTH_ACTION_COUNT: '0' } });
    [http, sagemaker] = await Promise.all([
      startMockProcess(['--ttft-ms', '10', '--itl-ms', '2', '--output-tokens', '4']),
      startMockSageMakerProcess(['--ttft-ms', '10', '--itl-ms', '2', '--output-tokens', '4', '--endpoint', ENDPOINT]),
    ]);
    // Setup window: enforcement off while the stack, its resources and the users are made.
    await setMotoEnforcement(moto.endpoint, false);
    const setup = clientConfig(moto.endpoint, UNAUTHENTICATED);
    await new S3Client(setup).send(new CreateBucketCommand({ Bucket: CAPTURE_BUCKET }));
    const template = await synthesizeStack(
      {
        captureBucket: CAPTURE_BUCKET,
        capturePrefix: PREFIX,
        targets: [
          { name: 'A', url: http.url },
          { name: 'B', kind: 'sagemaker', endpointName: ENDPOINT },
        ],
        leadSeconds: 5,
        graceSeconds: 30,
        requestTimeoutSeconds: 60,
      },
      STACK,
    );
    const deployment = await deployStateful(template, new S3Client(setup), new SQSClient(setup));
    // The stack's outputs as CloudFormation would show them once deployed (its roles are not made on moto: ARNs as IAM writes them).
    const roles = Object.fromEntries(
      logicalIds(template, 'AWS::IAM::Role').map((id) => [id, { Ref: id, Arn: `arn:aws:iam::${ACCOUNT}:role/${id}` }]),
    );
    const resolver = { ...deployment.resolver, resources: { ...deployment.resolver.resources, ...roles } };
    const declared = (template as { Outputs?: Record<string, { Value: unknown }> }).Outputs ?? {};
    outputs = Object.fromEntries(
      Object.entries(declared).map(([k, o]) => [k, String(resolveIntrinsics(o.Value, template, resolver))]),
    );
    expect(Object.keys(outputs)).toEqual(
      expect.arrayContaining([
        'ResultsBucketName',
        'CaptureBucketName',
        'CapturePrefix',
        'IngestQueueUrl',
        'ReplayDlqUrl',
        'CollectQueueUrl',
        'AutoReplay',
        'DashboardUrl',
      ]),
    );
    expect(outputs).toMatchObject({ CaptureBucketName: CAPTURE_BUCKET, CapturePrefix: PREFIX, AutoReplay: 'all' });
    await new CloudFormationClient(setup).send(
      new CreateStackCommand({
        StackName: STACK,
        TemplateBody: JSON.stringify({
          Resources: { Placeholder: { Type: 'AWS::CloudFormation::WaitConditionHandle' } },
          Outputs: Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, { Value: v }])),
        }),
      }),
    );
    const fnUsers = new Map<FnName, Credentials>();
    for (const f of FUNCTIONS)
      fnUsers.set(
        f.name,
        await createUserWithPolicy(
          moto.endpoint,
          UNAUTHENTICATED,
          `fn-${f.name}`,
          withMotoBatchShim(functionPolicies(template, f.prefix, deployment.resolver).statements),
        ),
      );
    const policy = await documentedPolicy({
      region: REGION,
      account: ACCOUNT,
      'stack-name': STACK,
      'capture-bucket': CAPTURE_BUCKET,
      'capture-prefix': PREFIX,
      'results-bucket': outputs.ResultsBucketName!,
    });
    users.set('verifier', await createUserWithPolicy(moto.endpoint, UNAUTHENTICATED, 'verifier', policy));
    users.set(
      'no-write',
      await createUserWithPolicy(
        moto.endpoint,
        UNAUTHENTICATED,
        'no-write',
        policy.filter((s) => (s as { Sid?: string }).Sid !== 'WriteTheSample'),
      ),
    );
    const operatorCreds = await createUserWithPolicy(moto.endpoint, UNAUTHENTICATED, 'operator', [
      { Effect: 'Allow', Action: '*', Resource: '*' },
    ]);
    await setMotoEnforcement(moto.endpoint, true);
    operator = new S3Client(clientConfig(moto.endpoint, operatorCreds));
    motoCompatibleS3Signing(operator, operatorCreds);
    running = await startFunctions(deployment, moto.endpoint, (name) => fnUsers.get(name)!, {
      motoSigning: true,
      sageMakerEndpoint: sagemaker.url,
      variant: (name) =>
        name === 'ingest' && mirrorLagMs !== null
          ? { env: { [ENV.mode]: 'mirror', [ENV.lagMs]: String(mirrorLagMs) } }
          : undefined,
    });
  }, 180_000);

  afterAll(async () => {
    await Promise.all(running.map((r) => r.source.stop()));
    await Promise.all([http?.stop(), sagemaker?.stop()]);
    await moto?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('drops the sample, follows its run to the report, prints the counts and a link that opens report.html', async () => {
    const started = new Date();
    const run = await cli(['verify-deploy', '--stack', STACK, '--timeout', '120']);
    expect(run.code, `${run.stderr}\n${errorsOf(running)}`).toBe(0);
    verifiedRun = /^ {2}run: +(\S+)$/m.exec(run.stdout)?.[1] ?? '';
    expect(verifiedRun).toMatch(/^file-[0-9a-f-]{36}$/);
    // Where SageMaker would write a capture of endpoint capture-replay-verify this hour.
    const sample = /^ {2}sample: +s3:\/\/capture-bucket\/(\S+)$/m.exec(run.stdout)?.[1] ?? '';
    const hour = (d: Date) => d.toISOString().slice(0, 13).replace(/-/g, '/').replace('T', '/');
    expect([hour(started), hour(new Date())]).toContain(
      /^datacapture\/capture-replay-verify\/AllTraffic\/(\d{4}\/\d{2}\/\d{2}\/\d{2})\//.exec(sample)?.[1],
    );
    expect(await exists(CAPTURE_BUCKET, sample), 'the sample stays without --clean').toBe(true);
    // Each target's line says what its manifest says: every record replayed, to both kinds.
    for (const target of ['A', 'B']) {
      const manifest = JSON.parse(await text(results(), `runs/${verifiedRun}/${target}/run_manifest.json`)) as Record<
        string,
        number
      >;
      expect(manifest).toMatchObject({ scheduled: SAMPLE_RECORDS, succeeded: SAMPLE_RECORDS, failed: 0, dropped: 0 });
      expect(run.stdout).toContain(
        `  ${target}: ${SAMPLE_RECORDS} scheduled, ${SAMPLE_RECORDS} succeeded, 0 failed, 0 dropped  ` +
          `s3://${results()}/runs/${verifiedRun}/${target}/`,
      );
    }
    expect(run.stdout).toMatch(/^The deploy works/);
    expect(run.stdout).toContain(
      `  ingest:  ${SAMPLE_RECORDS} records accepted, 2 rejected (invalid_json 1, duplicate 1), 1 blank line`,
    );
    expect(run.stdout).toContain(`  report:  s3://${results()}/runs/${verifiedRun}/report.html`);
    // Where the run's metrics land: the stack's dashboard (its DashboardUrl output).
    expect(run.stdout).toContain(
      `  dashboard: https://${REGION}.console.aws.amazon.com/cloudwatch/home?region=${REGION}#dashboards/dashboard/${STACK}-${REGION} (`,
    );
    expect(run.stderr).toMatch(
      /^stack: stack ReplayVerify \(us-east-1\)\nwrote the sample capture to s3:\/\/capture-bucket\/datacapture\/capture-replay-verify\//,
    );
    expect(run.stderr).toContain('waiting for the ingest to read the sample');
    // The link opens the report: 200, HTML, the very object.
    const link = linkOf(run.stdout);
    expect(link).toMatch(/X-Amz-Expires=3600/);
    const page = await fetchLink(link);
    expect(page).toMatchObject({ status: 200, type: expect.stringMatching(/^text\/html/) });
    expect(page.body).toBe(await text(results(), `runs/${verifiedRun}/report.html`));
  }, 180_000);

  it('link --run, --run --target, --schedule and an s3:// folder give links that fetch; a missing one says why (exit 1)', async () => {
    expect(verifiedRun, 'the run of the first test').not.toBe('');
    const report = await cli(['link', '--run', verifiedRun, '--stack', STACK, '--expires', '600']);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout.trim().split('\n')).toHaveLength(1);
    expect(report.stdout).toMatch(/X-Amz-Expires=600/);
    expect(report.stderr).toBe(`s3://${results()}/runs/${verifiedRun}/report.html: link valid for 10 minutes\n`);
    expect(await fetchLink(report.stdout.trim())).toMatchObject({
      status: 200,
      type: expect.stringMatching(/^text\/html/),
    });

    const files = await cli(['link', '--run', verifiedRun, '--target', 'B', '--stack', STACK]);
    expect(files.code, files.stderr).toBe(0);
    const byFile = new Map(
      files.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(' ') as [string, string]),
    );
    expect([...byFile.keys()]).toEqual([
      'profile_export.jsonl',
      'profile_export_aiperf.json',
      'profile_export_aiperf.csv',
      'run_manifest.json',
    ]);
    const manifest = await fetchLink(byFile.get('run_manifest.json')!);
    expect(manifest.status).toBe(200);
    expect(JSON.parse(manifest.body)).toEqual(
      JSON.parse(await text(results(), `runs/${verifiedRun}/B/run_manifest.json`)),
    );

    await operator.send(
      new PutObjectCommand({
        Bucket: results(),
        Key: 'schedules/nightly/index.html',
        Body: '<!doctype html><title>nightly</title>',
        ContentType: 'text/html; charset=utf-8',
      }),
    );
    const trend = await cli(['link', '--schedule', 'nightly', '--stack', STACK]);
    expect(trend.code, trend.stderr).toBe(0);
    expect(await fetchLink(trend.stdout.trim())).toMatchObject({
      status: 200,
      body: '<!doctype html><title>nightly</title>',
    });

    const folder = await cli(['link', `s3://${results()}/runs/${verifiedRun}/`]);
    expect(folder.code, folder.stderr).toBe(0);
    expect(folder.stderr).toMatch(/report\.html: link valid for 1 hour/);

    const unknown = await cli(['link', '--run', 'file-00000000-0000-8000-8000-000000000000', '--stack', STACK]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(
      /^capture-replay link: no s3:\/\/\S+\/runs\/file-00000000-0000-8000-8000-000000000000\/report\.html: run \S+ has not finished/,
    );
    const noTrend = await cli(['link', '--schedule', 'weekly', '--stack', STACK]);
    expect(noTrend.code).toBe(1);
    expect(noTrend.stderr).toMatch(
      /the trend page appears after the schedule's first run \(start one now with: capture-replay schedule-now weekly\)/,
    );
  }, 120_000);

  it('from the --outputs-file file, with --clean: verifies, then removes the sample it wrote', async () => {
    const file = join(dir, 'cdk-outputs.json');
    await writeFile(file, JSON.stringify({ [STACK]: outputs }));
    const before = await sampleKeys();
    const run = await cli(['verify-deploy', '--outputs', file, '--clean', '--timeout', '120']);
    expect(run.code, `${run.stderr}\n${errorsOf(running)}`).toBe(0);
    expect(run.stderr).toContain(`stack: ${file}`);
    const sample = /^ {2}sample: +s3:\/\/capture-bucket\/(\S+)$/m.exec(run.stdout)?.[1] ?? '';
    expect(run.stderr).toContain(`removed s3://capture-bucket/${sample}`);
    expect(await sampleKeys()).toEqual(before);
  }, 180_000);

  it('a stack that replays only on schedule: exit 2, how to start a scheduled run now, nothing written', async () => {
    const file = join(dir, 'schedule-only.json');
    const plan = 'https://sqs.us-east-1.amazonaws.com/123456789012/plan';
    await writeFile(file, JSON.stringify({ [STACK]: { ...outputs, AutoReplay: 'none', PlanQueueUrl: plan } }));
    const before = await sampleKeys();
    const run = await cli(['verify-deploy', '--outputs', file]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^capture-replay verify-deploy: stack ReplayVerify replays captures only on its schedules \(autoReplay: false\)/,
    );
    expect(run.stderr).toContain(`capture-replay schedule-now <schedule> --queue-url ${plan}`);
    expect(await sampleKeys()).toEqual(before);
  });

  it('without s3:PutObject on the capture prefix: exit 1, one line naming the object and the permission', async () => {
    const run = await cli(['verify-deploy', '--stack', STACK, '--timeout', '5'], 'no-write');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(
        /\ncapture-replay verify-deploy: could not write the sample capture to /.source +
          /s3:\/\/capture-bucket\/datacapture\/capture-replay-verify\/\S+ \(s3:PutObject\): AccessDenied: .* /.source +
          /\(your identity lacks the permission/.source,
      ),
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('a mirror deployment: the sample, stamped with the current time, replays at inferenceTime + lag', async () => {
    mirrorLagMs = 10_000;
    try {
      const run = await cli(['verify-deploy', '--stack', STACK, '--timeout', '120']);
      expect(run.code, `${run.stdout}\n${run.stderr}\n${errorsOf(running)}`).toBe(0);
      expect(run.stdout).toMatch(/^ {2}run: +mirror-[0-9a-f-]{36}$/m);
      for (const target of ['A', 'B'])
        expect(run.stdout).toContain(
          `  ${target}: ${SAMPLE_RECORDS} scheduled, ${SAMPLE_RECORDS} succeeded, 0 failed, 0 dropped`,
        );
    } finally {
      mirrorLagMs = null;
    }
  }, 180_000);

  it('a mirror run that cannot start before the timeout: exit 1 at once, saying when it starts and what to do', async () => {
    mirrorLagMs = 600_000;
    try {
      const started = Date.now();
      const run = await cli(['verify-deploy', '--stack', STACK, '--timeout', '60']);
      expect(run.code).toBe(1);
      expect(Date.now() - started, 'it does not wait out the timeout').toBeLessThan(55_000);
      const runId = new RegExp(
        /run (mirror-[0-9a-f-]{36}) is scheduled, but its first request is due at \S+ \(mirror mode: /.source +
          /each request is due at its inferenceTime \+ 600 s\), after --timeout 60 s: it cannot finish in /.source +
          /time\./.source,
      ).exec(run.stderr)?.[1];
      expect(runId, run.stderr).toBeDefined();
      expect(run.stderr).toContain(`capture-replay link --run ${runId}`);
    } finally {
      mirrorLagMs = null;
    }
  }, 120_000);

  it('a run that does not finish in time: exit 1 naming the missing manifests, the replay DLQ and how to list the log groups', async () => {
    // The fire function stops taking shards: the run is scheduled, no target finishes.
    await running.find((r) => r.name === 'fire')!.source.stop();
    const run = await cli(['verify-deploy', '--stack', STACK, '--timeout', '15', '--clean']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const runId = /run (file-[0-9a-f-]{36}) was scheduled \(targets A, B\)/.exec(run.stderr)?.[1];
    expect(runId, run.stderr).toBeDefined();
    expect(run.stderr).toContain(
      `s3://${results()}/runs/${runId}/A/run_manifest.json, s3://${results()}/runs/${runId}/B/run_manifest.json are not there after 15 s.`,
    );
    expect(run.stderr).toContain(`the replay dead-letter queue ${outputs.ReplayDlqUrl}`);
    // The stack on moto has no log groups: the command that lists them instead.
    expect(run.stderr).toContain(`aws cloudformation describe-stack-resources --stack-name ${STACK}`);
    expect(run.stderr).toContain(`When it finishes: capture-replay link --run ${runId}`);
    // Scheduled, so the ingest is done with the sample: --clean removes it even so.
    expect(run.stderr).toMatch(/\nremoved s3:\/\/capture-bucket\/datacapture\/capture-replay-verify\//);
  }, 60_000);
});
