/**
 * The AWS resources the serverless pipeline is wired from, made on moto with the real SDK:
 * buckets, queues with a dead-letter queue, and the S3 -> SQS ObjectCreated notification.
 */
import {
  CreateBucketCommand,
  PutBucketNotificationConfigurationCommand,
  type Event as S3EventName,
  type S3Client,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';

export async function createBucket(s3: S3Client, name: string): Promise<string> {
  await s3.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

export async function queueArn(sqs: SQSClient, queueUrl: string): Promise<string> {
  const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] })))
    .Attributes?.QueueArn;
  if (!arn) throw new Error(`queue ${queueUrl} reported no QueueArn`);
  return arn;
}

export interface QueueOptions {
  visibilityTimeoutSeconds?: number;
  delaySeconds?: number;
  receiveWaitTimeSeconds?: number;
}

export async function createQueue(
  sqs: SQSClient,
  name: string,
  options: QueueOptions & { attributes?: Record<string, string> } = {},
): Promise<{ url: string; arn: string }> {
  const attributes: Record<string, string> = { ...options.attributes };
  if (options.visibilityTimeoutSeconds !== undefined)
    attributes.VisibilityTimeout = String(options.visibilityTimeoutSeconds);
  if (options.delaySeconds !== undefined) attributes.DelaySeconds = String(options.delaySeconds);
  if (options.receiveWaitTimeSeconds !== undefined)
    attributes.ReceiveMessageWaitTimeSeconds = String(options.receiveWaitTimeSeconds);
  const url = (await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl;
  if (!url) throw new Error(`CreateQueue ${name} returned no QueueUrl`);
  return { url, arn: await queueArn(sqs, url) };
}

export interface QueueWithDlq {
  url: string;
  arn: string;
  dlqUrl: string;
  dlqArn: string;
}

/** A work queue whose messages move to `<name>-dlq` after `maxReceiveCount` receives (default 3). */
export async function createQueueWithDlq(
  sqs: SQSClient,
  name: string,
  options: QueueOptions & { maxReceiveCount?: number } = {},
): Promise<QueueWithDlq> {
  const dlq = await createQueue(sqs, `${name}-dlq`);
  const { maxReceiveCount = 3, ...queueOptions } = options;
  const queue = await createQueue(sqs, name, {
    ...queueOptions,
    attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount }) },
  });
  return { url: queue.url, arn: queue.arn, dlqUrl: dlq.url, dlqArn: dlq.arn };
}

export interface ObjectCreatedNotification {
  bucket: string;
  queueArn: string;
  prefix: string;
  suffix?: string;
  events?: S3EventName[];
}

/**
 * S3 -> SQS notification for new objects under `prefix` ending in `suffix` (default
 * '.jsonl'). Like S3, moto answers the configuration with an s3:TestEvent message on the
 * queue, which consumers must ignore.
 */
export async function notifyQueueOnObjectCreated(s3: S3Client, n: ObjectCreatedNotification): Promise<void> {
  await s3.send(
    new PutBucketNotificationConfigurationCommand({
      Bucket: n.bucket,
      NotificationConfiguration: {
        QueueConfigurations: [
          {
            QueueArn: n.queueArn,
            Events: n.events ?? ['s3:ObjectCreated:*'],
            Filter: {
              Key: {
                FilterRules: [
                  { Name: 'prefix', Value: n.prefix },
                  { Name: 'suffix', Value: n.suffix ?? '.jsonl' },
                ],
              },
            },
          },
        ],
      },
    }),
  );
}

/**
 * Receives (and deletes) everything visible until `count` messages have arrived or
 * `timeoutMs` has passed; with no count, until one long poll comes back empty. For
 * assertions about what a queue got, not as a consumer.
 */
export async function drainQueue(
  sqs: SQSClient,
  queueUrl: string,
  options: { count?: number; timeoutMs?: number; waitTimeSeconds?: number } = {},
): Promise<Message[]> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const got: Message[] = [];
  while (Date.now() < deadline && (options.count === undefined || got.length < options.count)) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: options.waitTimeSeconds ?? 1,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) {
      if (options.count === undefined) break;
      continue;
    }
    got.push(...messages);
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
  }
  return got;
}
