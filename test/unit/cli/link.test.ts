/**
 * The rules of `link`'s arguments (the command line's exit 2 for them:
 * test/e2e/deploy-commands-usage.test.ts), s3:// URIs and link lifetimes. Links against
 * emulated AWS: test/integration/verify-deploy.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { linkRequest } from '../../../lambdas/local/link';
import { lifetimeText, parseS3Uri } from '../../../lambdas/local/s3-links';

describe('link arguments', () => {
  it('takes exactly one of an s3:// URI, --run or --schedule', () => {
    expect(linkRequest({})).toBe('give one of <s3-uri>, --run <run-id> or --schedule <name>');
    expect(linkRequest({ run: 'file-1', schedule: 'nightly' })).toBe(
      'give one of <s3-uri>, --run <run-id> or --schedule <name>, not several',
    );
    expect(linkRequest({ uri: 's3://b/k', run: 'file-1' })).toMatch(/not several$/);
    expect(linkRequest({ run: 'file-1' })).toEqual({ kind: 'run', runId: 'file-1' });
    expect(linkRequest({ run: 'file-1', target: 'B' })).toEqual({ kind: 'run', runId: 'file-1', target: 'B' });
    expect(linkRequest({ schedule: 'nightly' })).toEqual({ kind: 'schedule', name: 'nightly' });
    expect(linkRequest({ uri: 's3://b/runs/x/report.html' })).toEqual({
      kind: 'uri',
      location: { bucket: 'b', key: 'runs/x/report.html' },
    });
  });

  it('refuses --target without --run, and names that could leave their folder', () => {
    expect(linkRequest({ schedule: 'nightly', target: 'A' })).toBe('--target goes with --run (a target of that run)');
    expect(linkRequest({ run: '../work/x' })).toMatch(/^--run takes a run id/);
    expect(linkRequest({ run: 'file-1', target: 'A/../B' })).toMatch(/^--target takes a target name/);
    expect(linkRequest({ schedule: 'night ly' })).toMatch(/^--schedule takes a schedule name/);
    expect(linkRequest({ uri: 'https://b.s3.amazonaws.com/k' })).toBe(
      '"https://b.s3.amazonaws.com/k" is not an s3:// URI (s3://<bucket>/<key>)',
    );
  });

  it('reads s3:// URIs and says how long a link lasts', () => {
    expect(parseS3Uri('s3://bucket/')).toEqual({ bucket: 'bucket', key: '' });
    expect(parseS3Uri('s3://bucket')).toMatch(/is not an s3:\/\/ URI/);
    expect([3600, 900, 604800, 90].map(lifetimeText)).toEqual(['1 hour', '15 minutes', '7 days', '90 seconds']);
  });
});
