import { lambdaBootstrapHeap } from '../../lambdas/adapters/lane-heap';

/**
 * The environment a deployed bundle gets in its own process (test/support/invoke-bundle.mjs),
 * as Lambda's Node.js runtime gives it: the AWS_LAMBDA_* variables, the Region, credentials
 * (here moto's), and the SDK pointed at the emulator through AWS_ENDPOINT_URL with path-style
 * S3. Nothing of the calling process comes with it but PATH: no NODE_PATH, no AWS profile, no
 * tsx.
 */
export interface EmulatedLambda {
  /** Where the SDK's calls go (moto, or a proxy in front of it). */
  awsEndpoint: string;
  region: string;
  /** Lambda's runtime id, e.g. `nodejs22.x`. */
  runtime: string;
  functionName: string;
  memoryMb: number;
  /** The bundle's directory (/var/task on Lambda). */
  taskRoot: string;
}

export function emulatedLambdaEnv(o: EmulatedLambda): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    AWS_ENDPOINT_URL: o.awsEndpoint,
    S3_FORCE_PATH_STYLE: 'true',
    AWS_REGION: o.region,
    AWS_DEFAULT_REGION: o.region,
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    AWS_EC2_METADATA_DISABLED: 'true',
    // No shared config or credentials files, as on Lambda: a developer's ~/.aws must not help.
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_EXECUTION_ENV: `AWS_Lambda_${o.runtime}`,
    AWS_LAMBDA_FUNCTION_NAME: o.functionName,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(o.memoryMb),
    LAMBDA_TASK_ROOT: o.taskRoot,
    TZ: ':UTC',
  };
}

/**
 * NODE_OPTIONS as Lambda's Node.js bootstrap starts the function with them: its heap sizes for
 * the function's memory added, unless NODE_OPTIONS already names either
 * (lambdas/adapters/lane-heap.ts, lambdaBootstrapHeap). A bundle run without them would get V8's
 * defaults for this machine, not the heap it has in Lambda.
 */
export function lambdaBootstrapNodeOptions(nodeOptions: string | undefined, memoryMb: number): string {
  const given = nodeOptions ?? '';
  if (/--max[-_](semi|old)[-_]space[-_]size/.test(given)) return given;
  const heap = lambdaBootstrapHeap(memoryMb);
  return `${given} --max-semi-space-size=${heap.semiSpaceMb} --max-old-space-size=${heap.oldSpaceMb}`.trim();
}
