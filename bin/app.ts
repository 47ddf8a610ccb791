/**
 * The CDK app: reads the deployment configuration, builds the stack, runs cdk-nag's
 * AwsSolutions checks. Nothing else. `cdk synth` works offline with defaults; a deploy with
 * placeholder settings is stopped by a rule in the template that names the settings to give.
 *
 * The account and Region are the CLI's: those of the credentials and profile it runs with
 * (CDK_DEFAULT_ACCOUNT, CDK_DEFAULT_REGION). Offline, with no credentials, the stack is
 * environment-agnostic and the deploy-time checks decide what synth could not.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { exitCodeOf } from '../lambdas/core/errors';
import { DeploymentConfigError, loadDeploymentConfig, type DeploymentConfig } from '../lib/config';

// The template's check is cfn-lint, run on it by the tests (test/infra/synth.test.ts).
// aws-cdk-lib's built-in copy of such rules (a WebAssembly engine whose findings are warnings
// only) would add seconds of CPU to every cdk command.
const app = new App({ builtinCloudFormationValidation: false });
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
let config: DeploymentConfig;
try {
  config = loadDeploymentConfig((key) => app.node.tryGetContext(key), {
    ...(account ? { account } : {}),
    ...(region ? { region } : {}),
  });
} catch (error) {
  // What the user wrote is wrong: say what, every problem at once, and no stack trace.
  if (!(error instanceof DeploymentConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(exitCodeOf(error));
}
// The stack's constructs and cdk-nag are loaded once the configuration is known to be good: a
// wrong one is reported without loading them.
const [{ CaptureReplayStack }, { AwsSolutionsChecks }] = await Promise.all([
  import('../lib/capture-replay-stack'),
  import('cdk-nag'),
]);
new CaptureReplayStack(app, config.stackName, {
  config,
  description: 'capture-replay: replays SageMaker Data Capture traffic against an inference endpoint',
  ...(account ? { env: { account, region } } : {}),
});
Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
