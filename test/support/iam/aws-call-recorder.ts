/**
 * Records every AWS call an SDK v3 client makes as the IAM request AWS authorizes it as:
 * the action, the resource ARN and the request-context keys a policy condition could test.
 * A command without a mapping here throws from send(), so nothing goes unrecorded.
 *
 * Mappings follow the Service Authorization Reference ("API operations defined by ..."); each
 * service's function links its page.
 */
export type AwsService = 's3' | 'sqs' | 'secretsmanager' | 'kms' | 'sagemaker' | 'sns';

export interface AwsCall {
  service: AwsService;
  /** The SDK operation, e.g. SendMessageBatch. */
  operation: string;
  /** The IAM action AWS authorizes the call as, e.g. sqs:SendMessage. */
  action: string;
  /** The resource ARN; a secret's name when `resourceIsName` (resolve it before evaluating). */
  resource: string;
  /** Request-context keys the call carries that a condition could test, e.g. s3:prefix. */
  context: Record<string, string>;
  /** The resource is a name (a secret named by name), not an ARN. */
  resourceIsName?: true;
  /**
   * Set on a requirement implied by the call's outcome rather than by its own authorization:
   * e.g. S3 answers 404 for a missing key only to a caller with s3:ListBucket (403 otherwise).
   */
  impliedBy?: { operation: string; reason: string; resource: string; docs: string };
  /** HTTP status of the response, or of the error, once the call has come back. */
  status?: number;
  /** The error's name when the call failed (e.g. AccessDenied, NoSuchKey). */
  errorName?: string;
}

export interface Target {
  partition: string;
  region: string;
  /**
   * The caller's account: needed for services whose requests name resources without it
   * (SageMaker runtime: "the account ID from the authentication token").
   */
  account?: string;
}

type Input = Record<string, unknown>;

function str(input: Input, name: string, operation: string): string {
  const v = input[name];
  if (typeof v !== 'string' || v === '') throw new Error(`${operation}: ${name} missing, cannot name the resource`);
  return v;
}

/** Partition of a region, for the ARNs recorded. https://docs.aws.amazon.com/IAM/latest/UserGuide/reference-arns.html */
export function partitionOf(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  return 'aws';
}

/** arn:<partition>:sqs:<region>:<account>:<name>, from https://host/<account>/<name>. */
export function queueArnFromUrl(queueUrl: string, t: Target): string {
  const parts = new URL(queueUrl).pathname.split('/').filter(Boolean);
  const [account, name] = parts;
  if (parts.length !== 2 || !account || !name || !/^\d{12}$/.test(account))
    throw new Error(`not an SQS queue URL (https://host/<account>/<name>): ${queueUrl}`);
  return `arn:${t.partition}:sqs:${t.region}:${account}:${name}`;
}

const s3Object = (input: Input, op: string, t: Target) =>
  `arn:${t.partition}:s3:::${str(input, 'Bucket', op)}/${str(input, 'Key', op)}`;
const s3Bucket = (input: Input, op: string, t: Target) => `arn:${t.partition}:s3:::${str(input, 'Bucket', op)}`;

function call(
  service: AwsService,
  operation: string,
  action: string,
  resource: string,
  context: Record<string, string> = {},
): AwsCall {
  return { service, operation, action, resource, context };
}

/** S3: https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html */
function s3Calls(op: string, input: Input, t: Target): AwsCall[] {
  switch (op) {
    case 'GetObject':
    case 'HeadObject': {
      // With a VersionId, S3 authorizes s3:GetObjectVersion instead.
      if (input.VersionId !== undefined) return [call('s3', op, 's3:GetObjectVersion', s3Object(input, op, t))];
      if (input.SSECustomerKey !== undefined) throw new Error(`${op} with SSE-C is not mapped`);
      return [call('s3', op, 's3:GetObject', s3Object(input, op, t))];
    }
    case 'PutObject': {
      // Server-side encryption with a KMS key needs kms:GenerateDataKey on a key this mapping cannot name.
      if (typeof input.ServerSideEncryption === 'string' && input.ServerSideEncryption.startsWith('aws:kms'))
        throw new Error('PutObject with SSE-KMS is not mapped');
      if (input.ObjectLockMode !== undefined || input.ObjectLockLegalHoldStatus !== undefined)
        throw new Error('PutObject with Object Lock settings is not mapped');
      const out = [call('s3', op, 's3:PutObject', s3Object(input, op, t))];
      // Dependent actions of PutObject when the request sets an ACL or tags.
      if (['ACL', 'GrantFullControl', 'GrantRead', 'GrantReadACP', 'GrantWriteACP'].some((k) => input[k] !== undefined))
        out.push(call('s3', op, 's3:PutObjectAcl', s3Object(input, op, t)));
      if (input.Tagging !== undefined) out.push(call('s3', op, 's3:PutObjectTagging', s3Object(input, op, t)));
      return out;
    }
    case 'DeleteObject':
      return [
        call(
          's3',
          op,
          input.VersionId !== undefined ? 's3:DeleteObjectVersion' : 's3:DeleteObject',
          s3Object(input, op, t),
        ),
      ];
    case 'ListObjectsV2':
    case 'ListObjects': {
      // s3:ListBucket on the bucket; s3:prefix, s3:delimiter and s3:max-keys are its request keys.
      const context: Record<string, string> = {};
      if (typeof input.Prefix === 'string') context['s3:prefix'] = input.Prefix;
      if (typeof input.Delimiter === 'string') context['s3:delimiter'] = input.Delimiter;
      if (typeof input.MaxKeys === 'number') context['s3:max-keys'] = String(input.MaxKeys);
      return [call('s3', op, 's3:ListBucket', s3Bucket(input, op, t), context)];
    }
    case 'HeadBucket':
      return [call('s3', op, 's3:ListBucket', s3Bucket(input, op, t))];
    default:
      return unmapped('S3Client', op);
  }
}

/**
 * SQS: https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsqs.html and
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-batch-api-actions.html ("You cannot
 * set permissions explicitly for SendMessageBatch, DeleteMessageBatch, or ChangeMessageVisibilityBatch": the batch
 * calls are authorized as their single forms).
 */
const SQS_ACTIONS: Record<string, string> = {
  SendMessage: 'sqs:SendMessage',
  SendMessageBatch: 'sqs:SendMessage',
  ReceiveMessage: 'sqs:ReceiveMessage',
  DeleteMessage: 'sqs:DeleteMessage',
  DeleteMessageBatch: 'sqs:DeleteMessage',
  ChangeMessageVisibility: 'sqs:ChangeMessageVisibility',
  ChangeMessageVisibilityBatch: 'sqs:ChangeMessageVisibility',
  GetQueueAttributes: 'sqs:GetQueueAttributes',
};

function sqsCalls(op: string, input: Input, t: Target): AwsCall[] {
  if (op === 'GetQueueUrl') {
    const owner = input.QueueOwnerAWSAccountId;
    if (typeof owner !== 'string')
      throw new Error(
        'GetQueueUrl without QueueOwnerAWSAccountId: the account of the queue ARN is unknown to the recorder',
      );
    return [
      call('sqs', op, 'sqs:GetQueueUrl', `arn:${t.partition}:sqs:${t.region}:${owner}:${str(input, 'QueueName', op)}`),
    ];
  }
  const action = SQS_ACTIONS[op];
  if (!action) return unmapped('SQSClient', op);
  return [call('sqs', op, action, queueArnFromUrl(str(input, 'QueueUrl', op), t))];
}

/** Secrets Manager: https://docs.aws.amazon.com/service-authorization/latest/reference/list_awssecretsmanager.html */
function secretsCalls(op: string, input: Input): AwsCall[] {
  if (op !== 'GetSecretValue' && op !== 'DescribeSecret') return unmapped('SecretsManagerClient', op);
  const id = str(input, 'SecretId', op);
  const context: Record<string, string> = {};
  if (op === 'GetSecretValue') {
    if (typeof input.VersionId === 'string') context['secretsmanager:VersionId'] = input.VersionId;
    if (typeof input.VersionStage === 'string') context['secretsmanager:VersionStage'] = input.VersionStage;
  }
  const c = call('secretsmanager', op, `secretsmanager:${op}`, id, context);
  // A name is recorded as given; the test's resolver maps it to the secret's ARN.
  return [id.startsWith('arn:') ? c : { ...c, resourceIsName: true }];
}

/** KMS: https://docs.aws.amazon.com/service-authorization/latest/reference/list_awskeymanagementservice.html */
function kmsCalls(op: string, input: Input): AwsCall[] {
  if (op !== 'Decrypt') return unmapped('KMSClient', op);
  const key = input.KeyId;
  // Without KeyId, KMS reads the key from the ciphertext: the recorder cannot name it.
  if (typeof key !== 'string' || !key.startsWith('arn:'))
    throw new Error('KMS Decrypt without a KeyId ARN: the recorder cannot name the key');
  return [call('kms', op, 'kms:Decrypt', key)];
}

/**
 * SNS Publish to a topic (a TargetArn or PhoneNumber names no topic: not mapped); resource type topic*, required:
 * https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsns.html
 */
function snsCalls(op: string, input: Input): AwsCall[] {
  if (op !== 'Publish') return unmapped('SNSClient', op);
  return [call('sns', op, 'sns:Publish', str(input, 'TopicArn', op))];
}

/**
 * SageMaker runtime invocations
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsagemaker.html): InvokeEndpoint and
 * InvokeEndpointWithResponseStream have resource types endpoint*, required, and inference-component, optional;
 * condition keys aws:ResourceTag, sagemaker:ResourceTag, and sagemaker:TargetModel for InvokeEndpoint.
 *
 * The endpoint's ARN has its name lower-cased (SageMaker writes resource names in ARNs in lower case: an AccessDenied
 * for an endpoint created as `LaBSE` names `endpoint/...labse`). With an InferenceComponentName the request involves
 * that inference component too, the action's optional resource type. A streamed invocation is recorded as both
 * actions: the reference lists sagemaker:InvokeEndpointWithResponseStream, and the operation's API reference says it
 * needs sagemaker:InvokeEndpoint
 * (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpointWithResponseStream.html, "your
 * IAM permissions must allow the sagemaker:InvokeEndpoint action"); a grant must satisfy either reading.
 */
function sageMakerCalls(op: string, input: Input, t: Target): AwsCall[] {
  if (op !== 'InvokeEndpoint' && op !== 'InvokeEndpointWithResponseStream')
    return unmapped('SageMakerRuntimeClient', op);
  if (!t.account)
    throw new Error(
      `${op}: the recorder needs the caller's account to name the endpoint (recordCalls(client, sink, { account }))`,
    );
  const arn = (type: string, name: string) =>
    `arn:${t.partition}:sagemaker:${t.region}:${t.account}:${type}/${name.toLowerCase()}`;
  const resources = [arn('endpoint', str(input, 'EndpointName', op))];
  if (input.InferenceComponentName !== undefined)
    resources.push(arn('inference-component', str(input, 'InferenceComponentName', op)));
  const context: Record<string, string> =
    typeof input.TargetModel === 'string' && op === 'InvokeEndpoint'
      ? { 'sagemaker:TargetModel': input.TargetModel }
      : {};
  const actions =
    op === 'InvokeEndpoint'
      ? ['sagemaker:InvokeEndpoint']
      : ['sagemaker:InvokeEndpointWithResponseStream', 'sagemaker:InvokeEndpoint'];
  return actions.flatMap((action) => resources.map((resource) => call('sagemaker', op, action, resource, context)));
}

function unmapped(client: string, op: string): never {
  throw new Error(
    `aws-call-recorder: no IAM mapping for ${client} ${op}; add one (from the Service Authorization Reference) before using it`,
  );
}

/** The IAM requests one SDK command is authorized as. Throws for commands without a mapping. */
export function iamCallsFor(clientName: string, commandName: string, input: Input, t: Target): AwsCall[] {
  const op = commandName.replace(/Command$/, '');
  switch (clientName) {
    case 'S3Client':
      return s3Calls(op, input, t);
    case 'SQSClient':
      return sqsCalls(op, input, t);
    case 'SecretsManagerClient':
      return secretsCalls(op, input);
    case 'KMSClient':
      return kmsCalls(op, input);
    case 'SageMakerRuntimeClient':
      return sageMakerCalls(op, input, t);
    case 'SNSClient':
      return snsCalls(op, input);
    default:
      return unmapped(clientName, op);
  }
}

/**
 * Requirements implied by an outcome. S3 GetObject/HeadObject of a key that does not exist
 * answers 404 only to a caller that also has s3:ListBucket on the bucket, 403 otherwise, and
 * the stores here rely on that 404 (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html,
 * "Permissions"). The request context of that implicit ListBucket check is not documented:
 * no s3:prefix is recorded for it; `impliedBy.resource` keeps the key for a caller that
 * wants to weigh the alternative.
 */
function impliedCalls(c: AwsCall, status: number | undefined, t: Target): AwsCall[] {
  if (c.service !== 's3' || (c.operation !== 'GetObject' && c.operation !== 'HeadObject') || status !== 404) return [];
  const bucket = c.resource.slice(`arn:${t.partition}:s3:::`.length).split('/')[0]!;
  return [
    {
      service: 's3',
      operation: c.operation,
      action: 's3:ListBucket',
      resource: `arn:${t.partition}:s3:::${bucket}`,
      context: {},
      impliedBy: {
        operation: c.operation,
        reason: 'a missing key answers 404 (not 403) only with s3:ListBucket on the bucket',
        resource: c.resource,
        docs: 'https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html',
      },
    },
  ];
}

/**
 * A publish to a topic under a customer managed key: SNS calls KMS with the publisher's
 * credentials, which need kms:GenerateDataKey and kms:Decrypt on the key
 * (https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html), through SNS
 * (kms:ViaService). moto's SNS does not encrypt, so these are recorded as implied by a
 * publish that succeeded. `topicKeys`: topic ARN -> key ARN, from the template.
 */
function encryptedTopicCalls(c: AwsCall, topicKeys: Readonly<Record<string, string>>, t: Target): AwsCall[] {
  const key = c.service === 'sns' && c.operation === 'Publish' ? topicKeys[c.resource] : undefined;
  if (!key) return [];
  const impliedBy = {
    operation: 'Publish',
    reason: 'SNS encrypts the message with the topic key, as the publisher',
    resource: c.resource,
    docs: 'https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html',
  };
  return ['kms:GenerateDataKey', 'kms:Decrypt'].map((action) => ({
    service: 'kms' as const,
    operation: 'Publish',
    action,
    resource: key,
    context: { 'kms:ViaService': `sns.${t.region}.amazonaws.com` },
    status: 200,
    impliedBy,
  }));
}

interface RecordableClient {
  middlewareStack: {
    add(mw: unknown, options: { step: 'initialize'; name: string; priority?: 'high' | 'normal' | 'low' }): void;
  };
  config: { region: string | (() => Promise<string>) };
}

export interface Recording {
  calls: AwsCall[];
  /** Commands sent that had no mapping (send() threw for them too). */
  unmapped: string[];
}

/**
 * Adds the recorder to a client (initialize step: the command's input as given). Each call
 * is pushed to `sink` before it is sent, and its status filled in when it returns. `account`:
 * the caller's, for requests that do not name it (SageMaker runtime).
 */
export function recordCalls(
  client: RecordableClient,
  sink: AwsCall[],
  options: { account?: string; topicKeys?: Readonly<Record<string, string>> } = {},
): Recording {
  const recording: Recording = { calls: sink, unmapped: [] };
  const middleware =
    (
      next: (args: { input: Input }) => Promise<{ output: { $metadata: { httpStatusCode?: number } } }>,
      context: { clientName?: string; commandName?: string },
    ) =>
    async (args: { input: Input }) => {
      const region = typeof client.config.region === 'function' ? await client.config.region() : client.config.region;
      const target: Target = {
        region,
        partition: partitionOf(region),
        ...(options.account ? { account: options.account } : {}),
      };
      let calls: AwsCall[];
      try {
        calls = iamCallsFor(context.clientName ?? '?', context.commandName ?? '?', args.input, target);
      } catch (error) {
        recording.unmapped.push(`${context.clientName}.${context.commandName}: ${(error as Error).message}`);
        throw error;
      }
      sink.push(...calls);
      try {
        const result = await next(args);
        for (const c of calls) c.status = result.output.$metadata.httpStatusCode ?? 200;
        if (options.topicKeys) for (const c of calls) sink.push(...encryptedTopicCalls(c, options.topicKeys, target));
        return result;
      } catch (error) {
        const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
        for (const c of calls) {
          if (e.$metadata?.httpStatusCode !== undefined) c.status = e.$metadata.httpStatusCode;
          if (e.name) c.errorName = e.name;
        }
        for (const c of calls) sink.push(...impliedCalls(c, e.$metadata?.httpStatusCode, target));
        throw error;
      }
    };
  client.middlewareStack.add(middleware, { step: 'initialize', name: 'iamCallRecorder', priority: 'high' });
  return recording;
}
