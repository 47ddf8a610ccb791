import { describe, expect, it } from 'vitest';
import { changedVariables } from '../../support/env-unchanged';

describe('changedVariables (the check of the main project, whose files share a worker)', () => {
  it('names what was added, removed or changed, not what a package sets on load', () => {
    const before = { KEEP: '1', GONE: 'x', CHANGED: 'a' };
    const after = { KEEP: '1', CHANGED: 'b', ADDED: 'y', AWS_SDK_UA_APP_ID: 'PT/NO-OP/2/PTEnv/NA' };
    expect(changedVariables(before, after)).toEqual(['ADDED', 'CHANGED', 'GONE']);
    expect(changedVariables(before, { ...before })).toEqual([]);
  });
});
