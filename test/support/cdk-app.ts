/**
 * The CDK App of the tests that synthesize the stack in their own process and read its template
 * (test/infra, the IAM tests' deployments, the simulator's sizing check).
 */
import { App } from 'aws-cdk-lib';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './processes';

/** The feature flags `cdk synth` runs with (cdk.json's context), so the template is the deployed one. */
export function cdkFeatureFlags(): Record<string, unknown> {
  const context = (JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
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
  return new App({ context: { ...flags, 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
}
