/**
 * Credentials the deployment configuration must not carry. The functions get the targets in
 * their environment (TARGETS_JSON), which the template, `cdk synth`'s output, the Lambda
 * console and anyone with lambda:GetFunctionConfiguration see in clear; an `apiKeySecret` is
 * also written into an IAM policy's resource ARN. So a target URL holding a password
 * (`user:password@`) or a token in its query (`?token=`, `?api_key=`, `X-Amz-*`: redact.ts
 * says which names), and an API key pasted where the name of its Secrets Manager secret goes,
 * are refused at synth, one line each, never echoing the value. The key belongs in a secret,
 * named by `apiKeySecret`: the fire function reads it and sends it as a bearer token.
 */
import { secretQueryParams } from '../lambdas/core/redact';

export interface CredentialProblem {
  /** Within the targets list: `[0, 'url']`. */
  path: (string | number)[];
  message: string;
}

const USE_A_SECRET = 'put the key in a Secrets Manager secret and name it in apiKeySecret (sent as a bearer token)';

/**
 * A secret's ARN, or its name: 1-512 ASCII letters, digits and / _ + = . @ - (Secrets Manager's
 * CreateSecret rule); a secret AWS manages for a service is named `<service>!<name>`.
 */
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@!-]{1,512}$/;
const SECRET_NAME = /^(?:[a-z0-9-]+!)?[A-Za-z0-9/_+=.@-]{1,512}$/;

/**
 * The shapes of API keys and tokens as providers issue them, each a valid secret name: an
 * OpenAI or Anthropic key (`sk-...`), Stripe's (`sk_live_...`), Hugging Face (`hf_...`),
 * GitHub (`ghp_...`, `github_pat_...`), GitLab (`glpat-...`), Slack (`xoxb-...`), an AWS access
 * key id (`AKIA...`), a Google API key (`AIza...`), a JWT (`eyJ...`).
 */
const KEY_PREFIXES: readonly [RegExp, string][] = [
  [/^sk[-_]/i, 'sk-'],
  [/^hf_/, 'hf_'],
  [/^(?:gh[pousr]_|github_pat_)/, "a GitHub token's prefix"],
  [/^glpat-/, 'glpat-'],
  [/^xox[abprs]-/, "a Slack token's prefix"],
  [/^(?:AKIA|ASIA)[A-Z0-9]{16}$/, "an AWS access key id's prefix"],
  [/^AIza[\w-]{30,}$/, 'AIza'],
  [/^eyJ[\w-]+\.[\w-]+/, 'eyJ (a JWT)'],
];
/** A run of 32 or more letters and digits, both, with no separator: random, as keys are, not a name. */
const RANDOM_RUN = /(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{32,}/;

/** What is wrong with an `apiKeySecret`, or null when it is a secret's name or ARN. */
export function apiKeySecretProblem(value: string): string | null {
  const notShown = 'its value is not shown';
  if (value.startsWith('arn:')) {
    if (SECRET_ARN.test(value)) return null;
    return (
      `is not a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>); ` +
      `${notShown}: give the secret's ARN or name`
    );
  }
  const shape = KEY_PREFIXES.find(([pattern]) => pattern.test(value));
  if (shape || RANDOM_RUN.test(value)) {
    const why = shape ? `it starts with ${shape[1]}` : 'a random run of 32 letters and digits or more';
    return (
      `looks like an API key (${why}), not a Secrets Manager secret's name or ARN; ${notShown}: put the key in ` +
      `a secret (aws secretsmanager create-secret --name replay/my-key --secret-string ...) and give the ` +
      `secret's name here`
    );
  }
  if (!SECRET_NAME.test(value)) {
    return (
      `is not a Secrets Manager secret's name (1-512 ASCII letters, digits and / _ + = . @ -) or ARN; ` +
      `${notShown}: put the API key in a secret and give the secret's name or ARN here`
    );
  }
  return null;
}

/** What is wrong with a target URL's credentials, or null when it carries none. */
export function targetUrlCredentialProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Not a URL: the schema says so.
    return null;
  }
  // Not http(s): refused by the schema already, which says what to write instead.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username !== '' || url.password !== '')
    return `holds a user name or password (user:password@), which the template would show in clear: remove it; ${USE_A_SECRET}`;
  const params = secretQueryParams(url);
  if (params.length > 0)
    return (
      `holds a credential in its query (${params.map((p) => `${p}=...`).join(', ')}), which the template would ` +
      `show in clear: remove it; ${USE_A_SECRET}`
    );
  return null;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every credential problem of a targets list (as given: any shape), at its path within the list. */
export function targetCredentialProblems(targets: unknown): CredentialProblem[] {
  if (!Array.isArray(targets)) return [];
  return targets.flatMap((t, i): CredentialProblem[] => {
    if (!isRecord(t)) return [];
    const problems: CredentialProblem[] = [];
    const url = typeof t.url === 'string' ? targetUrlCredentialProblem(t.url) : null;
    if (url) problems.push({ path: [i, 'url'], message: url });
    const secret = typeof t.apiKeySecret === 'string' ? apiKeySecretProblem(t.apiKeySecret) : null;
    if (secret) problems.push({ path: [i, 'apiKeySecret'], message: secret });
    return problems;
  });
}
