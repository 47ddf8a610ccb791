/**
 * The plan function's role as test/support/iam/deployment.ts exposes it, on moto: a
 * deployment with schedules and notify is created (plan queue, SNS topic), the plan function
 * runs from its own event source with its template environment and recorded clients, and
 * what a plan does at the AWS level (list and read the captures under the prefix, write
 * under work/ runs/ schedules/, publish the summary)
 * is allowed by the plan role's synthesized statements, while a listing outside the prefix
 * and a write to the capture bucket are not. The handler here is a probe of those calls; the
 * real plan handler runs the same way with planFunction(makePlanHandler).
 */
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { SNSClient } from '@aws-sdk/client-sns';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { planMessageSchema } from '../../lambdas/core/scheduled-runs/contract';
import type { Deps } from '../../lambdas/runtime/deps';
import {
  clientConfig,
  deployStateful,
  planFunction,
  show,
  sleep,
  startFunctions,
  synthesizeStack,
  type Deployment,
  type Running,
} from '../support/iam/deployment';
import { UNAUTHENTICATED } from '../support/iam/moto-iam';
import { evaluate } from '../support/iam/policy-evaluator';
import { logicalIds } from '../support/iam/template-policies';
import { describeWithMoto, startMoto, type Moto } from '../support/moto';

const CAPTURE_BUCKET = 'plan-role-captures';
const PREFIX = 'datacapture/';
const CAPTURE_KEY = `${PREFIX}ep/AllTraffic/2026/04/29/01/a.jsonl`;

/** What a plan does at the AWS level, once per plan message, with the deps its environment builds. */
const probePlan =
  (getDeps: () => Deps) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const deps = getDeps();
    const c = deps.config;
    for (const record of event.Records) {
      const message = planMessageSchema.parse(JSON.parse(record.body));
      const listed = await deps.s3.send(
        new ListObjectsV2Command({
          Bucket: c.captureBucket!,
          Prefix: `${c.capturePrefix}ep/AllTraffic/2026/04/29/01/`,
        }),
      );
      for (const o of listed.Contents ?? [])
        await (
          await deps.s3.send(new GetObjectCommand({ Bucket: c.captureBucket!, Key: o.Key! }))
        ).Body!.transformToString();
      // Outside the prefix: denied in AWS (the evaluator says so below); moto here does not enforce.
      await deps.s3.send(new ListObjectsV2Command({ Bucket: c.captureBucket!, Prefix: 'private/' }));
      for (const key of [
        'work/w/_run.json',
        'runs/w/ingest_report.json',
        `schedules/${message.schedule}/history.jsonl`,
      ]) {
        await deps.s3.send(new PutObjectCommand({ Bucket: c.resultsBucket, Key: key, Body: '{}' }));
      }
      await deps.s3
        .send(new PutObjectCommand({ Bucket: c.captureBucket!, Key: `${c.capturePrefix}overwrite.jsonl`, Body: 'x' }))
        .catch(() => undefined);
      await deps.notifier!.publish(`capture-replay: ${message.schedule}`, `scheduled ${message.scheduledTime}`);
    }
    return { batchItemFailures: [] };
  };

describeWithMoto("the plan function's role (deployment.ts)", () => {
  let moto: Moto;
  let deployment: Deployment;
  let running: Running[] = [];

  beforeAll(async () => {
    moto = await startMoto();
    const admin = clientConfig(moto.endpoint, UNAUTHENTICATED);
    const s3 = new S3Client(admin);
    await s3.send(new CreateBucketCommand({ Bucket: CAPTURE_BUCKET }));
    await s3.send(new PutObjectCommand({ Bucket: CAPTURE_BUCKET, Key: CAPTURE_KEY, Body: '{}\n' }));
    const template = await synthesizeStack(
      {
        captureBucket: CAPTURE_BUCKET,
        capturePrefix: PREFIX,
        targets: [
          { name: 'A', url: 'http://127.0.0.1:9' },
          { name: 'B', url: 'http://127.0.0.1:9' },
        ],
        schedules: [
          { name: 'nightly', expression: 'cron(0 2 * * ? *)', window: { lastHours: 1 }, targets: ['A', 'B'] },
        ],
        notify: { emails: ['ml@example.com'] },
      },
      'PlanRole',
    );
    deployment = await deployStateful(template, s3, new SQSClient(admin), new SNSClient(admin));
    running = await startFunctions(deployment, moto.endpoint, () => UNAUTHENTICATED, {
      motoSigning: false,
      functions: [planFunction(probePlan)],
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(running.map((r) => r.source.stop()));
    await moto?.stop();
  });

  it('runs from the plan queue under the plan role: every call it needs is allowed, a listing outside the ' +
    'prefix and a capture write are not', async () => {
    const [plan] = running;
    expect(running.map((r) => r.name)).toEqual(['plan']);
    const planQueue =
      deployment.resolver.resources[logicalIds(deployment.template, 'AWS::SQS::Queue', 'StatefulPlanQueue')[0]!]!.Ref;
    const topic =
      deployment.resolver.resources[logicalIds(deployment.template, 'AWS::SNS::Topic', 'StatefulNotifyTopic')[0]!]!.Ref;
    await new SQSClient(clientConfig(moto.endpoint, UNAUTHENTICATED)).send(
      new SendMessageCommand({
        QueueUrl: planQueue,
        MessageBody: JSON.stringify({
          v: 1,
          kind: 'window',
          schedule: 'nightly',
          scheduledTime: '2026-04-29T02:00:00Z',
        }),
      }),
    );
    for (const deadline = Date.now() + 30_000; plan!.source.stats.succeededRecords === 0; await sleep(100)) {
      if (Date.now() > deadline) throw new Error(`the plan probe did not run: ${JSON.stringify(plan!.source.stats)}`);
    }
    expect(plan!.recordings.flatMap((x) => x.unmapped)).toEqual([]);
    const verdicts = plan!.calls
      .filter((c) => !c.impliedBy)
      .map((c) => `${show(c)}: ${evaluate(plan!.policies.statements, c)}`);
    const capture = `arn:aws:s3:::${CAPTURE_BUCKET}`;
    expect(verdicts).toEqual(
      expect.arrayContaining([
        `ListObjectsV2 -> s3:ListBucket on ${capture} {"s3:prefix":"${PREFIX}ep/AllTraffic/2026/04/29/01/"}: allowed`,
        `GetObject -> s3:GetObject on ${capture}/${CAPTURE_KEY}: allowed`,
        `ListObjectsV2 -> s3:ListBucket on ${capture} {"s3:prefix":"private/"}: implicit-deny`,
        `PutObject -> s3:PutObject on ${capture}/${PREFIX}overwrite.jsonl: implicit-deny`,
        `Publish -> sns:Publish on ${topic}: allowed`,
      ]),
    );
    const results = plan!.calls.filter((c) => c.action === 's3:PutObject' && !c.resource.startsWith(capture));
    expect(results.map((c) => evaluate(plan!.policies.statements, c))).toEqual(['allowed', 'allowed', 'allowed']);
  }, 60_000);
});
