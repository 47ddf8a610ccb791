/**
 * The functions' configuration: one zod schema over the environment, parsed once per cold
 * start, every problem reported at once. Variable names are declared here and imported by
 * the CDK construct that sets them, so the two cannot drift apart.
 */
import { z } from 'zod';
import {
  ASCII,
  COMPONENT_NAME,
  CUSTOM_ATTRIBUTES_MAX,
  REGION,
  RESOURCE_NAME,
  SAGEMAKER_NAME_MAX,
} from '../adapters/sagemaker/target-spec';
import { DEFAULT_METRICS_NAMESPACE, METRICS_NAMESPACE } from '../core/metrics/cloudwatch';
import type { CapacitySetting } from '../core/pipeline/capacity';
import { planIntraSecond, planModelOverride, planNumber } from '../core/plan/plan-option-schema';
import { scheduleConfigSchema, type ScheduleConfig } from '../core/scheduled-runs/contract';
import { TARGET_NAME_PATTERN } from '../core/target-name';
import type { TargetKind } from '../core/types';

export const ENV = {
  resultsBucket: 'RESULTS_BUCKET',
  replayQueueUrl: 'REPLAY_QUEUE_URL',
  collectQueueUrl: 'COLLECT_QUEUE_URL',
  targets: 'TARGETS_JSON',
  mode: 'REPLAY_MODE',
  lagMs: 'LAG_MS',
  leadMs: 'LEAD_MS',
  graceMs: 'GRACE_MS',
  slotMs: 'SLOT_MS',
  maxShardRequests: 'MAX_SHARD_REQUESTS',
  timeScale: 'TIME_SCALE',
  /** New capture files' amplification (plan.ts rule 4); absent: 1. */
  amplify: 'AMPLIFY',
  intraSecond: 'INTRA_SECOND',
  forceStreaming: 'FORCE_STREAMING',
  modelOverride: 'MODEL_OVERRIDE',
  requestTimeoutMs: 'REQUEST_TIMEOUT_MS',
  maxInFlight: 'MAX_IN_FLIGHT',
  maxConnectionsPerTarget: 'MAX_CONNECTIONS_PER_TARGET',
  /** The fire function's timeout: how long a shard's claimant may still be running. */
  fireTimeoutMs: 'FIRE_TIMEOUT_MS',
  lateToleranceMs: 'LATE_TOLERANCE_MS',
  latePolicy: 'LATE_POLICY',
  /** S3-compatible emulators (moto) serve path-style URLs only; AWS itself needs nothing here. */
  s3ForcePathStyle: 'S3_FORCE_PATH_STYLE',
  /** Scheduled A/B runs (lambdas/core/scheduled-runs/contract.ts), a JSON list; the plan function reads them. */
  schedules: 'SCHEDULES_JSON',
  /** Where Data Capture writes: the plan function lists and reads the window's files there. */
  captureBucket: 'CAPTURE_BUCKET',
  capturePrefix: 'CAPTURE_PREFIX',
  /** SNS topic for scheduled runs' summaries; none published without it. */
  notifyTopicArn: 'NOTIFY_TOPIC_ARN',
  /** The targets a new capture file replays to (a JSON list of names); every target without it. */
  autoReplayTargets: 'AUTO_REPLAY_TARGETS',
  /** How long the fire function keeps a target's API key before reading its secret again, seconds. */
  secretsMaxAgeSeconds: 'SECRETS_MAX_AGE_SECONDS',
  /**
   * The fire event source's MaximumConcurrency (and reserved concurrency, when reserved), and the
   * setting it comes from (`peakRequestsPerSecond` or `maxFireConcurrency`): the ingest and plan
   * functions weigh each run's lanes against it (core/pipeline/capacity.ts).
   */
  fireConcurrency: 'FIRE_MAX_CONCURRENCY',
  fireConcurrencySetting: 'FIRE_CONCURRENCY_SETTING',
  /** The stack's name: the `Stack` dimension of the functions' metrics. */
  stackName: 'STACK_NAME',
  /** The CloudWatch namespace of the functions' metrics (the deployment's `metricsNamespace`). */
  metricsNamespace: 'METRICS_NAMESPACE',
} as const;

/** A KMS key ARN; aliases are refused because grants on an alias do not cover the key. */
export const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/;

const TARGET_NAME = z.string().regex(TARGET_NAME_PATTERN, 'target names are letters, digits, . _ -');

/** Why a target URL is refused: absent, not a URL, or not http(s). The URL itself is not echoed (it may hold a password). */
function targetUrlProblem(input: unknown): string | undefined {
  if (input === undefined)
    return 'an HTTP target needs url (a SageMaker endpoint needs kind: "sagemaker" and endpointName)';
  if (typeof input !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return 'url is not a URL (expected http://host:port or https://host/...)';
  }
  const hostPort = /^[\w.-]+:\d+/.test(input) ? ' (a host:port needs http:// in front)' : '';
  return `url must start with http:// or https:// (got "${url.protocol}")${hostPort}`;
}

/**
 * An OpenAI-compatible HTTP endpoint: the default kind, so targets written before there were
 * kinds (`{name, url, path?, apiKeySecret?...}`) mean what they meant. Strict, as the
 * SageMaker kind: a misspelled key is an error, not a setting silently ignored; and the URL
 * is http(s), the only schemes the requests can use.
 */
export const httpTargetConfigSchema = z.strictObject({
  name: TARGET_NAME,
  kind: z.literal('http'),
  url: z.url({ protocol: /^https?$/, error: (issue) => targetUrlProblem(issue.input) }),
  path: z.string().default('/v1/chat/completions'),
  /** Secrets Manager secret (ARN or name) holding the bearer key; none sent without it. */
  apiKeySecret: z.string().optional(),
  /** For a JSON secret (the console's default): the field that holds the key. */
  apiKeySecretField: z.string().min(1).optional(),
  /**
   * The customer-managed KMS key the secret is encrypted with (a key ARN, not an alias: IAM
   * grants and key policies name keys), so the fire function gets kms:Decrypt on it.
   */
  apiKeySecretKmsKeyArn: z
    .string()
    .regex(KMS_KEY_ARN, 'a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>), not an alias')
    .optional(),
});

/** SageMaker's own name rule (CreateEndpoint's EndpointName, TargetVariant, TargetContainerHostname). */
const sageMakerName = (what: string) =>
  z
    .string()
    .max(SAGEMAKER_NAME_MAX, `${what} is at most ${SAGEMAKER_NAME_MAX} characters`)
    .regex(RESOURCE_NAME, `${what}: letters, digits and hyphens, starting and ending with a letter or digit`);

/**
 * A SageMaker real-time endpoint, invoked with the runtime API (InvokeEndpoint /
 * InvokeEndpointWithResponseStream) under the function's role. Strict: a misspelled key
 * (`varient`) is an error, not a setting silently ignored.
 */
export const sageMakerTargetConfigSchema = z.strictObject({
  name: TARGET_NAME,
  kind: z.literal('sagemaker'),
  endpointName: sageMakerName('endpointName'),
  /** The endpoint's region; default: the function's (its AWS_REGION). */
  region: z.string().regex(REGION, 'an AWS region name, e.g. us-east-1').optional(),
  /** TargetVariant: one production variant of the endpoint. */
  variant: sageMakerName('variant').optional(),
  /** InferenceComponentName: the model deployed on the endpoint as an inference component. */
  inferenceComponentName: z
    .string()
    .max(SAGEMAKER_NAME_MAX, `inferenceComponentName is at most ${SAGEMAKER_NAME_MAX} characters`)
    .regex(
      COMPONENT_NAME,
      'inferenceComponentName: letters, digits and hyphens, starting and ending with a letter or digit',
    )
    .optional(),
  /** TargetContainerHostname: one container of a multi-container endpoint. */
  containerHostname: sageMakerName('containerHostname').optional(),
  /** CustomAttributes, passed to the model as given. */
  customAttributes: z.string().max(CUSTOM_ATTRIBUTES_MAX).regex(ASCII, 'customAttributes must be ASCII').optional(),
});

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A replay target: `kind` is `http` (the default, when absent) or `sagemaker`. */
export const targetConfigSchema = z.preprocess(
  (v) => (isPlainObject(v) && v.kind === undefined ? { ...v, kind: 'http' } : v),
  z.discriminatedUnion('kind', [httpTargetConfigSchema, sageMakerTargetConfigSchema]),
);
export type HttpTargetConfig = z.infer<typeof httpTargetConfigSchema>;
export type SageMakerTargetConfig = z.infer<typeof sageMakerTargetConfigSchema>;
export type TargetConfig = HttpTargetConfig | SageMakerTargetConfig;

/** The plan's compatibility rules for a target (plan.ts rule 6): what it can take. */
export function targetKindOf(t: Pick<TargetConfig, 'kind'>): TargetKind {
  return t.kind === 'sagemaker' ? 'sagemaker' : 'openai-chat';
}

/** Target names are results folders and message ids: two targets cannot share one. */
export function duplicateTargetNames(targets: readonly { name: string }[]): string[] {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const t of targets) (seen.has(t.name) ? dup : seen).add(t.name);
  return [...dup];
}

/**
 * One target, or two for A/B; names unique. The count is checked after the targets
 * themselves (`when`), so a third target does not hide what is wrong with the first two.
 */
export const targetListSchema = z.array(targetConfigSchema).superRefine(
  (targets, ctx) => {
    if (targets.length === 0) ctx.addIssue({ code: 'custom', message: 'give one target, or two for A/B' });
    if (targets.length > 2)
      ctx.addIssue({ code: 'custom', message: `at most two targets (one, or two for A/B), got ${targets.length}` });
    for (const name of duplicateTargetNames(targets.filter(isPlainObject) as { name: string }[]))
      ctx.addIssue({ code: 'custom', message: `target name "${name}" is used twice` });
  },
  { when: () => true },
);

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);

/** A variable holding JSON (the CDK writes it with JSON.stringify): parsed, or one issue saying it is not JSON. */
const jsonText = z.string().transform((text, ctx) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'not JSON' });
    return z.NEVER;
  }
});

export const runtimeConfigSchema = z
  .object({
    [ENV.resultsBucket]: z.string().min(3),
    [ENV.replayQueueUrl]: z.url(),
    [ENV.collectQueueUrl]: z.url(),
    [ENV.targets]: jsonText.pipe(targetListSchema),
    [ENV.mode]: z.enum(['file', 'mirror']).default('file'),
    [ENV.lagMs]: int(0).default(900_000),
    [ENV.leadMs]: int(0, 600_000).default(20_000),
    [ENV.graceMs]: int(0).default(120_000),
    [ENV.slotMs]: int(100, 300_000).default(1000),
    [ENV.maxShardRequests]: int(1, 1_000_000).optional(),
    [ENV.timeScale]: z.coerce.number().pipe(planNumber('timeScale')).default(1),
    [ENV.amplify]: z.coerce.number().pipe(planNumber('amplify')).default(1),
    [ENV.intraSecond]: planIntraSecond().default('spread'),
    [ENV.forceStreaming]: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    [ENV.modelOverride]: planModelOverride().optional(),
    [ENV.requestTimeoutMs]: int(1).default(600_000),
    [ENV.maxInFlight]: int(1).optional(),
    [ENV.maxConnectionsPerTarget]: int(1, 1000).optional(),
    [ENV.fireTimeoutMs]: int(1000, 900_000).default(900_000),
    [ENV.lateToleranceMs]: int(0).default(5_000),
    [ENV.latePolicy]: z.enum(['fire', 'drop']).default('fire'),
    [ENV.s3ForcePathStyle]: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    [ENV.schedules]: z.string().default('[]').pipe(jsonText).pipe(z.array(scheduleConfigSchema)),
    [ENV.captureBucket]: z.string().min(3).optional(),
    [ENV.capturePrefix]: z.string().default(''),
    [ENV.notifyTopicArn]: z
      .string()
      .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]{1,256}$/, 'an SNS topic ARN')
      .optional(),
    [ENV.autoReplayTargets]: jsonText.pipe(z.array(TARGET_NAME).min(1)).optional(),
    [ENV.secretsMaxAgeSeconds]: int(0, 3600).optional(),
    [ENV.fireConcurrency]: int(1, 10_000).optional(),
    [ENV.fireConcurrencySetting]: z
      .enum(['peakRequestsPerSecond', 'maxFireConcurrency'])
      .default('peakRequestsPerSecond'),
    [ENV.stackName]: z.string().min(1).optional(),
    [ENV.metricsNamespace]: z
      .string()
      .regex(METRICS_NAMESPACE, 'a CloudWatch namespace: 1-255 letters, digits and . _ - / # :, not AWS/')
      .default(DEFAULT_METRICS_NAMESPACE),
  })
  .superRefine((c, ctx) => {
    const names = c[ENV.targets].map((t) => t.name);
    for (const name of c[ENV.autoReplayTargets] ?? []) {
      if (!names.includes(name))
        ctx.addIssue({
          code: 'custom',
          path: [ENV.autoReplayTargets],
          message: `"${name}" is not one of the targets (${names.join(', ')})`,
        });
    }
  });

export interface RuntimeConfig {
  resultsBucket: string;
  replayQueueUrl: string;
  collectQueueUrl: string;
  targets: TargetConfig[];
  mode: 'file' | 'mirror';
  lagMs: number;
  leadMs: number;
  graceMs: number;
  slotMs: number;
  maxShardRequests: number | undefined;
  timeScale: number;
  /** File and mirror modes: each capture file replayed at this factor of its traffic. */
  amplify: number;
  intraSecond: 'spread' | 'burst';
  forceStreaming: boolean;
  modelOverride: string | undefined;
  requestTimeoutMs: number;
  maxInFlight: number | undefined;
  maxConnectionsPerTarget: number | undefined;
  fireTimeoutMs: number;
  latePolicy: { toleranceMs: number; action: 'fire' | 'drop' };
  s3ForcePathStyle: boolean;
  schedules: ScheduleConfig[];
  captureBucket: string | undefined;
  capturePrefix: string;
  notifyTopicArn: string | undefined;
  /** The targets new capture files replay to; undefined: every target. */
  autoReplayTargets: string[] | undefined;
  secretsMaxAgeSeconds: number | undefined;
  /** What the fire function may run at once; undefined: not told (runs are not weighed against it). */
  fireConcurrency: { concurrency: number; setting: CapacitySetting } | undefined;
  stackName: string | undefined;
  /** The namespace of the metrics the functions write (core/metrics/cloudwatch.ts). */
  metricsNamespace: string;
}

/** Parses the environment; throws one error listing every problem. */
export function parseRuntimeConfig(env: Record<string, string | undefined>): RuntimeConfig {
  const result = runtimeConfigSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`);
    throw new Error(`invalid configuration:\n- ${problems.join('\n- ')}`);
  }
  const c = result.data;
  const fireConcurrency = c[ENV.fireConcurrency];
  return {
    resultsBucket: c[ENV.resultsBucket],
    replayQueueUrl: c[ENV.replayQueueUrl],
    collectQueueUrl: c[ENV.collectQueueUrl],
    targets: c[ENV.targets],
    mode: c[ENV.mode],
    lagMs: c[ENV.lagMs],
    leadMs: c[ENV.leadMs],
    graceMs: c[ENV.graceMs],
    slotMs: c[ENV.slotMs],
    maxShardRequests: c[ENV.maxShardRequests],
    timeScale: c[ENV.timeScale],
    amplify: c[ENV.amplify],
    intraSecond: c[ENV.intraSecond],
    forceStreaming: c[ENV.forceStreaming],
    modelOverride: c[ENV.modelOverride],
    requestTimeoutMs: c[ENV.requestTimeoutMs],
    maxInFlight: c[ENV.maxInFlight],
    maxConnectionsPerTarget: c[ENV.maxConnectionsPerTarget],
    fireTimeoutMs: c[ENV.fireTimeoutMs],
    latePolicy: { toleranceMs: c[ENV.lateToleranceMs], action: c[ENV.latePolicy] },
    s3ForcePathStyle: c[ENV.s3ForcePathStyle],
    schedules: c[ENV.schedules],
    captureBucket: c[ENV.captureBucket],
    capturePrefix: c[ENV.capturePrefix],
    notifyTopicArn: c[ENV.notifyTopicArn],
    autoReplayTargets: c[ENV.autoReplayTargets],
    secretsMaxAgeSeconds: c[ENV.secretsMaxAgeSeconds],
    fireConcurrency:
      fireConcurrency === undefined
        ? undefined
        : { concurrency: fireConcurrency, setting: c[ENV.fireConcurrencySetting] },
    stackName: c[ENV.stackName],
    metricsNamespace: c[ENV.metricsNamespace],
  };
}
