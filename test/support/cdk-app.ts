/**
 * The CDK App of the tests that synthesize the stack in their own process and read its template
 * (test/infra, the IAM tests' deployments, the simulator's sizing check).
 */
import { App } from 'aws-cdk-lib';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './processes';
import { removeEndedRuns } from './run-shared';

const ASSEMBLIES = 'cr-cdk-assemblies-';

/** This process's folder of synthesized assemblies (made at first use), or undefined. */
let assemblies: string | undefined;

/**
 * A new folder for one App's cloud assembly, in this process's folder of them
 * (`cr-cdk-assemblies-<pid>` in the temp folder), removed when the process exits, or, for a
 * process ended by a signal (vitest ends its workers so), by the next process that makes one.
 * An App given no outdir makes `cdk.outXXXXXX` in the temp folder and leaves it there, one
 * per synthesis.
 */
export function assemblyOutdir(): string {
  if (assemblies === undefined) {
    removeEndedRuns(ASSEMBLIES, tmpdir(), process.pid);
    const root = join(tmpdir(), `${ASSEMBLIES}${process.pid}`);
    mkdirSync(root, { recursive: true });
    assemblies = root;
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  }
  return mkdtempSync(join(assemblies, 'app-'));
}

/** The feature flags `cdk synth` runs with (cdk.json's context), so the template is the deployed one. */
export function cdkFeatureFlags(): Record<string, unknown> {
  const context = (
    JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }
  ).context;
  return Object.fromEntries(Object.entries(context).filter(([k]) => k.startsWith('@aws-cdk/')));
}

/**
 * An App whose synthesis produces the template and nothing the template tests do not read:
 * - no function bundled: an empty `aws:cdk:bundling-stacks` bundles no stack and leaves
 *   placeholder assets (https://github.com/aws/aws-cdk/issues/18125);
 * - no built-in CloudFormation validation (aws-cdk-lib's `builtinCloudFormationValidation`,
 *   a WebAssembly engine loaded in each process), as in the app itself (bin/app.ts): without
 *   the `@aws-cdk/core:validateAgainstDefaultRules` flag its findings are warnings that fail no
 *   synthesis. cfn-lint checks the template `cdk synth` writes (test/infra/synth.test.ts);
 *   test/integration/bundles.test.ts and synth.test.ts bundle the code.
 */
export function templateApp(options: { featureFlags?: boolean } = {}): App {
  const flags = options.featureFlags ? cdkFeatureFlags() : {};
  return new App({
    outdir: assemblyOutdir(),
    context: { ...flags, 'aws:cdk:bundling-stacks': [] },
    builtinCloudFormationValidation: false,
  });
}
