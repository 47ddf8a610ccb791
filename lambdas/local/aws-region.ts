/**
 * The Region a CLI command's AWS clients use, found as the AWS CLI finds it: the command's
 * --region, then AWS_REGION, then AWS_DEFAULT_REGION, then the profile's. The JavaScript SDK
 * reads AWS_REGION and the profile but not AWS_DEFAULT_REGION
 * (https://docs.aws.amazon.com/sdkref/latest/guide/feature-region.html), so a user with
 * AWS_DEFAULT_REGION alone, as many AWS CLI setups have, got "Region is missing".
 * undefined: leave it to the SDK's own chain (AWS_REGION, the profile).
 */
export function awsCliRegion(
  flag: string | null | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (flag) return flag;
  if (env.AWS_REGION) return undefined;
  return env.AWS_DEFAULT_REGION || undefined;
}

/** A client config's region part: `{ region }` when one is found, `{}` for the SDK's chain. */
export function regionConfig(
  flag: string | null | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { region?: string } {
  const region = awsCliRegion(flag, env);
  return region ? { region } : {};
}
