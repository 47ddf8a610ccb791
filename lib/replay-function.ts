import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');

export interface ReplayFunctionProps
  extends Omit<NodejsFunctionProps, 'entry' | 'runtime' | 'architecture' | 'logGroup'> {
  /** Handler file under lambdas/handlers/, without extension. */
  handlerName: 'ingest' | 'fire' | 'collect' | 'plan' | 'bucket-region-check';
  logRetention: logs.RetentionDays;
  /** Node flags beside `--enable-source-maps` in NODE_OPTIONS (only those Node allows there). */
  nodeOptions?: readonly string[];
}

/**
 * Every function's defaults in one place: Node 22 on arm64, esbuild bundling with source
 * maps, a log group with retention (created here, so it is deleted with the stack).
 *
 * The AWS SDK is bundled (`bundleAwsSDK`): by default NodejsFunction leaves `@aws-sdk/*`
 * out on Node 18+ runtimes, so the functions would run on whatever SDK version the Lambda
 * runtime ships, not the one in package-lock.json that the tests run. Bundled, the deployed
 * code is exactly what test/integration/bundles.test.ts exercises. The source map leaves out
 * the sources' text (`sourcesContent: false`): stack traces map to file:line just the same,
 * and `--enable-source-maps` parses a 2.2 MB map at each cold start instead of 6.3 MB, which
 * takes back most of what bundling the SDK costs (bench/RESULTS.md, "Lambda bundles").
 */
export class ReplayFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ReplayFunctionProps) {
    const { handlerName, logRetention, environment, bundling, nodeOptions = [], ...rest } = props;
    super(scope, id, {
      entry: join(ROOT, 'lambdas', 'handlers', `${handlerName}.ts`),
      handler: 'handler',
      depsLockFilePath: join(ROOT, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 1024,
      logGroup: new logs.LogGroup(scope, `${id}Logs`, {
        retention: logRetention,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
      loggingFormat: lambda.LoggingFormat.JSON,
      environment: {
        NODE_OPTIONS: ['--enable-source-maps', ...nodeOptions].join(' '),
        POWERTOOLS_SERVICE_NAME: 'capture-replay',
        ...environment,
      },
      bundling: {
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        target: 'node22',
        format: OutputFormat.CJS,
        bundleAwsSDK: true,
        ...bundling,
      },
      timeout: Duration.minutes(5),
      ...rest,
    });
  }
}
