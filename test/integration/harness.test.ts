/**
 * Evidence that the emulated AWS behaves like AWS where the pipeline relies on it: S3
 * conditional creates (the shard claim), SQS delays, and the event-source stand-in's partial
 * batch failures with redrive to the dead-letter queue.
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lambdas/adapters/aws/s3-object-store';
import { SqsQueue } from '../../lambdas/adapters/aws/sqs-queue';
import { awsClientConfig, describeWithMoto, startMoto, type Moto } from '../support/moto';
import { startSqsEventSource } from '../support/sqs-event-source';

describeWithMoto('emulated AWS behaves as the pipeline needs', () => {
  let moto: Moto;
  let s3: S3Client;
  let sqs: SQSClient;

  beforeAll(async () => {
    moto = await startMoto();
    s3 = new S3Client(awsClientConfig(moto.endpoint));
    sqs = new SQSClient(awsClientConfig(moto.endpoint));
  }, 60_000);
  afterAll(async () => moto?.stop());

  it('S3 conditional create: the first claim wins, the second is refused', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'claims-bucket' }));
    const store = new S3ObjectStore(s3, 'claims-bucket');
    expect(await store.putIfAbsent('runs/r/A/_claims/0-0', 'worker-1')).toBe(true);
    expect(await store.putIfAbsent('runs/r/A/_claims/0-0', 'worker-2')).toBe(false);
    expect(Buffer.from((await store.get('runs/r/A/_claims/0-0'))!).toString()).toBe('worker-1');
    expect(await store.get('runs/r/A/_claims/missing')).toBeNull();
    expect(await store.list('runs/r/')).toEqual(['runs/r/A/_claims/0-0']);
  });

  it('SQS holds a delayed message back for its delay', async () => {
    const url = (await sqs.send(new CreateQueueCommand({ QueueName: 'delayed' }))).QueueUrl!;
    await new SqsQueue(sqs, url).sendBatch([{ id: 'a', body: 'later', delaySeconds: 2 }]);
    const early = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 0 }));
    expect(early.Messages ?? []).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 2300));
    const late = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }));
    expect(late.Messages?.map((m) => m.Body)).toEqual(['later']);
  });

  it('a failed batch item comes back alone, and lands in the DLQ after maxReceiveCount', async () => {
    const dlq = (await sqs.send(new CreateQueueCommand({ QueueName: 'work-dlq' }))).QueueUrl!;
    const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
    const url = (
      await sqs.send(new CreateQueueCommand({ QueueName: 'work', Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }) } }))
    ).QueueUrl!;
    const seen: string[] = [];
    const source = await startSqsEventSource({
      client: sqs,
      queueUrl: url,
      batchSize: 10,
      visibilityTimeoutSeconds: 1,
      handler: async (event) => {
        seen.push(...event.Records.map((r) => r.body));
        return { batchItemFailures: event.Records.filter((r) => r.body === 'poison').map((r) => ({ itemIdentifier: r.messageId })) };
      },
    });
    for (const body of ['good-1', 'poison', 'good-2']) await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
    const deadline = Date.now() + 20_000;
    let dead: string[] = [];
    while (dead.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      dead = ((await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq, WaitTimeSeconds: 0 }))).Messages ?? []).map((m) => m.Body!);
    }
    await source.stop();
    expect(dead).toEqual(['poison']);
    expect(seen.filter((b) => b === 'good-1')).toHaveLength(1);
    expect(seen.filter((b) => b === 'good-2')).toHaveLength(1);
    expect(seen.filter((b) => b === 'poison')).toHaveLength(2);
    expect(source.stats.failedRecords).toBe(2);
  }, 30_000);
});
