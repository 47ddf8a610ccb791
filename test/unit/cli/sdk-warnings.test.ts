/**
 * The AWS SDK's Node-version warning (lambdas/local/sdk-warnings.ts): off on the Node
 * versions this package supports, through the SDK's own switch, a user's setting kept.
 */
import { describe, expect, it } from 'vitest';
import { quietSdkNodeVersionWarning, SDK_WARNING_SWITCH, supportedNode } from '../../../lambdas/local/sdk-warnings';

describe('the SDK Node-version warning', () => {
  it("knows the versions package.json's engines take", () => {
    expect(supportedNode('v20.18.1', '>=20.18.1')).toBe(true);
    expect(supportedNode('v20.20.2', '>=20.18.1')).toBe(true);
    expect(supportedNode('v22.0.0', '>=20.18.1')).toBe(true);
    expect(supportedNode('v20.18.0', '>=20.18.1')).toBe(false);
    expect(supportedNode('v18.20.8', '>=20.18.1')).toBe(false);
    expect(supportedNode(process.version)).toBe(true);
  });

  it('sets the switch on a supported Node, not on another, and keeps a user\'s own setting', () => {
    const env: NodeJS.ProcessEnv = {};
    quietSdkNodeVersionWarning(env, 'v20.20.2');
    expect(env[SDK_WARNING_SWITCH]).toBe('true');
    const old: NodeJS.ProcessEnv = {};
    quietSdkNodeVersionWarning(old, 'v18.20.8');
    expect(old[SDK_WARNING_SWITCH]).toBeUndefined();
    const user: NodeJS.ProcessEnv = { [SDK_WARNING_SWITCH]: 'false' };
    quietSdkNodeVersionWarning(user, 'v20.20.2');
    expect(user[SDK_WARNING_SWITCH]).toBe('false');
    // Nothing else: other warnings still print.
    expect(Object.keys(env)).toEqual([SDK_WARNING_SWITCH]);
  });
});
