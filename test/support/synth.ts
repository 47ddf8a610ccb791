/**
 * The CDK app synthesized as a user's `cdk synth` does it (offline, no AWS credentials, the
 * context in cdk.json, esbuild bundling on this machine) into a temporary directory, and each
 * Lambda function of the template located: the asset directory that `cdk deploy` zips and
 * uploads as its code, its Handler setting and its environment as synthesized.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { REPO_ROOT } from './processes';
import { oncePerRun } from './run-shared';
import { killGroupOnStop } from './kill-on-stop';

interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  [key: string]: unknown;
}

export interface SynthesizedFunction {
  logicalId: string;
  /** Construct path, e.g. `CaptureReplay/Stateless/Ingest/Resource`. */
  path: string;
  /** Absolute path of the directory uploaded as the function's code (the asset the template's S3Key names). */
  assetDir: string;
  /** Lambda's Handler setting, e.g. `index.handler`. */
  handler: string;
  runtime: string;
  architectures: string[];
  memorySize: number | undefined;
  timeoutSeconds: number | undefined;
  /** As synthesized: strings, or CloudFormation expressions (Ref to a bucket, a queue, ...). */
  environment: Record<string, unknown>;
}

export interface SynthesizedApp {
  outdir: string;
  template: CfnTemplate;
  /** Every AWS::Lambda::Function of the stack whose code is a file asset of this app. */
  functions: SynthesizedFunction[];
  /** The one function whose construct path matches; throws when none or several do. */
  fn(pathPattern: RegExp): SynthesizedFunction;
  /** Deletes the temporary output directory. Safe to call twice. */
  cleanup(): void;
}

/** The environment of a user's offline `cdk synth`: no credentials, no account, no version check. */
export function offlineSynthEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, AWS_EC2_METADATA_DISABLED: 'true', CDK_DISABLE_VERSION_CHECK: '1' };
  // CDK_VALIDATION: the test run sets it (vitest.config.ts); a user's shell does not.
  for (const k of [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_PROFILE',
    'CDK_DEFAULT_ACCOUNT',
    'CDK_DEFAULT_REGION',
    'CDK_VALIDATION',
  ])
    delete env[k];
  return env;
}

interface CloudAssemblyManifest {
  artifacts?: Record<string, { type: string; properties?: { templateFile?: string; file?: string } }>;
}

interface AssetManifest {
  files?: Record<
    string,
    { source: { path?: string; packaging?: string }; destinations: Record<string, { objectKey: string }> }
  >;
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/**
 * Reads a synthesized cloud assembly (one stack) and locates each function's code: the
 * template's `Code.S3Key` is looked up in the stack's asset manifest (what `cdk deploy`
 * uploads under that key), and must agree with the function's `aws:asset:path` metadata.
 */
export function readAssembly(outdir: string): Omit<SynthesizedApp, 'cleanup'> {
  const manifest = readJson<CloudAssemblyManifest>(join(outdir, 'manifest.json'));
  const artifacts = Object.entries(manifest.artifacts ?? {});
  const stacks = artifacts.filter(([, a]) => a.type === 'aws:cloudformation:stack');
  if (stacks.length !== 1)
    throw new Error(`expected one stack in ${outdir}, found ${stacks.map(([id]) => id).join(', ') || 'none'}`);
  const [stackId, stack] = stacks[0]!;
  const assetsFile = artifacts.find(([id, a]) => a.type === 'cdk:asset-manifest' && id === `${stackId}.assets`)?.[1]
    .properties?.file;
  if (!stack.properties?.templateFile || !assetsFile)
    throw new Error(`stack ${stackId}: template or asset manifest missing from manifest.json`);
  const template = readJson<CfnTemplate>(join(outdir, stack.properties.templateFile));
  const assets = readJson<AssetManifest>(join(outdir, assetsFile)).files ?? {};

  const functions: SynthesizedFunction[] = [];
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const props = resource.Properties ?? {};
    const s3Key = (props.Code as { S3Key?: unknown } | undefined)?.S3Key;
    if (typeof s3Key !== 'string') continue; // inline code (e.g. CDK's own notification handler): not an asset of ours
    const uploaded = Object.values(assets).filter((f) =>
      Object.values(f.destinations).some((d) => d.objectKey === s3Key),
    );
    const source = uploaded.length === 1 ? uploaded[0]!.source : undefined;
    if (!source?.path)
      throw new Error(`${logicalId}: S3Key ${s3Key} matches ${uploaded.length} file assets in ${assetsFile}`);
    if (source.packaging !== 'zip')
      throw new Error(`${logicalId}: asset ${source.path} is packaged as ${source.packaging}, not a zipped directory`);
    const metadataPath = resource.Metadata?.['aws:asset:path'];
    if (metadataPath !== source.path)
      throw new Error(
        `${logicalId}: aws:asset:path ${String(metadataPath)} disagrees with the uploaded asset ${source.path}`,
      );
    const assetDir = resolve(outdir, source.path);
    if (!existsSync(assetDir) || !statSync(assetDir).isDirectory())
      throw new Error(`${logicalId}: asset directory ${assetDir} is missing`);
    functions.push({
      logicalId,
      path: String(resource.Metadata?.['aws:cdk:path'] ?? logicalId),
      assetDir,
      handler: String(props.Handler),
      runtime: String(props.Runtime),
      architectures: (props.Architectures as string[] | undefined) ?? ['x86_64'],
      memorySize: props.MemorySize as number | undefined,
      timeoutSeconds: props.Timeout as number | undefined,
      environment: (props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {},
    });
  }
  return {
    outdir,
    template,
    functions,
    fn(pattern) {
      const hits = functions.filter((f) => pattern.test(f.path));
      if (hits.length !== 1)
        throw new Error(`${hits.length} functions match ${pattern}; have: ${functions.map((f) => f.path).join(', ')}`);
      return hits[0]!;
    },
  };
}

/**
 * How long a `cdk synth` may take before it counts as hung: a hang guard. In `npm test` it
 * shares the machine with the other test files, so its wall time is several times its CPU time.
 */
export const SYNTH_TIMEOUT_MS = 420_000;
/** The project's cdk CLI, the one `npx cdk` runs, without npm's start-up (a CPU-second and more each time). */
export const CDK_CLI = join(REPO_ROOT, 'node_modules', '.bin', 'cdk');
/** A test or hook that waits for a synthesis: the synthesis's own limit and a margin. */
export const SYNTH_TEST_TIMEOUT_MS = SYNTH_TIMEOUT_MS + 60_000;

/**
 * `cdk synth` of the app in this repository into a fresh temporary directory, or `outdir`
 * (outside the repository, so a bundle finds no node_modules above it, as on Lambda). The
 * caller cleans up.
 */
export async function synthesizeApp(options: { timeoutMs?: number; outdir?: string } = {}): Promise<SynthesizedApp> {
  const outdir = options.outdir ?? mkdtempSync(join(tmpdir(), 'cdk-bundles-'));
  const cleanup = () => rmSync(outdir, { recursive: true, force: true });
  try {
    const child = spawn(CDK_CLI, ['synth', '--quiet', '--no-notices', '-o', outdir], {
      cwd: REPO_ROOT,
      env: offlineSynthEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, so a timeout takes cdk and the app down together
    });
    const forget = killGroupOnStop(child.pid);
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timeoutMs = options.timeoutMs ?? SYNTH_TIMEOUT_MS;
    const code = await new Promise<number | null>((done, fail) => {
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
        fail(new Error(`cdk synth did not finish within ${timeoutMs} ms:\n${output.slice(-8000)}`));
      }, timeoutMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        fail(error);
      });
      child.once('close', (status) => {
        clearTimeout(timer);
        forget();
        done(status);
      });
    });
    if (code !== 0) throw new Error(`cdk synth exited with ${code}:\n${output.slice(-8000)}`);
    // Without a runnable esbuild, NodejsFunction quietly bundles in Docker instead: not what
    // deploys from this repository, and not offline. (esbuild's postinstall is not needed: its
    // bin/esbuild then is a Node shim that runs the platform package's binary.)
    if (/Switching to Docker bundling/.test(output))
      throw new Error(`esbuild did not run locally; cdk synth fell back to Docker bundling:\n${output.slice(-8000)}`);
    return { ...readAssembly(outdir), cleanup };
  } catch (error) {
    cleanup();
    throw error;
  }
}

/**
 * `synthesizeApp()` once per test run (run-shared.ts), shared by every file that reads the
 * default app (test/infra/synth.test.ts, test/integration/bundles.test.ts): bundling every
 * function is the heaviest single step of the suite, and both files check the same `cdk
 * synth`. A failure fails each of them. `cleanup()` of the shared app does nothing, as another
 * file may still read it.
 */
export async function sharedSynthesis(options: { timeoutMs?: number } = {}): Promise<SynthesizedApp> {
  const timeoutMs = options.timeoutMs ?? SYNTH_TIMEOUT_MS;
  const outdir = await oncePerRun(
    'cr-shared-synth-',
    async (dir) => (await synthesizeApp({ timeoutMs, outdir: join(dir, 'out') })).outdir,
    { timeoutMs: timeoutMs + 30_000 },
  );
  return { ...readAssembly(outdir), cleanup: () => {} };
}
