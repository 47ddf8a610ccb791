/**
 * A local stand-in for Lambda's SQS event source mapping, so the real handlers run against
 * real (emulated) queues: receives batches, builds the SQSEvent Lambda would, invokes the
 * handler with up to `maxConcurrency` batches in flight, deletes what succeeded, and leaves
 * failed records (ReportBatchItemFailures) or a whole failed batch for redelivery after the
 * visibility timeout. Dead-lettering is not done here: moto applies the queue's
 * RedrivePolicy itself on receive, as SQS does (checked in test/integration/harness.test.ts).
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
  type MessageSystemAttributeName,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type {
  Context,
  SQSBatchResponse,
  SQSEvent,
  SQSMessageAttributes,
  SQSRecord,
  SQSRecordAttributes,
} from 'aws-lambda';

export type SqsLambdaHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface EventSourceOptions {
  client: SQSClient;
  queueUrl: string;
  handler: SqsLambdaHandler;
  /** Records per invocation, 1-10 as for a standard queue without a batching window. Default 10. */
  batchSize?: number;
  /**
   * The mapping's MaximumBatchingWindowInSeconds, in ms. Once a receive returns messages, the
   * source keeps receiving until the batch is full or this long has passed since that first
   * receive, then invokes once, as Lambda does for a standard queue
   * (https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventsourcemapping.html#invocation-eventsourcemapping-batching).
   * Default 0: each receive is a batch. Lambda's third criterion, a 6 MB payload, is not
   * applied here.
   */
  batchingWindowMs?: number;
  /** Per-receive visibility timeout; omitted, the queue's own VisibilityTimeout applies (as with Lambda). */
  visibilityTimeoutSeconds?: number;
  /** Batches in flight at once. Default 5. */
  maxConcurrency?: number;
  /** Pause after an empty receive. Default 100 ms. */
  pollIntervalMs?: number;
  /** ReceiveMessage long-poll wait, 0-20 s. Default 1 s: short enough for a prompt stop(). */
  waitTimeSeconds?: number;
  /** Shown in the Lambda context. Default 'local-fn'. */
  functionName?: string;
  /** Lambda timeout the context's getRemainingTimeInMillis counts down from. Default 900 s. */
  functionTimeoutSeconds?: number;
}

export interface EventSourceStats {
  receives: number;
  batches: number;
  records: number;
  succeededRecords: number;
  failedRecords: number;
  handlerErrors: number;
  /** Responses naming an itemIdentifier not in the batch: Lambda then fails the whole batch. */
  invalidResponses: number;
  receiveErrors: number;
  deleteErrors: number;
  /** The most recent handler/receive/delete errors, newest last (at most 20). */
  errors: unknown[];
}

export interface EventSource {
  stop(): Promise<void>;
  /**
   * Resolves once no handler is running, a receive has come back empty since the last
   * activity, and nothing has happened for `quietMs` (default 1500). Messages still
   * invisible (in flight elsewhere or awaiting redelivery) or delayed longer than the quiet
   * period are not waited for.
   */
  idle(quietMs?: number): Promise<void>;
  stats: EventSourceStats;
}

const SYSTEM_ATTRIBUTES: MessageSystemAttributeName[] = [
  'ApproximateReceiveCount',
  'ApproximateFirstReceiveTimestamp',
  'SentTimestamp',
  'SenderId',
  'AWSTraceHeader',
  'SequenceNumber',
  'MessageGroupId',
  'MessageDeduplicationId',
  'DeadLetterQueueSourceArn',
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function lambdaContext(name: string, requestId: string, timeoutSeconds: number): Context {
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${name}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Lambda's shape: lower-case keys, binary as base64, the list fields present but empty. */
function messageAttributes(m: Message): SQSMessageAttributes {
  const out: SQSMessageAttributes = {};
  for (const [name, a] of Object.entries(m.MessageAttributes ?? {})) {
    out[name] = {
      dataType: a.DataType ?? 'String',
      ...(a.StringValue !== undefined ? { stringValue: a.StringValue } : {}),
      ...(a.BinaryValue !== undefined ? { binaryValue: Buffer.from(a.BinaryValue).toString('base64') } : {}),
      stringListValues: [],
      binaryListValues: [],
    };
  }
  return out;
}

function recordAttributes(m: Message): SQSRecordAttributes {
  const a = m.Attributes ?? {};
  const out: SQSRecordAttributes = {
    ApproximateReceiveCount: a.ApproximateReceiveCount ?? '',
    SentTimestamp: a.SentTimestamp ?? '',
    SenderId: a.SenderId ?? '',
    ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? '',
  };
  for (const key of [
    'AWSTraceHeader',
    'SequenceNumber',
    'MessageGroupId',
    'MessageDeduplicationId',
    'DeadLetterQueueSourceArn',
  ] as const) {
    const v = a[key];
    if (v !== undefined) out[key] = v;
  }
  return out;
}

export function toSqsRecord(m: Message, eventSourceARN: string, awsRegion = 'us-east-1'): SQSRecord {
  return {
    messageId: m.MessageId ?? '',
    receiptHandle: m.ReceiptHandle ?? '',
    body: m.Body ?? '',
    attributes: recordAttributes(m),
    messageAttributes: messageAttributes(m),
    md5OfBody: m.MD5OfBody ?? '',
    ...(m.MD5OfMessageAttributes !== undefined ? { md5OfMessageAttributes: m.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN,
    awsRegion,
  };
}

/**
 * Which records failed, by Lambda's rules for ReportBatchItemFailures: nothing returned or
 * an empty list means all succeeded; an itemIdentifier that is empty or not a message of
 * this batch makes the whole batch a failure.
 */
export function failedMessageIds(
  records: SQSRecord[],
  response: SQSBatchResponse | void,
): { failed: Set<string>; invalid: boolean } {
  const ids = new Set(records.map((r) => r.messageId));
  const items = response?.batchItemFailures ?? [];
  const invalid = items.some((f) => typeof f?.itemIdentifier !== 'string' || !ids.has(f.itemIdentifier));
  if (invalid) return { failed: ids, invalid };
  return { failed: new Set(items.map((f) => f.itemIdentifier)), invalid };
}

function positiveInt(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${value}`);
  return value;
}

export async function startSqsEventSource(o: EventSourceOptions): Promise<EventSource> {
  const batchSize = positiveInt('batchSize', o.batchSize ?? 10, 1, 10);
  const maxConcurrency = positiveInt('maxConcurrency', o.maxConcurrency ?? 5, 1, 1000);
  const waitTimeSeconds = positiveInt('waitTimeSeconds', o.waitTimeSeconds ?? 1, 0, 20);
  const pollIntervalMs = o.pollIntervalMs ?? 100;
  const batchingWindowMs = o.batchingWindowMs ?? 0;
  // Lambda's range: 0-300 s (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html); finer here, for tests.
  if (!Number.isFinite(batchingWindowMs) || batchingWindowMs < 0 || batchingWindowMs > 300_000)
    throw new RangeError(`batchingWindowMs must be from 0 to 300000, got ${batchingWindowMs}`);
  const functionName = o.functionName ?? 'local-fn';
  const functionTimeoutSeconds = o.functionTimeoutSeconds ?? 900;
  if (o.visibilityTimeoutSeconds !== undefined)
    positiveInt('visibilityTimeoutSeconds', o.visibilityTimeoutSeconds, 0, 43_200);

  const arn = (
    await o.client.send(new GetQueueAttributesCommand({ QueueUrl: o.queueUrl, AttributeNames: ['QueueArn'] }))
  ).Attributes?.QueueArn;
  if (!arn) throw new Error(`queue ${o.queueUrl} reported no QueueArn`);

  const m: Mapping = {
    o,
    arn,
    batchSize,
    maxConcurrency,
    waitTimeSeconds,
    pollIntervalMs,
    batchingWindowMs,
    functionName,
    functionTimeoutSeconds,
    stats: {
      receives: 0,
      batches: 0,
      records: 0,
      succeededRecords: 0,
      failedRecords: 0,
      handlerErrors: 0,
      invalidResponses: 0,
      receiveErrors: 0,
      deleteErrors: 0,
      errors: [],
    },
    inFlight: new Set<Promise<void>>(),
    abort: new AbortController(),
    running: true,
    lastActivity: Date.now(),
    emptySinceActivity: false,
  };
  const loop = pollLoop(m);

  return {
    stats: m.stats,
    async stop() {
      m.running = false;
      m.abort.abort();
      await loop;
      await Promise.all(m.inFlight);
    },
    async idle(quietMs = 1500) {
      while (m.running && (m.inFlight.size > 0 || !m.emptySinceActivity || Date.now() - m.lastActivity < quietMs))
        await sleep(50);
    },
  };
}

/** One event source mapping's settings and running state. */
interface Mapping {
  o: EventSourceOptions;
  arn: string;
  batchSize: number;
  maxConcurrency: number;
  waitTimeSeconds: number;
  pollIntervalMs: number;
  batchingWindowMs: number;
  functionName: string;
  functionTimeoutSeconds: number;
  stats: EventSourceStats;
  inFlight: Set<Promise<void>>;
  abort: AbortController;
  running: boolean;
  lastActivity: number;
  emptySinceActivity: boolean;
}

function remember(m: Mapping, error: unknown): void {
  m.stats.errors.push(error);
  if (m.stats.errors.length > 20) m.stats.errors.shift();
}

function touch(m: Mapping): void {
  m.lastActivity = Date.now();
  m.emptySinceActivity = false;
}

/** Receives while running, up to `maxConcurrency` batches in flight. */
async function pollLoop(m: Mapping): Promise<void> {
  const { stats } = m;
  while (m.running) {
    if (m.inFlight.size >= m.maxConcurrency) {
      await Promise.race(m.inFlight);
      continue;
    }
    let messages: Message[];
    try {
      stats.receives++;
      messages = await receiveBatch(m);
    } catch (error) {
      if (!m.running) break;
      stats.receiveErrors++;
      remember(m, error);
      await sleep(Math.max(m.pollIntervalMs, 250));
      continue;
    }
    if (messages.length === 0) {
      m.emptySinceActivity = true;
      await sleep(m.pollIntervalMs);
      continue;
    }
    touch(m);
    if (m.batchingWindowMs > 0) messages = await fillBatch(m, messages);
    // Stopped while gathering: not invoked; the messages come back after the visibility timeout.
    if (!m.running) break;
    const p: Promise<void> = runBatch(m, messages).finally(() => m.inFlight.delete(p));
    m.inFlight.add(p);
  }
}

/**
 * With a batching window: receives more until the batch is full or the window, opened by the
 * receive that returned `first`, has passed. Each receive long-polls no longer than what is
 * left of the window (whole seconds, as SQS takes them); under a second, short polls a
 * poll interval apart. A failed receive ends the gathering: the batch goes as it is.
 */
async function fillBatch(m: Mapping, first: Message[]): Promise<Message[]> {
  const closesAt = Date.now() + m.batchingWindowMs;
  const batch = [...first];
  while (m.running && batch.length < m.batchSize) {
    const left = closesAt - Date.now();
    if (left <= 0) break;
    const waitSeconds = Math.min(m.waitTimeSeconds, Math.floor(left / 1000));
    let more: Message[];
    try {
      m.stats.receives++;
      more = await receiveBatch(m, m.batchSize - batch.length, waitSeconds);
    } catch (error) {
      if (m.running) {
        m.stats.receiveErrors++;
        remember(m, error);
      }
      break;
    }
    batch.push(...more);
    if (more.length > 0) touch(m);
    else if (waitSeconds === 0) await sleep(Math.min(m.pollIntervalMs, Math.max(0, closesAt - Date.now())));
  }
  return batch;
}

async function receiveBatch(m: Mapping, max = m.batchSize, waitTimeSeconds = m.waitTimeSeconds): Promise<Message[]> {
  const { o } = m;
  const out = await o.client.send(
    new ReceiveMessageCommand({
      QueueUrl: o.queueUrl,
      MaxNumberOfMessages: max,
      WaitTimeSeconds: waitTimeSeconds,
      ...(o.visibilityTimeoutSeconds !== undefined ? { VisibilityTimeout: o.visibilityTimeoutSeconds } : {}),
      MessageSystemAttributeNames: SYSTEM_ATTRIBUTES,
      MessageAttributeNames: ['All'],
    }),
    { abortSignal: m.abort.signal },
  );
  return out.Messages ?? [];
}

/** One invocation of the handler with a batch, then the succeeded records deleted. */
async function runBatch(m: Mapping, messages: Message[]): Promise<void> {
  const { stats } = m;
  const records = messages.map((message) => toSqsRecord(message, m.arn));
  stats.batches++;
  stats.records += records.length;
  let failed: Set<string>;
  try {
    const response = await m.o.handler(
      { Records: records },
      lambdaContext(m.functionName, `${m.functionName}-${stats.batches}`, m.functionTimeoutSeconds),
    );
    const verdict = failedMessageIds(records, response);
    if (verdict.invalid) stats.invalidResponses++;
    failed = verdict.failed;
  } catch (error) {
    stats.handlerErrors++;
    remember(m, error);
    failed = new Set(records.map((r) => r.messageId));
  }
  stats.failedRecords += failed.size;
  const done = records.filter((r) => !failed.has(r.messageId));
  stats.succeededRecords += done.length;
  if (done.length > 0) await deleteSucceeded(m, done);
  touch(m);
}

async function deleteSucceeded(m: Mapping, done: SQSRecord[]): Promise<void> {
  try {
    const out = await m.o.client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: m.o.queueUrl,
        Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
      }),
    );
    // A failed delete means the message comes back: as in Lambda, the handler must be idempotent.
    if (out.Failed?.length) {
      m.stats.deleteErrors += out.Failed.length;
      remember(
        m,
        new Error(
          `DeleteMessageBatch failed for ${out.Failed.length}: ${out.Failed.map((f) => f.Message ?? f.Code).join('; ')}`,
        ),
      );
    }
  } catch (error) {
    m.stats.deleteErrors += done.length;
    remember(m, error);
  }
}
