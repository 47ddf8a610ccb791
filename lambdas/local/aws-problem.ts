/**
 * An AWS SDK error as one line a person can act on: what could not be done, what AWS said,
 * and, for the usual causes (no credentials, no region, expired or wrong keys, a missing
 * permission, a bucket elsewhere), what to do. Never a stack trace.
 */

interface SdkError {
  name?: string;
  message?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
}

const CREDENTIALS_HINT = 'configure the AWS CLI (aws configure, aws sso login) or set AWS_PROFILE / AWS_ACCESS_KEY_ID';
const BAD_KEYS = new Set([
  'InvalidAccessKeyId',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'SignatureDoesNotMatch',
]);
const EXPIRED = new Set(['ExpiredToken', 'ExpiredTokenException', 'TokenRefreshRequired']);
const NETWORK = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** The hint for an error, or null when the message says enough. */
function hintFor(e: SdkError): string | null {
  const name = e.name ?? '';
  const message = e.message ?? '';
  if (name === 'CredentialsProviderError' || /Could not load credentials/i.test(message))
    return `no AWS credentials found: ${CREDENTIALS_HINT}`;
  if (/Region is missing/i.test(message))
    return 'no AWS region: pass --region or set AWS_REGION (or a region in your AWS CLI profile)';
  if (EXPIRED.has(name)) return 'the credentials have expired: renew them (aws sso login, or new session keys)';
  if (BAD_KEYS.has(name)) return `the credentials are not valid: ${CREDENTIALS_HINT}`;
  if (name === 'PermanentRedirect' || name === 'AuthorizationHeaderMalformed' || e.$metadata?.httpStatusCode === 301) {
    return "the bucket is in another region: pass --region with the stack's region";
  }
  if (name === 'NoSuchBucket') return 'the bucket does not exist (was the stack deleted?)';
  if (/AccessDenied|Forbidden/i.test(name) || e.$metadata?.httpStatusCode === 403)
    return 'your identity lacks the permission (docs/first-deploy.md lists what these commands need)';
  if (NETWORK.has(e.code ?? '') || NETWORK.has(name))
    return 'AWS could not be reached (network, proxy, or AWS_ENDPOINT_URL)';
  return null;
}

/** `could not <doing>: <Name>: <message> (<hint>)`, on one line. */
export function describeAwsError(error: unknown, doing: string): string {
  const e = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as SdkError;
  const status = e.$metadata?.httpStatusCode;
  // S3 answers HEAD errors without a body: the SDK then names them by status alone.
  const name = e.name && e.name !== 'Unknown' && e.name !== 'Error' ? e.name : status ? `HTTP ${status}` : 'Error';
  const message = (e.message ?? '').replace(/\s+/g, ' ').trim();
  const said = message && message !== name && message !== 'UnknownError' ? `${name}: ${message}` : name;
  const hint = hintFor(e);
  return `could not ${doing}: ${said}${hint ? ` (${hint})` : ''}`;
}

/** True when S3 says the object is not there (404; a 403 is a missing permission or, without s3:ListBucket, a missing key). */
export function isNotFound(error: unknown): boolean {
  const e = error as SdkError;
  return e?.$metadata?.httpStatusCode === 404 || e?.name === 'NotFound' || e?.name === 'NoSuchKey';
}
