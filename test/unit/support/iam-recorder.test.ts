/**
 * The call recorder: each SDK command recorded as the IAM request AWS authorizes it as
 * (Service Authorization Reference), on real SDK clients with a stubbed transport; an
 * unmapped command fails before anything is sent.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { iamCallsFor, queueArnFromUrl, recordCalls, type AwsCall } from '../../support/iam/aws-call-recorder';

const US = { region: 'us-east-1', partition: 'aws' };
const ACCOUNT = '123456789012';
const MOTO_QUEUE = `http://127.0.0.1:5000/${ACCOUNT}/collect`;
const COLLECT_ARN = `arn:aws:sqs:us-east-1:${ACCOUNT}:collect`;

describe('iamCallsFor', () => {
  it.each([
    [
      'S3Client',
      'GetObjectCommand',
      { Bucket: 'results', Key: 'runs/r1/_run.json' },
      [['s3:GetObject', 'arn:aws:s3:::results/runs/r1/_run.json', {}]],
    ],
    [
      'S3Client',
      'GetObjectCommand',
      { Bucket: 'cap', Key: 'datacapture/a b+1.jsonl', Range: 'bytes=0-9', IfMatch: '"e"' },
      [['s3:GetObject', 'arn:aws:s3:::cap/datacapture/a b+1.jsonl', {}]],
    ],
    [
      'S3Client',
      'GetObjectCommand',
      { Bucket: 'results', Key: 'k', VersionId: 'v1' },
      [['s3:GetObjectVersion', 'arn:aws:s3:::results/k', {}]],
    ],
    [
      'S3Client',
      'HeadObjectCommand',
      { Bucket: 'results', Key: 'k' },
      [['s3:GetObject', 'arn:aws:s3:::results/k', {}]],
    ],
    [
      'S3Client',
      'PutObjectCommand',
      { Bucket: 'results', Key: 'runs/x', IfNoneMatch: '*' },
      [['s3:PutObject', 'arn:aws:s3:::results/runs/x', {}]],
    ],
    [
      'S3Client',
      'PutObjectCommand',
      { Bucket: 'results', Key: 'runs/x', Tagging: 'a=b', ACL: 'private' },
      [
        ['s3:PutObject', 'arn:aws:s3:::results/runs/x', {}],
        ['s3:PutObjectAcl', 'arn:aws:s3:::results/runs/x', {}],
        ['s3:PutObjectTagging', 'arn:aws:s3:::results/runs/x', {}],
      ],
    ],
    [
      'S3Client',
      'ListObjectsV2Command',
      { Bucket: 'results', Prefix: 'runs/r1/', Delimiter: '/', MaxKeys: 10 },
      [
        [
          's3:ListBucket',
          'arn:aws:s3:::results',
          { 's3:prefix': 'runs/r1/', 's3:delimiter': '/', 's3:max-keys': '10' },
        ],
      ],
    ],
    ['S3Client', 'ListObjectsV2Command', { Bucket: 'results' }, [['s3:ListBucket', 'arn:aws:s3:::results', {}]]],
    [
      'SQSClient',
      'SendMessageCommand',
      { QueueUrl: MOTO_QUEUE, MessageBody: 'x' },
      [['sqs:SendMessage', COLLECT_ARN, {}]],
    ],
    [
      'SQSClient',
      'SendMessageBatchCommand',
      { QueueUrl: MOTO_QUEUE, Entries: [] },
      [['sqs:SendMessage', COLLECT_ARN, {}]],
    ],
    ['SQSClient', 'ReceiveMessageCommand', { QueueUrl: MOTO_QUEUE }, [['sqs:ReceiveMessage', COLLECT_ARN, {}]]],
    [
      'SQSClient',
      'DeleteMessageBatchCommand',
      { QueueUrl: MOTO_QUEUE, Entries: [] },
      [['sqs:DeleteMessage', COLLECT_ARN, {}]],
    ],
    [
      'SQSClient',
      'ChangeMessageVisibilityBatchCommand',
      { QueueUrl: MOTO_QUEUE, Entries: [] },
      [['sqs:ChangeMessageVisibility', COLLECT_ARN, {}]],
    ],
    ['SQSClient', 'GetQueueAttributesCommand', { QueueUrl: MOTO_QUEUE }, [['sqs:GetQueueAttributes', COLLECT_ARN, {}]]],
    [
      'SecretsManagerClient',
      'GetSecretValueCommand',
      { SecretId: `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:k-AbCdEf`, VersionStage: 'AWSCURRENT' },
      [
        [
          'secretsmanager:GetSecretValue',
          `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:k-AbCdEf`,
          { 'secretsmanager:VersionStage': 'AWSCURRENT' },
        ],
      ],
    ],
    [
      'KMSClient',
      'DecryptCommand',
      { KeyId: `arn:aws:kms:us-east-1:${ACCOUNT}:key/1234` },
      [['kms:Decrypt', `arn:aws:kms:us-east-1:${ACCOUNT}:key/1234`, {}]],
    ],
  ] as const)('%s %s %j', (client, command, input, want) => {
    const calls = iamCallsFor(client, command, input as unknown as Record<string, unknown>, US);
    expect(calls.map((c) => [c.action, c.resource, c.context])).toEqual(want);
    expect(calls.every((c) => c.operation === command.replace(/Command$/, ''))).toBe(true);
  });

  it('a secret named by name is recorded as the name, flagged for the resolver', () => {
    expect(iamCallsFor('SecretsManagerClient', 'GetSecretValueCommand', { SecretId: 'replay/key-a' }, US)).toEqual([
      {
        service: 'secretsmanager',
        operation: 'GetSecretValue',
        action: 'secretsmanager:GetSecretValue',
        resource: 'replay/key-a',
        context: {},
        resourceIsName: true,
      },
    ]);
  });

  it.each([
    [
      'S3Client',
      'CopyObjectCommand',
      { Bucket: 'b', Key: 'k', CopySource: 'a/b' },
      /no IAM mapping for S3Client CopyObject/,
    ],
    ['SQSClient', 'CreateQueueCommand', { QueueName: 'q' }, /no IAM mapping for SQSClient CreateQueue/],
    ['DynamoDBClient', 'GetItemCommand', {}, /no IAM mapping for DynamoDBClient/],
    [
      'S3Client',
      'PutObjectCommand',
      { Bucket: 'b', Key: 'k', ServerSideEncryption: 'aws:kms' },
      /SSE-KMS is not mapped/,
    ],
    ['S3Client', 'GetObjectCommand', { Bucket: 'b' }, /Key missing/],
    ['SQSClient', 'SendMessageCommand', { QueueUrl: 'http://127.0.0.1:5000/replay' }, /not an SQS queue URL/],
    ['KMSClient', 'DecryptCommand', { CiphertextBlob: new Uint8Array() }, /cannot name the key/],
  ] as const)('refuses %s %s', (client, command, input, error) => {
    expect(() => iamCallsFor(client, command, input as unknown as Record<string, unknown>, US)).toThrow(error);
  });

  describe('SageMaker runtime', () => {
    const WITH_ACCOUNT = { ...US, account: ACCOUNT };
    const EP = `arn:aws:sagemaker:us-east-1:${ACCOUNT}:endpoint/my-endpoint`;
    it.each([
      [
        'InvokeEndpointCommand',
        { EndpointName: 'My-Endpoint', Body: new Uint8Array() },
        [['sagemaker:InvokeEndpoint', EP, {}]],
      ],
      [
        'InvokeEndpointCommand',
        { EndpointName: 'my-endpoint', TargetModel: 'm.tar.gz' },
        [['sagemaker:InvokeEndpoint', EP, { 'sagemaker:TargetModel': 'm.tar.gz' }]],
      ],
      [
        'InvokeEndpointWithResponseStreamCommand',
        { EndpointName: 'my-endpoint' },
        [
          ['sagemaker:InvokeEndpointWithResponseStream', EP, {}],
          ['sagemaker:InvokeEndpoint', EP, {}],
        ],
      ],
      [
        'InvokeEndpointCommand',
        { EndpointName: 'my-endpoint', InferenceComponentName: 'IC-1' },
        [
          ['sagemaker:InvokeEndpoint', EP, {}],
          ['sagemaker:InvokeEndpoint', `arn:aws:sagemaker:us-east-1:${ACCOUNT}:inference-component/ic-1`, {}],
        ],
      ],
    ] as const)('%s %j', (command, input, want) => {
      const calls = iamCallsFor(
        'SageMakerRuntimeClient',
        command,
        input as unknown as Record<string, unknown>,
        WITH_ACCOUNT,
      );
      expect(calls.map((c) => [c.action, c.resource, c.context])).toEqual(want);
    });

    it('needs the account, and maps nothing else', () => {
      expect(() => iamCallsFor('SageMakerRuntimeClient', 'InvokeEndpointCommand', { EndpointName: 'e' }, US)).toThrow(
        /needs the caller's account/,
      );
      expect(() =>
        iamCallsFor('SageMakerRuntimeClient', 'InvokeEndpointAsyncCommand', { EndpointName: 'e' }, WITH_ACCOUNT),
      ).toThrow(/no IAM mapping for SageMakerRuntimeClient InvokeEndpointAsync/);
    });
  });

  it('queue ARNs come from the URL path and the client region, on AWS and moto URLs alike', () => {
    expect(
      queueArnFromUrl(`https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/replay`, {
        region: 'eu-west-1',
        partition: 'aws',
      }),
    ).toBe(`arn:aws:sqs:eu-west-1:${ACCOUNT}:replay`);
    expect(queueArnFromUrl(MOTO_QUEUE, US)).toBe(COLLECT_ARN);
  });
});

type Reply = { status: number; headers?: Record<string, string>; body?: string };

/** A transport that answers from `reply` and counts what reached it. */
function stub(reply: (path: string, query: Record<string, unknown>) => Reply) {
  const seen: string[] = [];
  return {
    seen,
    handler: {
      async handle(request: { path: string; query?: Record<string, unknown> }) {
        seen.push(request.path);
        const r = reply(request.path, request.query ?? {});
        return {
          response: {
            statusCode: r.status,
            headers: r.headers ?? {},
            body: Readable.from([Buffer.from(r.body ?? '')]),
          },
        };
      },
    },
  };
}

const config = {
  region: 'us-east-1',
  endpoint: 'http://127.0.0.1:1',
  credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
  forcePathStyle: true,
  maxAttempts: 1,
};

describe('recordCalls on real SDK clients', () => {
  it('records each command with its status; a 404 GetObject also records the implied s3:ListBucket', async () => {
    const transport = stub(
      (path, query): Reply =>
        path.endsWith('/missing')
          ? {
              status: 404,
              headers: { 'content-type': 'application/xml' },
              body: '<Error><Code>NoSuchKey</Code><Message>no</Message></Error>',
            }
          : query['list-type'] === '2'
            ? {
                status: 200,
                headers: { 'content-type': 'application/xml' },
                body: '<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>',
              }
            : { status: 200, headers: { etag: '"e"' }, body: 'x' },
    );
    const s3 = new S3Client({ ...config, requestHandler: transport.handler });
    const calls: AwsCall[] = [];
    const recording = recordCalls(s3, calls);
    await s3.send(new PutObjectCommand({ Bucket: 'results', Key: 'runs/x', Body: 'x' }));
    await expect(s3.send(new GetObjectCommand({ Bucket: 'results', Key: 'runs/missing' }))).rejects.toMatchObject({
      name: 'NoSuchKey',
    });
    await s3.send(new ListObjectsV2Command({ Bucket: 'results', Prefix: 'runs/' }));
    expect(
      calls.map((c) => [
        c.operation,
        c.action,
        c.resource,
        c.status,
        c.errorName ?? null,
        c.impliedBy?.operation ?? null,
      ]),
    ).toEqual([
      ['PutObject', 's3:PutObject', 'arn:aws:s3:::results/runs/x', 200, null, null],
      ['GetObject', 's3:GetObject', 'arn:aws:s3:::results/runs/missing', 404, 'NoSuchKey', null],
      ['GetObject', 's3:ListBucket', 'arn:aws:s3:::results', undefined, null, 'GetObject'],
      ['ListObjectsV2', 's3:ListBucket', 'arn:aws:s3:::results', 200, null, null],
    ]);
    expect(calls[3]!.context).toEqual({ 's3:prefix': 'runs/' });
    expect(recording.unmapped).toEqual([]);
  });

  it('a command without a mapping fails before it is sent, and is listed', async () => {
    const transport = stub(() => ({
      status: 200,
      headers: { 'content-type': 'application/x-amz-json-1.0' },
      body: '{"QueueUrl":"x"}',
    }));
    const sqs = new SQSClient({ ...config, requestHandler: transport.handler });
    const calls: AwsCall[] = [];
    const recording = recordCalls(sqs, calls);
    await expect(sqs.send(new CreateQueueCommand({ QueueName: 'q' }))).rejects.toThrow(
      /no IAM mapping for SQSClient CreateQueue/,
    );
    expect(transport.seen).toEqual([]);
    expect(calls).toEqual([]);
    expect(recording.unmapped).toHaveLength(1);
  });

  it('uses the region of the client for queue ARNs', async () => {
    const transport = stub(() => ({
      status: 200,
      headers: { 'content-type': 'application/x-amz-json-1.0' },
      body: '{"Successful":[],"Failed":[]}',
    }));
    const sqs = new SQSClient({ ...config, region: 'eu-central-1', requestHandler: transport.handler });
    const calls: AwsCall[] = [];
    recordCalls(sqs, calls);
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: MOTO_QUEUE, Entries: [{ Id: '1', MessageBody: 'x' }] }));
    expect(calls).toMatchObject([
      {
        operation: 'SendMessageBatch',
        action: 'sqs:SendMessage',
        resource: `arn:aws:sqs:eu-central-1:${ACCOUNT}:collect`,
        status: 200,
      },
    ]);
  });
});
