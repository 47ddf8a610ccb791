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
import { REGION } from '../lambdas/adapters/sagemaker/target-spec';
import { ConfigurationError } from '../lambdas/core/errors';
import { DEFAULT_METRICS_NAMESPACE, METRICS_NAMESPACE } from '../lambdas/core/metrics/cloudwatch';
import { planIntraSecond, planModelOverride, planNumber } from '../lambdas/core/plan/plan-option-schema';
import { scheduleConfigSchema } from '../lambdas/core/scheduled-runs/contract';
import { didYouMean } from '../lambdas/core/suggest';
import {
  httpTargetConfigSchema,
  KMS_KEY_ARN,
  sageMakerTargetConfigSchema,
  targetListSchema,
} from '../lambdas/runtime/config';
import { DEFAULT_ACCOUNT_CONCURRENCY } from './concurrency';
import { deploymentProblems } from './deployment-rules';
import { DEFAULT_STREAM_TOKENS_PER_SECOND, derivedSlotSeconds } from './sizing';
import { targetCredentialProblems } from './target-credentials';
import type { DeployEnvironment } from './placement';

export const PLACEHOLDER_BUCKET = 'example-capture-bucket';
export const PLACEHOLDER_URL = 'https://inference.example.com';

const vpcSchema = z.strictObject({
  vpcId: z.string(),
  subnetIds: z.array(z.string()).min(1),
  securityGroupIds: z.array(z.string()).min(1),
  availabilityZones: z.array(z.string()).min(1),
});

/**
 * A standard SNS topic's ARN (the runtime's NOTIFY_TOPIC_ARN rule, lambdas/runtime/config.ts):
 * FIFO topics (`.fifo`) are refused, they take no email subscriptions and need a message group.
 */
const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]{1,256}$/;

/**
 * Where scheduled runs' summaries go. With `topicArn`, that existing topic (the functions get
 * sns:Publish on it; a topic encrypted with a customer managed key must also let them use the
 * key). Without it, the stack creates an encrypted topic, `emails` subscribed to it (each
 * address confirms by the link SNS sends).
 */
const notifySchema = z.strictObject({
  topicArn: z
    .string()
    .regex(SNS_TOPIC_ARN, 'an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>), not a FIFO topic')
    .optional(),
  emails: z.array(z.email('an email address')).min(1).optional(),
});

/**
 * Where CloudWatch alarms go (every alarm of the stack): an existing topic by ARN (it must let
 * cloudwatch.amazonaws.com publish, and its key, if any, must be a customer managed key that
 * lets CloudWatch use it), or emails subscribed to a topic the stack creates.
 */
const alarmsSchema = z.strictObject({
  topicArn: z
    .string()
    .regex(SNS_TOPIC_ARN, 'an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>), not a FIFO topic')
    .optional(),
  emails: z.array(z.email('an email address')).min(1).optional(),
});

/**
 * Which new capture files are replayed as they land: `true`, every one to every target;
 * `false`, none (no notification, no ingest trigger: scheduled runs only);
 * `{ "targets": [...] }`, every one to those targets only (schedules keep theirs).
 */
const autoReplaySchema = z.union([
  z.boolean(),
  z.strictObject({ targets: z.array(z.string()).min(1, 'name at least one target') }),
]);

/**
 * A CloudFormation stack name: letters, digits and hyphens, starting with a letter, at most 128.
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_CreateStack.html
 */
export const STACK_NAME = /^[A-Za-z][A-Za-z0-9-]{0,127}$/;

/**
 * A number setting and its range, said in one line whatever is wrong with it: not a number, a
 * fraction where a whole number goes, or outside the range (zod's own checks would say two
 * lines for 1e308, one of them about 9007199254740991). Whole numbers are safe integers: the
 * functions read them back from their environment as such. Every number the sizing reads
 * (lib/sizing.ts) is bounded here: its loops and grids grow with them.
 */
interface NumberRange {
  min: number;
  max: number;
  /** A whole number. */
  int?: boolean;
  /** `min` itself excluded. */
  above?: boolean;
  /** Why, said after the range. */
  why?: string;
}

function rangeText(r: NumberRange): string {
  const low = r.above ? `above ${r.min}` : `from ${r.min}`;
  return `${r.int ? 'a whole number' : 'a number'} ${low} ${r.above ? 'and at most' : 'to'} ${r.max}`;
}

/** The value as the user wrote it, cut short: a number setting never holds much worth echoing. */
function shownValue(v: unknown): string {
  const text = typeof v === 'number' ? String(v) : (JSON.stringify(v) ?? String(v));
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

function ranged(r: NumberRange) {
  const said = (v: unknown) => `must be ${rangeText(r)} (got ${shownValue(v)})${r.why ? `: ${r.why}` : ''}`;
  return z.number({ error: (issue) => said(issue.input) }).superRefine((n, ctx) => {
    const inRange = (r.above ? n > r.min : n >= r.min) && n <= r.max && (!r.int || Number.isSafeInteger(n));
    if (!inRange) ctx.addIssue({ code: 'custom', message: said(n) });
  });
}

/** The keys a window may have, for "did you mean" (the two forms of captureWindowSchema). */
const WINDOW_KEYS = ['lastHours', 'daysAgo', 'from', 'to'] as const;

export const deploymentConfigSchema = z.strictObject({
  /** The CloudFormation stack's name: one stack per endpoint in an account and Region. */
  stackName: z
    .string()
    .regex(STACK_NAME, 'a CloudFormation stack name: letters, digits and hyphens, starting with a letter, at most 128')
    .default('CaptureReplay'),
  /** Existing bucket where SageMaker Data Capture writes (imported by name, read-only). */
  captureBucket: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name')
    .default(PLACEHOLDER_BUCKET),
  /** Prefix of the captures, e.g. `datacapture/my-endpoint/` (empty: the whole bucket). */
  capturePrefix: z.string().default('datacapture/'),
  /**
   * KMS key of the capture bucket, when it is encrypted with a customer key: a key ARN, not
   * an alias (grants name keys; an alias grant does not cover the key).
   */
  captureKmsKeyArn: z
    .string()
    .regex(KMS_KEY_ARN, 'a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>), not an alias')
    .optional(),
  /**
   * The capture bucket's Region, when known: synth refuses a stack in another Region (the
   * deploy checks the bucket's actual Region in any case).
   */
  captureBucketRegion: z.string().regex(REGION, 'an AWS region name, e.g. us-east-1').optional(),
  /**
   * Account that owns the capture bucket (the queue policy's aws:SourceAccount); default: the
   * stack's. Another account needs EventBridge notifications and the owner's part of the setup
   * (the stack outputs it).
   */
  captureBucketAccount: z
    .string()
    .regex(/^\d{12}$/, 'a 12-digit AWS account id')
    .optional(),
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
   * (a CSV record goes to a SageMaker target; an HTTP target counts it as dropped). A URL
   * holding a password or a token, and an API key where its secret's name goes, are refused:
   * the template would show them in clear.
   */
  targets: targetListSchema
    .superRefine(
      (targets, ctx) => {
        // No password or token in the template: lib/target-credentials.ts.
        for (const p of targetCredentialProblems(targets))
          ctx.addIssue({ code: 'custom', path: p.path, message: p.message });
      },
      { when: () => true },
    )
    .default([{ name: 'target', kind: 'http', url: PLACEHOLDER_URL, path: '/v1/chat/completions' }]),
  /**
   * `file`: each new capture file is its own run, starting `leadSeconds` after it lands.
   * `mirror`: each request is replayed at its inferenceTime + `lagSeconds`; results per file
   * and rolled up per capture hour.
   */
  mode: z.enum(['file', 'mirror']).default('file'),
  lagSeconds: ranged({ min: 60, max: 86_400, int: true }).default(900),
  leadSeconds: ranged({ min: 5, max: 300, int: true }).default(20),
  graceSeconds: ranged({ min: 10, max: 3600, int: true }).default(120),
  /**
   * Due-time window one shard message (and one fire invocation, one lane of it) covers. Longer
   * slots put more requests behind each invocation's lead and its slowest response: cheaper.
   * Unset, the sizing derives it (lib/sizing.ts: up to 120 s).
   */
  slotSeconds: ranged({ min: 0.1, max: 300 }).optional(),
  forceStreaming: z.boolean().default(true),
  modelOverride: planModelOverride().optional(),
  timeScale: planNumber('timeScale').default(1),
  /**
   * File and mirror modes: each capture file replayed at this factor of its traffic (above 1,
   * copies of each request spread through the gaps to the next, lambdas/core/plan/amplify.ts;
   * below 1, a sample). Schedules take their own (`schedules[].amplify`).
   */
  amplify: planNumber('amplify').default(1),
  intraSecond: planIntraSecond().default('spread'),
  requestTimeoutSeconds: ranged({ min: 1, max: 600, int: true }).default(300),
  maxInFlightPerShard: ranged({ min: 1, max: 1_000_000, int: true }).optional(),
  lateToleranceMs: ranged({
    min: 0,
    max: 3_600_000,
    int: true,
    why: 'an hour; graceSeconds drops later requests anyway',
  }).default(5000),
  latePolicy: z.enum(['fire', 'drop']).default('fire'),
  /**
   * The busiest captured traffic to replay, requests per second per target (after timeScale,
   * before amplify): times the largest amplify of the deployment's runs, it sets the fire
   * function's memory, batch size, concurrency and timeout (lib/sizing.ts).
   */
  peakRequestsPerSecond: ranged({ min: 0, above: true, max: 10_000 }).default(50),
  /** How long one request lasts at peak (an LLM stream, to its last byte): the 99th percentile, seconds. */
  peakLatencySeconds: ranged({ min: 0, above: true, max: 600 }).default(30),
  /** The same, median: with the 99th percentile, the response times the fire function is sized for. */
  peakLatencyMedianSeconds: ranged({ min: 0, above: true, max: 600 }).default(2),
  /**
   * Tokens a second one streamed answer arrives at (per request, not the endpoint's total): the
   * fire function's CPU, hence its memory, grows with it (lib/sizing.ts FIRE_CPU_MS).
   */
  streamTokensPerSecond: ranged({ min: 0, above: true, max: 2000 }).default(DEFAULT_STREAM_TOKENS_PER_SECOND),
  /** Overrides the derived maximum fire concurrency. */
  maxFireConcurrency: ranged({ min: 2, max: 1000, int: true }).optional(),
  /**
   * Reserve the fire function's concurrency (= its maximum concurrency) so other functions
   * in the account cannot starve it. Needs that much unreserved concurrency in the account.
   */
  reserveFireConcurrency: z.boolean().default(true),
  /** The account's Lambda concurrency quota in the stack's Region (Service Quotas: "Concurrent executions"). */
  accountConcurrency: ranged({ min: 1, max: 1_000_000, int: true }).default(DEFAULT_ACCOUNT_CONCURRENCY),
  /** Replay new capture files as they land: all (true), none (false), or to some targets. */
  autoReplay: autoReplaySchema.default(true),
  /** How long the fire function keeps a target's API key before reading the secret again, seconds. */
  secretsMaxAgeSeconds: ranged({ min: 0, max: 3600, int: true }).default(300),
  /** Working files (run records, claims, shard results, referenced bodies) expire after this many days. */
  workingFilesExpireDays: ranged({ min: 2, max: 3650, int: true }).default(7),
  /** Results under runs/ and hours/ expire after this many days; kept forever when unset. */
  resultsExpireDays: ranged({ min: 1, max: 36500, int: true }).optional(),
  logRetentionDays: ranged({
    min: 1,
    max: 3653,
    int: true,
    why: 'ten years, the longest CloudWatch Logs keeps',
  }).default(30),
  /** Private endpoints: run the fire function in these subnets with these security groups. */
  vpc: vpcSchema.optional(),
  /**
   * Scheduled A/B comparisons (lambdas/core/scheduled-runs/contract.ts): each an EventBridge
   * Scheduler schedule that replays a window of captured traffic against two targets.
   */
  schedules: z.array(scheduleConfigSchema).default([]),
  /** Scheduled runs' summaries by SNS; none sent without it. */
  notify: notifySchema.optional(),
  /** Where the alarms notify; without it, the notify topic (with schedules), else no action. */
  alarms: alarmsSchema.optional(),
  /**
   * The CloudWatch namespace of the runs' metrics (lambdas/core/metrics/cloudwatch.ts), which
   * the collector, ingest and plan functions write as EMF and the dashboard and alarms read.
   */
  metricsNamespace: z
    .string()
    .regex(METRICS_NAMESPACE, 'a CloudWatch namespace: 1-255 letters, digits and . _ - / # :, not starting with AWS/')
    .default(DEFAULT_METRICS_NAMESPACE),
  /** A CloudWatch dashboard of the runs' metrics beside the endpoints' own (lib/dashboard.ts); its URL is the DashboardUrl output. */
  dashboard: z.boolean().default(true),
});
export type DeploymentConfig = z.infer<typeof deploymentConfigSchema>;

/** A fire invocation waits the lead, fires a slot, and waits for the slowest response: all within Lambda's 15 minutes. */
export const FIRE_BUDGET_SECONDS = 840;

/** The schema with its cross-setting rules, for a stack deploying to `env` (what synth knows of it). */
const checkedSchema = (env: DeployEnvironment) =>
  deploymentConfigSchema.superRefine((c, ctx) => {
    // The rules that weigh numbers against each other, and the sizing (lib/sizing.ts), run on
    // settings the schema took only: zod runs this refinement after a setting out of its range
    // too, and on leadSeconds 1e308 or slotSeconds 1e-300 the sizing's loops would not end. They
    // wait for the settings' own problems to be fixed.
    const settingsValid = ctx.issues.length === 0;
    if (settingsValid) {
      if (c.mode === 'mirror' && c.lagSeconds < c.leadSeconds + 60) {
        ctx.addIssue({
          code: 'custom',
          path: ['lagSeconds'],
          message: `mirror mode needs lagSeconds >= leadSeconds + 60 (files land minutes after their captures)`,
        });
      }
      if (c.peakLatencyMedianSeconds > c.peakLatencySeconds) {
        ctx.addIssue({
          code: 'custom',
          path: ['peakLatencyMedianSeconds'],
          message:
            `the median (${c.peakLatencyMedianSeconds} s) is above the 99th percentile peakLatencySeconds ` +
            `(${c.peakLatencySeconds} s)`,
        });
      }
      const total =
        c.leadSeconds +
        (c.slotSeconds ?? derivedSlotSeconds(c.leadSeconds, c.requestTimeoutSeconds)) +
        c.requestTimeoutSeconds;
      if (total > FIRE_BUDGET_SECONDS) {
        ctx.addIssue({
          code: 'custom',
          path: ['requestTimeoutSeconds'],
          message:
            `leadSeconds + slotSeconds + requestTimeoutSeconds = ${total} s: at most ${FIRE_BUDGET_SECONDS} s ` +
            'fit in one fire invocation',
        });
      }
    }
    scheduleProblems(c, ctx);
    for (const p of deploymentProblems(c, env, { sizing: settingsValid }))
      ctx.addIssue({ code: 'custom', path: p.path, message: p.message });
  });

/** A timezone EventBridge Scheduler and the plan function both take, or what is wrong with it. */
export function timezoneProblem(zone: string): string | null {
  const notIana = `"${zone}" is not an IANA timezone (e.g. UTC, Europe/Paris, America/New_York)`;
  // Node 22's Intl (V8 12.4, ECMA-402's offset time zones) also takes a UTC offset, "+02:00",
  // "-0530" or "+02", where Node 20's threw; EventBridge Scheduler takes IANA names only, and no
  // IANA name starts with a sign.
  if (/^[+-]/.test(zone.trim())) return notIana;
  let resolved: string;
  try {
    // Throws a RangeError on a name that is not in the IANA database (the same database the plan function's windows use).
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return notIana;
  }
  // Intl ignores case; the Scheduler's names are written as the database writes them.
  if (resolved !== zone && resolved.toLowerCase() === zone.toLowerCase()) return `"${zone}" is written "${resolved}"`;
  return null;
}

/**
 * What the schedules and targets may take of the plan function's 4 KB environment (the rest takes under 800 bytes:
 * test/infra/schedules.test.ts).
 */
export const PLAN_ENV_BUDGET_BYTES = 3000;

/** Cross-field rules of schedules and notify: each problem at the path it concerns. */
function scheduleProblems(c: z.output<typeof deploymentConfigSchema>, ctx: z.RefinementCtx): void {
  const targetNames = c.targets.map((t) => t.name);
  const seen = new Set<string>();
  c.schedules.forEach((s, i) => {
    if (seen.has(s.name))
      ctx.addIssue({
        code: 'custom',
        path: ['schedules', i, 'name'],
        message: `schedule name "${s.name}" is used twice`,
      });
    seen.add(s.name);
    // An empty one is the schedule schema's own problem (contract.ts): said once.
    const zone = s.timezone === '' ? null : timezoneProblem(s.timezone);
    if (zone) ctx.addIssue({ code: 'custom', path: ['schedules', i, 'timezone'], message: zone });
    const named = new Set<string>();
    s.targets.forEach((t, j) => {
      if (!targetNames.includes(t)) {
        ctx.addIssue({
          code: 'custom',
          path: ['schedules', i, 'targets', j],
          message: `"${t}" is not a configured target (${targetNames.map((n) => `"${n}"`).join(', ')})${didYouMean(t, targetNames)}`,
        });
      } else if (named.has(t)) {
        ctx.addIssue({
          code: 'custom',
          path: ['schedules', i, 'targets', j],
          message: `target "${t}" is named twice: a comparison needs two different targets`,
        });
      }
      named.add(t);
    });
  });
  // The plan function carries the schedules and the targets in its environment, and Lambda
  // takes at most 4 KB of environment in all: under 800 bytes go to the other variables (names,
  // queue URLs, bucket), so a deploy would fail past this with an error far from its cause.
  const envBytes = Buffer.byteLength(JSON.stringify(c.schedules)) + Buffer.byteLength(JSON.stringify(c.targets));
  if (c.schedules.length > 0 && envBytes > PLAN_ENV_BUDGET_BYTES) {
    ctx.addIssue({
      code: 'custom',
      path: ['schedules'],
      message:
        `the schedules and targets take ${envBytes} bytes of the plan function's environment, at most ` +
        `${PLAN_ENV_BUDGET_BYTES} fit in Lambda's 4 KB: fewer or shorter schedules`,
    });
  }
  if (c.notify && c.schedules.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['notify'],
      message: 'notify is for scheduled runs: declare schedules, or remove notify',
    });
  }
  if (c.notify?.topicArn && c.notify.emails) {
    ctx.addIssue({
      code: 'custom',
      path: ['notify', 'emails'],
      message:
        'emails are subscribed to the topic the stack creates; with topicArn, subscribe them to that topic yourself',
    });
  }
}

/**
 * What is wrong with the configuration the user wrote: every problem, one a line. The CDK app
 * prints the message alone (no stack trace) and exits 1.
 */
export class DeploymentConfigError extends ConfigurationError {
  override readonly name: string = 'DeploymentConfigError';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The keys the object at `path` may have, for "did you mean": a target's depend on its kind. */
function knownKeysAt(path: readonly PropertyKey[], raw: unknown): readonly string[] {
  if (path.length === 0) return Object.keys(deploymentConfigSchema.shape);
  if (path.length === 1 && path[0] === 'vpc') return Object.keys(vpcSchema.shape);
  if (path.length === 1 && path[0] === 'notify') return Object.keys(notifySchema.shape);
  if (path.length === 1 && path[0] === 'alarms') return Object.keys(alarmsSchema.shape);
  if (path.length === 1 && path[0] === 'autoReplay') return ['targets'];
  if (path.length === 2 && path[0] === 'schedules') return Object.keys(scheduleConfigSchema.shape);
  if (path.length === 2 && path[0] === 'targets' && isRecord(raw) && Array.isArray(raw.targets)) {
    const target: unknown = raw.targets[path[1] as number];
    return isRecord(target) && target.kind === 'sagemaker'
      ? Object.keys(sageMakerTargetConfigSchema.shape)
      : Object.keys(httpTargetConfigSchema.shape);
  }
  return [];
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const key of path)
    value = typeof value === 'object' && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

/** `targets.0.url`, as zod and the runtime configuration write paths. */
function pathText(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

/** One line per problem; an unknown key gets the known key it probably is. */
export function describeConfigProblems(
  issues: readonly z.core.$ZodIssue[],
  raw: unknown,
  prefix = 'captureReplay.',
): string[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map(
        (key) =>
          `${prefix}${pathText([...issue.path, key])}: unknown setting${didYouMean(key, knownKeysAt(issue.path, raw))}`,
      );
    }
    if (
      issue.code === 'invalid_union' &&
      issue.path.length === 3 &&
      issue.path[0] === 'schedules' &&
      issue.path[2] === 'window'
    )
      return windowProblems(issue, raw, prefix);
    if (issue.code === 'invalid_union' && (issue as { discriminator?: string }).discriminator === 'kind') {
      const kind = valueAt(raw, issue.path);
      const got =
        kind === undefined ? '' : ` (got ${JSON.stringify(kind)}${didYouMean(String(kind), ['http', 'sagemaker'])})`;
      return [`${prefix}${pathText(issue.path)}: must be "http" (the default) or "sagemaker"${got}`];
    }
    return [`${prefix}${pathText(issue.path)}: ${issue.message}`];
  });
}

/**
 * A window that matches neither form: zod says only "Invalid input". Say which keys are
 * unknown (with the one probably meant), and what is wrong within the form the keys point to.
 */
function windowProblems(issue: z.core.$ZodIssueInvalidUnion, raw: unknown, prefix: string): string[] {
  const at = `${prefix}${pathText(issue.path)}`;
  const value = valueAt(raw, issue.path);
  if (!isRecord(value))
    return [`${at}: either { "lastHours": 1-168 } or { "daysAgo": 0-31, "from": "HH:MM", "to": "HH:MM" }`];
  const lines = Object.keys(value)
    .filter((k) => !(WINDOW_KEYS as readonly string[]).includes(k))
    .map((k) => `${at}.${k}: unknown setting${didYouMean(k, WINDOW_KEYS)}`);
  const branch =
    'lastHours' in value
      ? issue.errors[0]
      : 'daysAgo' in value || 'from' in value || 'to' in value
        ? issue.errors[1]
        : undefined;
  const within = (branch ?? [])
    .filter((i) => i.code !== 'unrecognized_keys')
    .map((i) => `${at}${i.path.length ? `.${pathText(i.path)}` : ''}: ${i.message}`);
  if (within.length > 0 || branch === undefined || lines.length === 0) {
    lines.push(
      ...(within.length > 0
        ? within
        : [`${at}: either { "lastHours": 1-168 } or { "daysAgo": 0-31, "from": "HH:MM", "to": "HH:MM" }`]),
    );
  }
  return lines;
}

/**
 * The configuration, or a DeploymentConfigError listing every problem. `env`: the Region and
 * account the stack deploys to, when known, for the rules that depend on them.
 */
export function parseDeploymentConfig(
  raw: unknown,
  source = 'captureReplay',
  env: DeployEnvironment = {},
): DeploymentConfig {
  const where = source === 'captureReplay' ? '' : ` in ${source}`;
  // Absent: the defaults. Anything else that is not an object of settings (a file holding
  // `null`, a list) is a mistake, not a request for the defaults.
  if (raw !== undefined && !isRecord(raw)) {
    const held = raw === null ? 'null' : Array.isArray(raw) ? 'a list' : `a ${typeof raw}`;
    throw new DeploymentConfigError(
      `invalid deployment configuration${where}: it holds ${held}, not an object of settings: write them as ` +
        '{"captureBucket": "...", "targets": [...]} (docs/deploy.md#configuration)',
    );
  }
  const result = checkedSchema(env).safeParse(raw ?? {});
  if (!result.success) {
    const prefix = source === 'captureReplay' ? 'captureReplay.' : '';
    const problems = describeConfigProblems(result.error.issues, raw, prefix);
    throw new DeploymentConfigError(`invalid deployment configuration${where}:\n- ${problems.join('\n- ')}`);
  }
  return result.data;
}

/**
 * Refuses a configuration, already valid on its own, that cannot deploy to `env` (the stack's
 * Region and account, when known), with the same one-line problems parseDeploymentConfig gives.
 */
export function assertDeployable(config: DeploymentConfig, env: DeployEnvironment): void {
  const problems = deploymentProblems(config, env);
  if (problems.length === 0) return;
  throw new DeploymentConfigError(
    `invalid deployment configuration:\n- ${problems.map((p) => `captureReplay.${p.path.join('.')}: ${p.message}`).join('\n- ')}`,
  );
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new DeploymentConfigError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
}

/** From CDK context: `captureReplay` (an object), or `configFile` (a JSON file path). */
export function loadDeploymentConfig(context: (key: string) => unknown, env: DeployEnvironment = {}): DeploymentConfig {
  const file = context('configFile');
  if (typeof file === 'string') {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new DeploymentConfigError(`cannot read configFile ${file}: ${(error as Error).message}`);
    }
    return parseDeploymentConfig(parseJson(text, `configFile ${file}`), `configFile ${file}`, env);
  }
  const inline = context('captureReplay');
  return parseDeploymentConfig(
    typeof inline === 'string' ? parseJson(inline, 'the captureReplay context value') : inline,
    'captureReplay',
    env,
  );
}

/** Settings still at their placeholders: `cdk deploy` must not go out with these. */
export function placeholdersIn(config: DeploymentConfig): string[] {
  const found: string[] = [];
  if (config.captureBucket === PLACEHOLDER_BUCKET) found.push('captureBucket');
  if (config.targets.some((t) => t.kind === 'http' && t.url === PLACEHOLDER_URL)) found.push('targets[].url');
  return found;
}
