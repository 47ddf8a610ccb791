/**
 * Issue 32 item 12: what `verify-deploy` and `link` print of an outputs file or an argument
 * reaches the terminal escaped (terminal-text.ts), never as the escape code it holds; an output
 * that is not a string is said as such. The built CLI as a user runs it; S3 is a closed port,
 * or a local server that answers 404 to everything.
 */
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/processes';

// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const ESC = '\u001b';
const work = mkdtempSync(join(tmpdir(), 'cr-deploy-escapes-'));
const AWS = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'x',
  AWS_SECRET_ACCESS_KEY: 'x',
  AWS_SESSION_TOKEN: '',
  AWS_PROFILE: '',
  AWS_MAX_ATTEMPTS: '1',
};
const CLOSED = { ...AWS, AWS_ENDPOINT_URL: 'http://127.0.0.1:9' };

let notFound: Server;
let notFoundUrl: string;
beforeAll(async () => {
  notFound = createServer((req, res) => {
    req.resume();
    res.writeHead(404, { 'content-type': 'application/xml' });
    res.end(req.method === 'HEAD' ? undefined : '<Error><Code>NoSuchKey</Code><Message>not here</Message></Error>');
  });
  notFound.listen(0, '127.0.0.1');
  await once(notFound, 'listening');
  notFoundUrl = `http://127.0.0.1:${(notFound.address() as { port: number }).port}`;
});
afterAll(async () => {
  notFound?.close();
  rmSync(work, { recursive: true, force: true });
});

function outputsFile(name: string, outputs: Record<string, unknown>): string {
  const path = join(work, `${name}.json`);
  writeFileSync(path, JSON.stringify({ CaptureReplay: outputs }));
  return path;
}

describe('escape codes from an outputs file or an argument', () => {
  it('verify-deploy: a CapturePrefix that would clear the screen is shown escaped', async () => {
    const file = outputsFile('prefix', {
      ResultsBucketName: 'results',
      CaptureBucketName: 'captures',
      CapturePrefix: `datacapture/${ESC}[2J${ESC}]0;PWNED\u0007/`,
    });
    const run = await runCli(['verify-deploy', '--outputs', file], { env: CLOSED });
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).not.toMatch(RAW_CONTROL);
    expect(run.stderr).toContain('s3://captures/datacapture/\\x1b[2J\\x1b]0;PWNED\\x07/');
  }, 60_000);

  it('link: a results bucket named with an escape code, and an s3:// argument holding one, are shown escaped', async () => {
    const file = outputsFile('bucket', { ResultsBucketName: `results${ESC}[2J` });
    const byRun = await runCli(['link', '--run', 'file-1', '--outputs', file], {
      env: { ...AWS, AWS_ENDPOINT_URL: notFoundUrl },
    });
    expect(byRun.code).toBe(1);
    expect(byRun.stderr).toBe(
      'capture-replay link: no s3://results\\x1b[2J/runs/file-1/report.html: run file-1 has not finished ' +
        '(its report is written when every target has), or the run id is wrong\n',
    );
    const byUri = await runCli(['link', `s3://results/runs/x${ESC}[2J`], {
      env: { ...AWS, AWS_ENDPOINT_URL: notFoundUrl },
    });
    expect(byUri.code).toBe(1);
    expect(byUri.stderr).toBe('capture-replay link: no object at s3://results/runs/x\\x1b[2J\n');
    const notUri = await runCli(['link', `s3:/${ESC}[2J`], { env: CLOSED });
    expect(notUri.code).toBe(2);
    expect(notUri.stderr).toBe(
      `capture-replay link: "s3:/\\x1b[2J" is not an s3:// URI (s3://<bucket>/<key>)\nRun 'capture-replay link --help' for the options.\n`,
    );
  }, 60_000);
});

describe('an output that is not a string', () => {
  it('is said as such, not as a stack deployed by an older capture-replay', async () => {
    const file = outputsFile('number', { ResultsBucketName: 123, CaptureBucketName: 'captures' });
    for (const args of [
      ['verify-deploy', '--outputs', file],
      ['link', '--run', 'file-1', '--outputs', file],
    ]) {
      const run = await runCli(args, { env: CLOSED });
      expect(run.code, args[0]).toBe(1);
      expect(run.stderr, args[0]).toBe(
        `capture-replay ${args[0]}: ${file}: ResultsBucketName is 123, not a string: give the file \`cdk ` +
          `deploy --outputs-file\` wrote, unedited\n`,
      );
    }
  }, 60_000);
});
