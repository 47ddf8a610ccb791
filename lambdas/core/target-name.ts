/**
 * What a target may be called, wherever one is named: the deployment config (runtime/config.ts,
 * checked again by the functions), `replay --target NAME=URL` and `link --target`. A name is a
 * folder of the results (`runs/<run-id>/<target>/`, locally and in S3) and a key of the
 * comparison, so it is a plain path segment: letters, digits, `.`, `_` and `-`, starting with
 * a letter or digit (never `.`, `..` nor something read as a flag), at most 63 characters.
 */
export const TARGET_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export function isTargetName(name: string): boolean {
  return TARGET_NAME_PATTERN.test(name);
}
