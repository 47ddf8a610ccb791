/**
 * The deployed stack's outputs, as the commands that work on a deployment (`verify-deploy`,
 * `link`) read them: from CloudFormation (DescribeStacks on the stack name), or from the file
 * `cdk deploy --outputs-file` writes (`{ "<stack name>": { "<output>": "<value>" } }`,
 * https://www.npmjs.com/package/aws-cdk, "--outputs-file"), which needs no AWS call.
 *
 * Credentials and region come from the AWS SDK's default chain, as the AWS CLI finds them
 * (AWS_PROFILE, AWS_REGION, ~/.aws/config, SSO, instance roles); `--region` overrides.
 */
import {
  CloudFormationClient,
  DescribeStacksCommand,
  paginateListStackResources,
} from '@aws-sdk/client-cloudformation';
import { readFile } from 'node:fs/promises';
import { CommandProblem } from '../core/errors';
import { describeAwsError } from './aws-problem';
import { regionConfig } from './aws-region';

/** The stack name when the deployment config names none (lib/config.ts `stackName`). */
export const DEFAULT_STACK = 'CaptureReplay';

/** The outputs the commands may read, as lib/capture-replay-stack.ts names them. */
export const OUTPUT_NAMES = [
  'ResultsBucketName',
  'CaptureBucketName',
  'CapturePrefix',
  'IngestQueueUrl',
  'ReplayQueueUrl',
  'CollectQueueUrl',
  'ReplayDlqUrl',
  'PlanQueueUrl',
  'SchedulerDlqUrl',
  'NotifyTopicArn',
  'AlarmTopicArn',
  'IngestRoleArn',
  'FireRoleArn',
  'CollectRoleArn',
  'PlanRoleArn',
  'AutoReplay',
  'DashboardUrl',
] as const;
export type OutputName = (typeof OUTPUT_NAMES)[number];

export interface StackOutputs {
  stack: string;
  /** Where the outputs were read: `stack <name> (<region>)` or the file's path. */
  source: string;
  /** The region the stack's resources are in, when known (the region asked, or one named in the outputs). */
  region: string | undefined;
  /** True when read from CloudFormation (its resources, e.g. log groups, can then be looked up). */
  fromCloudFormation: boolean;
  values: Partial<Record<OutputName, string>>;
}

/** Where to read the outputs: a stack in CloudFormation, or a `cdk deploy --outputs-file` file. */
export interface OutputsSource {
  stack?: string | undefined;
  outputsFile?: string | undefined;
  region?: string | undefined;
}

const pick = (all: Record<string, string>): Partial<Record<OutputName, string>> =>
  Object.fromEntries(Object.entries(all).filter(([k]) => (OUTPUT_NAMES as readonly string[]).includes(k))) as Partial<
    Record<OutputName, string>
  >;

/**
 * The region a stack's outputs name: a queue URL's (`https://sqs.<region>.amazonaws.com/...`)
 * or a topic ARN's. Null when none does (an emulator's URLs).
 */
export function regionOfOutputs(values: Partial<Record<OutputName, string>>): string | null {
  for (const url of [
    values.IngestQueueUrl,
    values.ReplayQueueUrl,
    values.CollectQueueUrl,
    values.ReplayDlqUrl,
    values.PlanQueueUrl,
  ]) {
    const m = url ? /^https:\/\/sqs\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?\//.exec(url) : null;
    if (m) return m[1] as string;
  }
  for (const arn of [values.AlarmTopicArn, values.NotifyTopicArn]) {
    const m = arn ? /^arn:aws[a-z-]*:sns:([a-z0-9-]+):/.exec(arn) : null;
    if (m) return m[1] as string;
  }
  return null;
}

/** The stack's outputs in a `cdk deploy --outputs-file` document, or what is wrong with it. */
export function outputsFromFile(
  text: string,
  path: string,
  stack: string | undefined,
): { stack: string; values: Record<string, string> } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new CommandProblem(
      `${path} is not JSON (${(error as Error).message}): give the file \`cdk deploy --outputs-file\` wrote`,
      { cause: error },
    );
  }
  const isStacks = (v: unknown): v is Record<string, Record<string, unknown>> =>
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.values(v).every((s) => typeof s === 'object' && s !== null && !Array.isArray(s));
  if (!isStacks(doc) || Object.keys(doc).length === 0)
    throw new CommandProblem(
      `${path} is not a \`cdk deploy --outputs-file\` file ({"<stack>": {"<output>": "<value>"}})`,
    );
  const names = Object.keys(doc);
  let chosen = stack;
  if (chosen === undefined) {
    if (names.length > 1)
      throw new CommandProblem(`${path} holds several stacks (${names.join(', ')}): name one with --stack`);
    chosen = names[0] as string;
  }
  const outputs = doc[chosen];
  if (!outputs) throw new CommandProblem(`${path} has no stack ${chosen} (it has ${names.join(', ')})`);
  // An output the commands read that is there but not a string was edited, not left out by an
  // older stack: said as what it is.
  const notText = OUTPUT_NAMES.filter((n) => n in outputs && typeof outputs[n] !== 'string');
  if (notText.length > 0) {
    const shown = notText
      .map((n) => `${n} is ${JSON.stringify(outputs[n])?.slice(0, 40) ?? String(outputs[n])}`)
      .join(', ');
    throw new CommandProblem(
      `${path}: ${shown}, not a string: give the file \`cdk deploy --outputs-file\` wrote, unedited`,
    );
  }
  const values = Object.fromEntries(
    Object.entries(outputs).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  return { stack: chosen, values };
}

/** Statuses in which the stack's resources are those of a finished deploy. */
const USABLE_STATUSES = new Set([
  'CREATE_COMPLETE',
  'UPDATE_COMPLETE',
  'UPDATE_ROLLBACK_COMPLETE',
  'IMPORT_COMPLETE',
  'IMPORT_ROLLBACK_COMPLETE',
]);

/** Why a stack in this status cannot be used yet (or any more); null when it can. */
export function stackStatusProblem(stack: string, status: string | undefined): string | null {
  if (status === undefined || USABLE_STATUSES.has(status)) return null;
  const events = `aws cloudformation describe-stack-events --stack-name ${stack}`;
  if (status.endsWith('_IN_PROGRESS')) return `stack ${stack} is ${status}: wait for the deploy to finish (${events})`;
  return `stack ${stack} is ${status}: its deploy did not succeed; its events say why (${events})`;
}

async function fromCloudFormation(stack: string, region: string | undefined): Promise<StackOutputs> {
  const cfn = new CloudFormationClient(regionConfig(region));
  try {
    const asked = await cfn.config.region().catch(() => undefined);
    const out = await cfn.send(new DescribeStacksCommand({ StackName: stack }));
    const found = out.Stacks?.[0];
    if (!found) throw new CommandProblem(`no stack ${stack} in ${asked ?? 'the default region'}`);
    const status = stackStatusProblem(stack, found.StackStatus);
    if (status) throw new CommandProblem(status);
    const values: Record<string, string> = {};
    for (const o of found.Outputs ?? [])
      if (o.OutputKey && o.OutputValue !== undefined) values[o.OutputKey] = o.OutputValue;
    return {
      stack,
      source: `stack ${stack} (${asked ?? 'default region'})`,
      region: asked,
      fromCloudFormation: true,
      values: pick(values),
    };
  } catch (error) {
    if (error instanceof CommandProblem) throw error;
    const e = error as { name?: string; message?: string };
    // CloudFormation answers a missing stack with a ValidationError "Stack with id X does not exist".
    if (e.name === 'ValidationError' && /does not exist/.test(e.message ?? '')) {
      const where = await cfn.config.region().catch(() => 'the default region');
      throw new CommandProblem(
        `no stack ${stack} in ${where}: give the stack's name (--stack; the deployment config's stackName, ` +
          `default ${DEFAULT_STACK}) and region (--region or AWS_REGION), or --outputs <file cdk deploy ` +
          `--outputs-file wrote>`,
      );
    }
    throw new CommandProblem(
      describeAwsError(error, `read the outputs of stack ${stack} (cloudformation:DescribeStacks)`),
      { cause: error },
    );
  } finally {
    cfn.destroy();
  }
}

/** The outputs, from the file when one is given, else from CloudFormation. */
export async function readStackOutputs(source: OutputsSource): Promise<StackOutputs> {
  if (source.outputsFile !== undefined) {
    let text: string;
    try {
      text = await readFile(source.outputsFile, 'utf8');
    } catch (error) {
      throw new CommandProblem(`cannot read ${source.outputsFile}: ${(error as Error).message}`);
    }
    const { stack, values } = outputsFromFile(text, source.outputsFile, source.stack);
    const picked = pick(values);
    return {
      stack,
      source: source.outputsFile,
      region: source.region ?? regionOfOutputs(picked) ?? undefined,
      fromCloudFormation: false,
      values: picked,
    };
  }
  return fromCloudFormation(source.stack ?? DEFAULT_STACK, source.region);
}

/**
 * The `link` command that opens a run's report later, pointed at the same stack as this one
 * was: the outputs file it read, or the stack's name and region when they are not the defaults.
 */
export function relinkCommand(
  outputs: Pick<StackOutputs, 'stack' | 'source' | 'region' | 'fromCloudFormation'>,
  runId: string,
): string {
  const quote = (v: string) => (/^[\w./:@-]+$/.test(v) ? v : `'${v.replaceAll("'", "'\\''")}'`);
  const where = outputs.fromCloudFormation
    ? `${outputs.stack === DEFAULT_STACK ? '' : ` --stack ${quote(outputs.stack)}`}` +
      `${outputs.region ? ` --region ${quote(outputs.region)}` : ''}`
    : ` --outputs ${quote(outputs.source)}`;
  return `capture-replay link --run ${quote(runId)}${where}`;
}

/** Outputs the command needs that the stack does not have, as one line; null when all are there. */
export function missingOutputs(outputs: StackOutputs, needed: readonly OutputName[]): string | null {
  const missing = needed.filter((n) => outputs.values[n] === undefined);
  if (missing.length === 0) return null;
  return `${outputs.source} has no output ${missing.join(', ')}: it was deployed by an older capture-replay; deploy it again (cdk deploy)`;
}

/** The command that lists a stack's log groups, for when they cannot be looked up. */
export const logGroupsCommand = (stack: string) =>
  `aws cloudformation describe-stack-resources --stack-name ${stack} --query ` +
  `"StackResources[?ResourceType=='AWS::Logs::LogGroup'].[LogicalResourceId,PhysicalResourceId]"`;

/**
 * The functions' log groups (physical names, which CloudFormation generates), found by the
 * logical ids lib/replay-function.ts gives them (`Stateless<Function>Logs...`). Needs
 * cloudformation:ListStackResources; without it, the command that lists them.
 */
export async function stackLogGroups(
  stack: string,
  region: string | undefined,
): Promise<Partial<Record<'ingest' | 'fire' | 'collect', string>> | string> {
  const cfn = new CloudFormationClient(regionConfig(region));
  try {
    const found: Partial<Record<'ingest' | 'fire' | 'collect', string>> = {};
    for await (const page of paginateListStackResources({ client: cfn }, { StackName: stack })) {
      for (const r of page.StackResourceSummaries ?? []) {
        const fn = /(Ingest|Fire|Collect)Logs/.exec(r.LogicalResourceId ?? '')?.[1]?.toLowerCase() as
          | 'ingest'
          | 'fire'
          | 'collect'
          | undefined;
        if (r.ResourceType === 'AWS::Logs::LogGroup' && fn && r.PhysicalResourceId) found[fn] = r.PhysicalResourceId;
      }
    }
    return Object.keys(found).length > 0 ? found : logGroupsCommand(stack);
  } catch {
    return logGroupsCommand(stack);
  } finally {
    cfn.destroy();
  }
}
