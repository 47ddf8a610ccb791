/**
 * The tests' processes start without NODE_EXTRA_CA_CERTS (vitest.config.ts drops it): Node
 * parses that file at every start, and the tests start hundreds of Node processes, none of
 * which opens a TLS connection.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('NODE_EXTRA_CA_CERTS', () => {
  it('is not in the environment of a test or of the processes it starts', () => {
    expect(process.env.NODE_EXTRA_CA_CERTS).toBeUndefined();
    expect(
      execFileSync(process.execPath, ['-p', 'process.env.NODE_EXTRA_CA_CERTS ?? "unset"'], { encoding: 'utf8' }).trim(),
    ).toBe('unset');
  });
});
