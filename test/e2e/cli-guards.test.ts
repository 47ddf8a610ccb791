/**
 * What the CLI refuses or says before it sends anything, each case in its own process as a
 * user runs it: an earlier run's results in the way (--overwrite), an --out on a read-only file
 * system, a target whose error codes carry terminal escapes, the AWS SDK's Node-version
 * warning on a supported Node, an empty captures folder, a file that is not Data Capture,
 * offsets that select no record, and a target URL holding a password or a token, which no file
 * or message keeps.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliScript, REPO_ROOT, runCli, startMockProcess, type MockProcess } from '../support/processes';

const SAMPLE = join(REPO_ROOT, 'samples', 'datacapture');
const work = mkdtempSync(join(tmpdir(), 'cr-cli-guards-'));
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const FAST = ['--time-scale', '20', '--lead', '100', '--rehearsal', '0', '--no-progress'];

let mock: MockProcess;
beforeAll(async () => {
  mock = await startMockProcess(['--ttft-ms', '2', '--itl-ms', '1', '--output-tokens', '4']);
}, 60_000);
afterAll(async () => {
  await mock?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('an earlier run with the same --run-id and --out', () => {
  it('is refused (exit 2, nothing sent), and replaced whole with --overwrite, nothing old left beside the new', async () => {
    const out = join(work, 'same-id');
    const first = await runCli([
      'replay',
      SAMPLE,
      '--target',
      `A=${mock.url}`,
      '--target',
      `B=${mock.url}`,
      '--out',
      out,
      '--run-id',
      'nightly',
      ...FAST,
    ]);
    expect(first.code, first.stderr).toBe(0);
    const runDir = join(out, 'nightly');
    expect(readdirSync(runDir).sort()).toEqual(['A', 'B', 'comparison.json', 'ingest_report.json', 'report.html']);
    const report = readFileSync(join(runDir, 'report.html'), 'utf8');

    const again = await runCli(['replay', SAMPLE, '--url', mock.url, '--out', out, '--run-id', 'nightly', ...FAST]);
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(
      `capture-replay replay: ${runDir} already holds the results of run nightly (A, B, comparison.json, ` +
        `ingest_report.json, ... (5)): give another --run-id or --out, or --overwrite to replace that run\nRun ` +
        `'capture-replay replay --help' for the options.\n`,
    );
    expect(readFileSync(join(runDir, 'report.html'), 'utf8')).toBe(report);

    const replaced = await runCli([
      'replay',
      SAMPLE,
      '--url',
      mock.url,
      '--out',
      out,
      '--run-id',
      'nightly',
      '--overwrite',
      ...FAST,
    ]);
    expect(replaced.code, replaced.stderr).toBe(0);
    // One target now: no A/, B/ nor an old A-vs-B comparison beside the new report.
    expect(readdirSync(runDir).sort()).toEqual(['ingest_report.json', 'report.html', 'target']);
  }, 120_000);
});

/** Whether this machine lets a process mount a file system in its own namespace (unshare -rm). */
const canMount =
  spawnSync('unshare', ['-rm', 'sh', '-c', `mount -t tmpfs -o ro tmpfs ${tmpdir()} && true`]).status === 0;

describe('--out on a read-only file system', () => {
  it.skipIf(!canMount)(
    'says EROFS (not ENOENT) before anything is sent, for the folder and below it',
    () => {
      const ro = join(work, 'ro');
      rmSync(ro, { recursive: true, force: true });
      spawnSync('mkdir', ['-p', ro]);
      const cli = (out: string) =>
        spawnSync(
          'unshare',
          [
            '-rm',
            'sh',
            '-c',
            `mount -t tmpfs -o ro tmpfs "${ro}" && exec "${process.execPath}" "${cliScript()}" replay ` +
              `"${SAMPLE}" --url ${mock.url} --out "${out}" --no-progress`,
          ],
          { encoding: 'utf8', cwd: REPO_ROOT },
        );
      const atRoot = cli(ro);
      expect(atRoot.status).toBe(1);
      expect(atRoot.stderr).toBe(`capture-replay: --out ${ro}: cannot write in ${ro}: read-only file system (EROFS)\n`);
      const below = cli(join(ro, 'results'));
      expect(below.status).toBe(1);
      expect(below.stderr).toBe(
        `capture-replay: --out ${join(ro, 'results')}: cannot create ${join(ro, 'results')}: read-only file system (EROFS)\n`,
      );
    },
    60_000,
  );
});

/**
 * A SageMaker runtime, in its own process, answering every request with a 400 whose error
 * code retitles and colours a terminal (`ESC ]0;PWNED BEL ESC [31m`).
 */
async function startEscapingRuntime(): Promise<{ url: string; child: ChildProcess }> {
  const script = `
    const http = require('node:http');
    const code = '\\x1b]0;PWNED\\x07\\x1b[31mRED';
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ __type: code, message: 'bad \\x1b[32m thing' }));
      });
    });
    server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: 'http://127.0.0.1:' + server.address().port })));`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { url: (JSON.parse(line) as { url: string }).url, child };
}

describe('a target whose error codes carry terminal escapes', () => {
  it('reach the terminal escaped; and the SDK says nothing of the Node version on a supported one', async () => {
    const runtime = await startEscapingRuntime();
    try {
      const run = await runCli(
        ['replay', SAMPLE, '--url', 'sagemaker:ep?region=us-east-1', '--out', join(work, 'escapes'), ...FAST],
        {
          env: {
            AWS_ACCESS_KEY_ID: 'AKIDTEST',
            AWS_SECRET_ACCESS_KEY: 'test-secret',
            AWS_SESSION_TOKEN: '',
            AWS_PROFILE: '',
            AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: runtime.url,
            [`AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED`]: undefined,
          },
        },
      );
      expect(run.code).toBe(1);
      expect(run.stdout + run.stderr).not.toMatch(RAW_CONTROL);
      expect(run.stdout).toMatch(/Failed +33 /);
      expect(run.stderr).not.toContain('NodeVersionSupportWarning');
      expect(existsSync(join(work, 'escapes'))).toBe(true);
    } finally {
      runtime.child.kill();
    }
  }, 120_000);
});

describe('an empty captures folder', () => {
  it('is said naming the ingest report, which is written (exit 1)', async () => {
    const root = join(work, 'empty-captures');
    mkdirSync(root);
    const run = await runCli([
      'replay',
      root,
      '--url',
      mock.url,
      '--out',
      join(work, 'empty-out'),
      '--run-id',
      'empty',
      ...FAST,
    ]);
    expect(run.code).toBe(1);
    const report = join(work, 'empty-out', 'empty', 'ingest_report.json');
    expect(run.stderr).toContain(
      `capture-replay: no .jsonl capture files under ${root} could be read (see ${report})\n`,
    );
    expect(existsSync(report)).toBe(true);
  }, 60_000);
});

describe('a JSON Lines file that is not Data Capture', () => {
  it('is said in one line: what its lines look like and what was expected (exit 1)', async () => {
    const file = join(work, 'chat-requests.jsonl');
    writeFileSync(file, `${JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })}\n`.repeat(3));
    const run = await runCli([
      'replay',
      file,
      '--url',
      mock.url,
      '--out',
      join(work, 'not-capture'),
      '--run-id',
      'nc',
      ...FAST,
    ]);
    expect(run.code).toBe(1);
    const said = run.stderr.split('\n').filter((l) => l.startsWith('capture-replay:'));
    expect(said).toEqual([
      `capture-replay: no replayable capture records (see ` +
        `${join(work, 'not-capture', 'nc', 'ingest_report.json')} for the reasons); ${file} line 1: not ` +
        `SageMaker Data Capture: looks like OpenAI chat requests (fields model, messages); expected SageMaker ` +
        `Data Capture lines (captureData.endpointInput and eventMetadata)`,
    ]);
  }, 60_000);
});

describe('--start-offset past the last capture record', () => {
  it('selects nothing, said as an empty window is (exit 1), the results written', async () => {
    const run = await runCli([
      'replay',
      SAMPLE,
      '--url',
      mock.url,
      '--out',
      join(work, 'past-end'),
      '--run-id',
      'past',
      '--start-offset',
      String(10 * 24 * 3600 * 1000),
      ...FAST,
    ]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(
      /^capture-replay: no capture record from --start-offset 864000000 ms on \(\d+ outside it\): nothing was sent$/m,
    );
    expect(existsSync(join(work, 'past-end', 'past', 'target', 'profile_export_aiperf.json'))).toBe(true);
  }, 60_000);
});

/** Every file under `dir`, its path and text. */
function filesUnder(dir: string): [string, string][] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .map((path) => [path, readFileSync(path, 'utf8')]);
}

describe('a target URL holding a password or a query token (issue 32 item 2)', () => {
  it('reaches the target, and no file or message keeps the password or the token', async () => {
    const out = join(work, 'credentials');
    const port = new URL(mock.url).port;
    const run = await runCli([
      'replay',
      SAMPLE,
      '--target',
      `A=http://replay:hunter2@127.0.0.1:${port}/?token=tok-123&deployment=blue`,
      '--target',
      `B=http://127.0.0.1:${port}/?api_key=key-456`,
      '--out',
      out,
      '--run-id',
      'creds',
      ...FAST,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const files = filesUnder(out);
    expect(files.length).toBeGreaterThan(5);
    const leaks = [...files, ['stdout', run.stdout], ['stderr', run.stderr]]
      .filter(([, text]) => /hunter2|tok-123|key-456/.test(text as string))
      .map(([path]) => path);
    expect(leaks).toEqual([]);
    // The URL is still said, its credentials' values replaced.
    const aiperf = JSON.parse(readFileSync(join(out, 'creds', 'A', 'profile_export_aiperf.json'), 'utf8')) as {
      capture_replay: { endpoint: { url: string } };
    };
    expect(aiperf.capture_replay.endpoint.url).toBe(`http://127.0.0.1:${port}/?token=***&deployment=blue`);
    // A usage error that echoes the URL says it without them too.
    const refused = await runCli([
      'replay',
      SAMPLE,
      '--url',
      'ftp://replay:hunter2@models.example.com/?token=tok-123',
      '--out',
      join(work, 'creds-refused'),
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.split('\n')[0]).toBe(
      'capture-replay replay: --url must be an http:// or https:// URL or sagemaker:<endpoint-name> (got ' +
        'ftp://models.example.com/?token=***)',
    );
  }, 120_000);
});
