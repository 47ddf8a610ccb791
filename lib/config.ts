/**
 * The deployment configuration: one zod schema, read from cdk.json context (`captureReplay`)
 * or a JSON file named by `-c configFile=...`, every problem reported at once. Defaults make
 * `cdk synth` work offline with no settings; `cdk deploy` refuses the placeholders.
 *
 * Strict at every level: a misspelled key (`leadSecond`) is an error that names the key it
 * probably meant, never a setting silently left at its default.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { didYouMean } from '../lambdas/core/suggest';
import { httpTargetConfigSchema, KMS_KEY_ARN, sageMakerTargetConfigSchema, targetListSchema } from '../lambdas/runtime/config';

export const PLACEHOLDER_BUCKET = 'example-capture-bucket';
export const PLACEHOLDER_URL = 'https://inference.example.com';

const vpcSchema = z.strictObject({ vpcId: z.string(), subnetIds: z.array(z.string()).min(1), securityGroupIds: z.array(z.string()).min(1), availabilityZones: z.array(z.string()).min(1) });

export const deploymentConfigSchema = z.strictObject({
  /** Existing bucket where SageMaker Data Capture writes (imported by name, read-only). */
  captureBucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name').default(PLACEHOLDER_BUCKET),
  /** Prefix of the captures, e.g. `datacapture/my-endpoint/` (empty: the whole bucket). */
  capturePrefix: z.string().default('datacapture/'),
  /**
   * KMS key of the capture bucket, when it is encrypted with a customer key: a key ARN, not
   * an alias (grants name keys; an alias grant does not cover the key).
   */
  captureKmsKeyArn: z.string().regex(KMS_KEY_ARN, 'a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>), not an alias').optional(),
  /** Account that owns the capture bucket (the queue policy's aws:SourceAccount); default: the stack's. */
  captureBucketAccount: z.string().regex(/^\d{12}$/).optional(),
  /**
   * How new capture files reach the ingest queue. `s3`: an S3 event notification on the
   * bucket (the stack manages the bucket's notification configuration for that prefix).
   * `eventbridge`: an EventBridge rule on "Object Created" events (the bucket must have
   * EventBridge notifications on); use it when the bucket already has notifications you or
   * other tools manage, since S3 refuses overlapping rules and tools that own the
   * configuration delete ours.
   */
  notifications: z.enum(['s3', 'eventbridge']).default('s3'),
  /**
   * One target, or two for A/B (both get the same schedule). An OpenAI-compatible endpoint
   * `{name, url, path?, apiKeySecret?...}` (kind `http`, the default), or a SageMaker endpoint
   * `{name, kind: 'sagemaker', endpointName, region?, variant?, inferenceComponentName?,
   * containerHostname?, customAttributes?}`. Each target gets the records its kind can take
   * (a CSV record goes to a SageMaker target; an HTTP target counts it as dropped).
   */
  targets: targetListSchema.default([{ name: 'target', kind: 'http', url: PLACEHOLDER_URL, path: '/v1/chat/completions' }]),
  /**
   * `file`: each new capture file is its own run, starting `leadSeconds` after it lands.
   * `mirror`: each request is replayed at its inferenceTime + `lagSeconds`; results per file
   * and rolled up per capture hour.
   */
  mode: z.enum(['file', 'mirror']).default('file'),
  lagSeconds: z.number().int().min(60).max(86_400).default(900),
  leadSeconds: z.number().int().min(5).max(300).default(20),
  graceSeconds: z.number().int().min(10).max(3600).default(120),
  /**
   * Due-time window one shard message (and one fire invocation) covers. Longer slots put
   * more requests behind each invocation's lead-time wait: cheaper at low traffic.
   */
  slotSeconds: z.number().min(0.1).max(60).default(1),
  forceStreaming: z.boolean().default(true),
  modelOverride: z.string().min(1).optional(),
  timeScale: z.number().positive().default(1),
  intraSecond: z.enum(['spread', 'burst']).default('spread'),
  requestTimeoutSeconds: z.number().int().min(1).max(600).default(300),
  maxInFlightPerShard: z.number().int().positive().optional(),
  lateToleranceMs: z.number().int().min(0).default(5000),
  latePolicy: z.enum(['fire', 'drop']).default('fire'),
  /**
   * The busiest traffic to replay, requests per second per target (after timeScale): sets
   * the fire function's memory, batch size, concurrency and timeout (lib/sizing.ts).
   */
  peakRequestsPerSecond: z.number().positive().max(10_000).default(50),
  /** How long one request lasts at peak (an LLM stream), seconds. */
  peakLatencySeconds: z.number().positive().max(600).default(30),
  /** Overrides the derived maximum fire concurrency. */
  maxFireConcurrency: z.number().int().min(2).max(1000).optional(),
  /**
   * Reserve the fire function's concurrency (= its maximum concurrency) so other functions
   * in the account cannot starve it. Needs that much unreserved concurrency in the account.
   */
  reserveFireConcurrency: z.boolean().default(true),
  /** Working files (run records, claims, shard results, referenced bodies) expire after this many days. */
  workingFilesExpireDays: z.number().int().min(2).max(3650).default(7),
  /** Results under runs/ and hours/ expire after this many days; kept forever when unset. */
  resultsExpireDays: z.number().int().min(1).max(36500).optional(),
  logRetentionDays: z.number().int().positive().default(30),
  /** Private endpoints: run the fire function in these subnets with these security groups. */
  vpc: vpcSchema.optional(),
});
export type DeploymentConfig = z.infer<typeof deploymentConfigSchema>;

/** A fire invocation waits the lead, fires a slot, and waits for the slowest response: all within Lambda's 15 minutes. */
export const FIRE_BUDGET_SECONDS = 840;

const checkedSchema = deploymentConfigSchema.superRefine((c, ctx) => {
  if (c.mode === 'mirror' && c.lagSeconds < c.leadSeconds + 60) {
    ctx.addIssue({ code: 'custom', path: ['lagSeconds'], message: `mirror mode needs lagSeconds >= leadSeconds + 60 (files land minutes after their captures)` });
  }
  const total = c.leadSeconds + c.slotSeconds + c.requestTimeoutSeconds;
  if (total > FIRE_BUDGET_SECONDS) {
    ctx.addIssue({
      code: 'custom',
      path: ['requestTimeoutSeconds'],
      message: `leadSeconds + slotSeconds + requestTimeoutSeconds = ${total} s: at most ${FIRE_BUDGET_SECONDS} s fit in one fire invocation`,
    });
  }
});

/**
 * What is wrong with the configuration the user wrote: every problem, one a line. The CDK app
 * prints the message alone (no stack trace) and exits 1.
 */
export class DeploymentConfigError extends Error {
  override name = 'DeploymentConfigError';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The keys the object at `path` may have, for "did you mean": a target's depend on its kind. */
function knownKeysAt(path: readonly PropertyKey[], raw: unknown): readonly string[] {
  if (path.length === 0) return Object.keys(deploymentConfigSchema.shape);
  if (path.length === 1 && path[0] === 'vpc') return Object.keys(vpcSchema.shape);
  if (path.length === 2 && path[0] === 'targets' && isRecord(raw) && Array.isArray(raw.targets)) {
    const target: unknown = raw.targets[path[1] as number];
    return isRecord(target) && target.kind === 'sagemaker' ? Object.keys(sageMakerTargetConfigSchema.shape) : Object.keys(httpTargetConfigSchema.shape);
  }
  return [];
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

/** `targets.0.url`, as zod and the runtime configuration write paths. */
function pathText(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

/** One line per problem; an unknown key gets the known key it probably is. */
export function describeConfigProblems(issues: readonly z.core.$ZodIssue[], raw: unknown, prefix = 'captureReplay.'): string[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => `${prefix}${pathText([...issue.path, key])}: unknown setting${didYouMean(key, knownKeysAt(issue.path, raw))}`);
    }
    if (issue.code === 'invalid_union' && (issue as { discriminator?: string }).discriminator === 'kind') {
      const kind = valueAt(raw, issue.path);
      const got = kind === undefined ? '' : ` (got ${JSON.stringify(kind)}${didYouMean(String(kind), ['http', 'sagemaker'])})`;
      return [`${prefix}${pathText(issue.path)}: must be "http" (the default) or "sagemaker"${got}`];
    }
    return [`${prefix}${pathText(issue.path)}: ${issue.message}`];
  });
}

export function parseDeploymentConfig(raw: unknown, source = 'captureReplay'): DeploymentConfig {
  const result = checkedSchema.safeParse(raw ?? {});
  if (!result.success) {
    const prefix = source === 'captureReplay' ? 'captureReplay.' : '';
    const problems = describeConfigProblems(result.error.issues, raw, prefix);
    throw new DeploymentConfigError(`invalid deployment configuration${source === 'captureReplay' ? '' : ` in ${source}`}:\n- ${problems.join('\n- ')}`);
  }
  return result.data;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new DeploymentConfigError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
}

/** From CDK context: `captureReplay` (an object), or `configFile` (a JSON file path). */
export function loadDeploymentConfig(context: (key: string) => unknown): DeploymentConfig {
  const file = context('configFile');
  if (typeof file === 'string') {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new DeploymentConfigError(`cannot read configFile ${file}: ${(error as Error).message}`);
    }
    return parseDeploymentConfig(parseJson(text, `configFile ${file}`), `configFile ${file}`);
  }
  const inline = context('captureReplay');
  return parseDeploymentConfig(typeof inline === 'string' ? parseJson(inline, 'the captureReplay context value') : inline);
}

/** Settings still at their placeholders: `cdk deploy` must not go out with these. */
export function placeholdersIn(config: DeploymentConfig): string[] {
  const found: string[] = [];
  if (config.captureBucket === PLACEHOLDER_BUCKET) found.push('captureBucket');
  if (config.targets.some((t) => t.kind === 'http' && t.url === PLACEHOLDER_URL)) found.push('targets[].url');
  return found;
}
