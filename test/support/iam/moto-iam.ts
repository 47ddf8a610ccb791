/**
 * moto's own IAM enforcement, as a second, independent authorizer: with enforcement on (setMotoEnforcement), every
 * request must be signed by an IAM user's access key and is checked against that user's policies, so a function can
 * sign as a user holding exactly its synthesized policy (createUserWithPolicy).
 *
 * Where moto 5.2.1 authorizes differently from AWS (each difference checked by experiment), the function that makes up
 * for it says how: batch and HeadBucket action names (withMotoBatchShim), S3 signatures over the decoded URL
 * (motoCompatibleS3Signing), conditions ignored (withoutConditions). Two differences are left to the recorded-call tier
 * (aws-call-recorder.ts): moto authorizes Secrets Manager calls against resource "*", so no ARN-scoped grant (the only
 * kind the stack writes) ever matches; and GetObject of a missing key answers 404 whatever the caller may list (AWS:
 * 403 without s3:ListBucket).
 */
import { createHash, createHmac } from 'node:crypto';
import { actionMatches, type PolicyStatement } from './policy-evaluator';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** Bootstrap credentials: accepted only while enforcement is off. */
export const UNAUTHENTICATED: Credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const hmac = (key: Buffer | string, s: string) => createHmac('sha256', key).update(s).digest();

function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  let key = hmac(`AWS4${secret}`, date);
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  return key;
}

/**
 * Turns moto's IAM enforcement on (every request authenticated) or off. With the server started with
 * INITIAL_NO_AUTH_ACTION_COUNT=0, "moto will skip performing any authentication as many times as the variable's value,
 * and only starts authenticating requests afterwards" (https://github.com/getmoto/moto/blob/master/docs/docs/iam.rst).
 * POST /moto-api/reset-auth sets the count at run time (what moto's own set_initial_no_auth_action_count decorator
 * does in server mode): "inf" opens a window to create the users, "0" closes it.
 */
export async function setMotoEnforcement(endpoint: string, enforce: boolean): Promise<void> {
  const res = await fetch(`${endpoint}/moto-api/reset-auth`, { method: 'POST', body: enforce ? '0' : 'inf' });
  const text = await res.text();
  if (!res.ok) throw new Error(`moto reset-auth: HTTP ${res.status} ${text}`);
}

/**
 * One IAM Query API call, SigV4-signed (there is no IAM client among the dependencies).
 * https://docs.aws.amazon.com/IAM/latest/APIReference/iam-api.pdf, "Making Query Requests".
 */
export async function iamQuery(endpoint: string, creds: Credentials, params: Record<string, string>): Promise<string> {
  const body = new URLSearchParams({ ...params, Version: '2010-05-08' }).toString();
  const url = new URL(endpoint);
  const amzDate = new Date().toISOString().replace(/[:-]|\.\d{3}/g, '');
  const date = amzDate.slice(0, 8);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
    host: url.host,
    'x-amz-date': amzDate,
  };
  const signed = Object.keys(headers).sort();
  const canonical = [
    'POST',
    '/',
    '',
    ...signed.map((h) => `${h}:${headers[h]}`),
    '',
    signed.join(';'),
    sha256(body),
  ].join('\n');
  const scope = `${date}/us-east-1/iam/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const signature = createHmac('sha256', signingKey(creds.secretAccessKey, date, 'us-east-1', 'iam'))
    .update(toSign)
    .digest('hex');
  const res = await fetch(`${url.origin}/`, {
    method: 'POST',
    body,
    headers: {
      ...headers,
      authorization: `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signed.join(';')}, Signature=${signature}`,
    },
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`IAM ${params.Action}: HTTP ${res.status} ${text.slice(0, 500)}`);
  return text;
}

/** An IAM user holding exactly `statements` (one inline policy), and an access key for it. */
export async function createUserWithPolicy(
  endpoint: string,
  admin: Credentials,
  userName: string,
  statements: PolicyStatement[],
): Promise<Credentials> {
  await iamQuery(endpoint, admin, { Action: 'CreateUser', UserName: userName });
  await iamQuery(endpoint, admin, {
    Action: 'PutUserPolicy',
    UserName: userName,
    PolicyName: 'synthesized',
    PolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: statements }),
  });
  const xml = await iamQuery(endpoint, admin, { Action: 'CreateAccessKey', UserName: userName });
  const accessKeyId = /<AccessKeyId>([^<]+)</.exec(xml)?.[1];
  const secretAccessKey = /<SecretAccessKey>([^<]+)</.exec(xml)?.[1];
  if (!accessKeyId || !secretAccessKey)
    throw new Error(`CreateAccessKey for ${userName}: no key in ${xml.slice(0, 300)}`);
  return { accessKeyId, secretAccessKey };
}

const BATCH_SHIM: [single: string, batch: string][] = [
  ['s3:ListBucket', 's3:HeadBucket'],
  ['sqs:SendMessage', 'sqs:SendMessageBatch'],
  ['sqs:DeleteMessage', 'sqs:DeleteMessageBatch'],
  ['sqs:ChangeMessageVisibility', 'sqs:ChangeMessageVisibilityBatch'],
];

/**
 * The statements as moto needs them to mean what they mean in AWS: wherever an Action or
 * NotAction list covers sqs:SendMessage (DeleteMessage, ChangeMessageVisibility) but not the
 * batch name moto checks, the batch name is added to the same list, so it is allowed (or
 * denied, or excluded) exactly where AWS would allow the batch call. Nothing else changes.
 *
 * moto authorizes SendMessageBatch/DeleteMessageBatch/ChangeMessageVisibilityBatch as sqs:<name>Batch; AWS as
 * sqs:SendMessage/DeleteMessage/ChangeMessageVisibility
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-batch-api-actions.html).
 * Likewise it authorizes HeadBucket as "s3:HeadBucket", an action AWS does not have: AWS authorizes it as
 * s3:ListBucket (https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html, "you must have permissions to
 * perform the s3:ListBucket action"), so moto's name is added wherever a statement names s3:ListBucket. Nor does moto
 * send the bucket's Region with a refusal, which S3 does "regardless of the permissions on the bucket".
 */
export function withMotoBatchShim(statements: PolicyStatement[]): PolicyStatement[] {
  const shim = (patterns: string | string[]) => {
    const out = Array.isArray(patterns) ? [...patterns] : [patterns];
    for (const [single, batch] of BATCH_SHIM) {
      if (out.some((p) => actionMatches(p, single)) && !out.some((p) => actionMatches(p, batch))) out.push(batch);
    }
    return out;
  };
  return statements.map((s) => ({
    ...s,
    ...(s.Action !== undefined ? { Action: shim(s.Action) } : {}),
    ...(s.NotAction !== undefined ? { NotAction: shim(s.NotAction) } : {}),
  }));
}

/**
 * What moto's evaluator sees of a statement: no conditions. moto ignores condition operators other than StringEquals
 * and has no request values for S3 keys, so conditions never restrict anything: it allows what AWS would deny when
 * only a condition stands in the way (e.g. s3:prefix on ListBucket).
 */
export function withoutConditions(statements: PolicyStatement[]): PolicyStatement[] {
  return statements.map(({ Condition: _condition, ...rest }) => rest);
}

interface SignableRequest {
  method: string;
  path: string;
  query?: Record<string, string | string[] | null>;
  headers: Record<string, string>;
}

interface MiddlewareClient {
  middlewareStack: {
    addRelativeTo(mw: unknown, options: { relation: 'after'; toMiddleware: string; name: string }): void;
  };
}

// Characters werkzeug leaves as they are in the URL moto signs: re-signing is exact for these.
const PLAIN = /^[A-Za-z0-9\-._~/]*$/;

/**
 * Re-signs an S3 client's requests (after the SDK's signer) over the decoded path and query,
 * which is what moto 5.2.1 recomputes. Paths and query values must decode to plain
 * characters (letters, digits, - . _ ~ /); anything else throws, naming the request.
 *
 * moto recomputes S3 signatures over the decoded (IRI) URL, so a request whose URL carries a percent-encoded character
 * (any ListObjectsV2 prefix with '/') fails SignatureDoesNotMatch unless re-signed the way moto computes it; an
 * encoding it cannot reproduce is refused rather than guessed.
 */
export function motoCompatibleS3Signing(client: MiddlewareClient, creds: Credentials): void {
  const middleware = (next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
    const request = (args as { request: SignableRequest }).request;
    const authName = Object.keys(request.headers).find((h) => h.toLowerCase() === 'authorization');
    const auth = authName ? request.headers[authName] : undefined;
    if (authName && auth) {
      const signedHeaders = /SignedHeaders=([^,]+)/.exec(auth)?.[1]?.split(';');
      const scope = /Credential=[^/]+\/([^,]+)/.exec(auth)?.[1];
      if (!signedHeaders || !scope) throw new Error(`motoCompatibleS3Signing: unexpected Authorization header ${auth}`);
      const lower = Object.fromEntries(
        Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), String(v).trim()]),
      );
      const path = decodeURIComponent(request.path);
      if (!PLAIN.test(path))
        throw new Error(
          `motoCompatibleS3Signing: cannot reproduce moto's canonical form of the path ${JSON.stringify(path)}`,
        );
      const pairs: string[] = [];
      for (const [key, value] of Object.entries(request.query ?? {})) {
        for (const v of ([] as (string | null)[]).concat(value)) {
          if (!PLAIN.test(key) || (v !== null && !PLAIN.test(v)))
            throw new Error(`motoCompatibleS3Signing: cannot reproduce moto's canonical form of ${key}=${v}`);
          pairs.push(`${key}=${v ?? ''}`);
        }
      }
      pairs.sort();
      const payload = lower['x-amz-content-sha256'];
      if (payload === undefined) throw new Error('motoCompatibleS3Signing: no x-amz-content-sha256 header');
      const canonical = [
        request.method.toUpperCase(),
        path,
        pairs.join('&'),
        ...signedHeaders.map((h) => `${h}:${lower[h] ?? ''}`),
        '',
        signedHeaders.join(';'),
        payload,
      ].join('\n');
      const [date, region, service] = scope.split('/');
      const toSign = ['AWS4-HMAC-SHA256', lower['x-amz-date'], scope, sha256(canonical)].join('\n');
      const signature = createHmac('sha256', signingKey(creds.secretAccessKey, date!, region!, service!))
        .update(toSign)
        .digest('hex');
      request.headers[authName] = auth.replace(/Signature=[0-9a-f]+/, `Signature=${signature}`);
    }
    return next(args);
  };
  client.middlewareStack.addRelativeTo(middleware, {
    relation: 'after',
    toMiddleware: 'httpSigningMiddleware',
    name: 'motoCompatibleS3Signing',
  });
}
