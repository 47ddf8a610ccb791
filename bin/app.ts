/**
 * The CDK app: reads the deployment configuration, builds the stack, runs cdk-nag's
 * AwsSolutions checks. Nothing else. `cdk synth` works offline with defaults; a deploy with
 * placeholder settings is stopped by a rule in the template that names the settings to give.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { DeploymentConfigError, loadDeploymentConfig, type DeploymentConfig } from '../lib/config';
import { CaptureReplayStack } from '../lib/capture-replay-stack';

const app = new App();
let config: DeploymentConfig;
try {
  config = loadDeploymentConfig((key) => app.node.tryGetContext(key));
} catch (error) {
  // What the user wrote is wrong: say what, every problem at once, and no stack trace.
  if (!(error instanceof DeploymentConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
new CaptureReplayStack(app, 'CaptureReplay', {
  config,
  description: 'capture-replay: replays SageMaker Data Capture traffic against an inference endpoint',
  ...(process.env.CDK_DEFAULT_ACCOUNT ? { env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } } : {}),
});
Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
