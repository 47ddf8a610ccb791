/**
 * The stack's template as `cdk synth` writes it for a deployment configuration (the same
 * schema, cdk.json's feature flags), synthesized in this process. The IAM tests run the
 * handlers in process and read only the template (policies, environment, event sources):
 * nothing is bundled (templateApp). They get it from the run's stack-template server
 * (stack-template-server.ts), which loads aws-cdk-lib once for the run; this module is what
 * the server runs, and what a file run without it falls back to.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { rmSync } from 'node:fs';
import { CaptureReplayStack } from '../../../lib/capture-replay-stack';
import { parseDeploymentConfig } from '../../../lib/config';
import { templateApp } from '../cdk-app';
import type { CfnTemplate } from './template-policies';

export function stackTemplate(config: Record<string, unknown>, id: string): CfnTemplate {
  const app = templateApp({ featureFlags: true });
  try {
    return Template.fromStack(
      new CaptureReplayStack(app, id, { config: parseDeploymentConfig(config) }),
    ).toJSON() as CfnTemplate;
  } finally {
    // At once: the run's stack-template server ends by SIGKILL, with no exit handler run.
    rmSync(app.outdir, { recursive: true, force: true });
  }
}
