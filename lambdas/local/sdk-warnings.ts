/**
 * The AWS SDK for JavaScript warns, in nine lines on stderr, on every run that loads it on
 * Node 20: its versions published after the first week of January 2027 will require Node 22
 * (https://github.com/aws/aws-sdk-js-v3/issues/7983). This package supports Node 20 and pins
 * the SDK's versions itself (package.json engines and dependencies), so the warning is about
 * the SDK's future releases, not about anything the user runs or can act on. The SDK's own
 * switch turns it off (AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true, read when a
 * client is made, so set before any is), on the Node versions this package supports only; a
 * user's own setting of the variable is kept, and no other warning is touched.
 */
import { readFileSync } from 'node:fs';

export const SDK_WARNING_SWITCH = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';

const ENGINES = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } }).engines.node;

/** The lowest Node version package.json's engines take (`>=20.18.1`), as [major, minor, patch]. */
function lowestSupported(range: string): [number, number, number] {
  const match = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(range.trim());
  if (!match) throw new Error(`package.json engines.node is not ">=x.y.z": ${range}`);
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** Whether `version` (process.version, `v20.20.2`) is one this package supports. */
export function supportedNode(version: string, range = ENGINES): boolean {
  const parts = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!parts) return false;
  const [major, minor, patch] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  const [lowMajor, lowMinor, lowPatch] = lowestSupported(range);
  return major !== lowMajor ? major > lowMajor : minor !== lowMinor ? minor > lowMinor : patch >= lowPatch;
}

/** Turns the SDK's Node-version warning off for this process (and the worker threads it starts), on a supported Node, unless the user set the switch. */
export function quietSdkNodeVersionWarning(env: NodeJS.ProcessEnv = process.env, version = process.version): void {
  if (env[SDK_WARNING_SWITCH] === undefined && supportedNode(version)) env[SDK_WARNING_SWITCH] = 'true';
}
