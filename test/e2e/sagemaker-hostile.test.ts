/**
 * A SageMaker target that is not SageMaker (test/support/sagemaker-faults.ts, served by the
 * fault server in its own process) against the CLI (its own process, the real AWS SDK):
 * event-stream errors quoting the prompt, an error code holding the prompt and 50,000
 * characters, terminal escapes in error codes and messages, an HTML page as a chat answer,
 * and an event-stream message claiming 4 GiB. Every record, summary and page must hold only
 * named types, printable text and excerpts (none with --no-response-excerpts), the HTML
 * answer must be judged as an HTTP target's is, and the oversized message must cost nothing.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESPONSE_LIMITS } from '../../lambdas/adapters/http/response-body';
import { ERROR_TEXT_LIMITS } from '../../lambdas/core/metrics/error-details';
import { faultCaptureLine } from '../support/fault-server';
import { filesUnder } from '../support/output-files';
import { REPO_ROOT, startCli, startUrlProcess, type CliResult, type MockProcess } from '../support/processes';

const EXCERPT = RESPONSE_LIMITS.excerptChars;
const CANARY = 'PROMPT-ECHO-CANARY';
const PROMPT_RUN = 'confidential words of the customer '.repeat(5);
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
/** Peak RSS of the CLI with four 4 GiB messages claimed (idle it is ~150 MB; buffering them took 1.2 GB). */
const RSS_BOUND_BYTES = 300 * 1024 * 1024;
const AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'AKIDTEST',
  AWS_SECRET_ACCESS_KEY: 'test-secret',
  AWS_PROFILE: '',
  AWS_SESSION_TOKEN: '',
};

interface Fault {
  fault: string;
  stream?: boolean;
}
interface RecordLine {
  error: { code: number | null; type: string; message: string } | null;
  capture_replay: { capture_line: number };
}

let dir: string;
let server: MockProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cr-sm-hostile-'));
  server = await startUrlProcess([join(REPO_ROOT, 'test/support/fault-server.ts')], [], 'fault server');
}, 60_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Replays `faults` (one captured second) with the peak-RSS probe; the CLI's result and peak RSS. */
async function replay(run: string, faults: Fault[], args: string[]): Promise<{ result: CliResult; peakRss: number }> {
  const folder = join(dir, run);
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'capture.jsonl'),
    faults.map((f, i) => faultCaptureLine(i, f.fault, { stream: f.stream ?? false })).join('\n') + '\n',
  );
  const rssFile = join(dir, `${run}.maxrss`);
  const cli = startCli(
    [
      'replay',
      folder,
      '--out',
      join(dir, 'out'),
      '--run-id',
      run,
      '--no-progress',
      '--lead',
      '200',
      '--timeout',
      '30000',
      '--resamples',
      '200',
      '--rehearsal',
      '0',
      ...args,
    ],
    {
      nodeArgs: ['--import', join(REPO_ROOT, 'test/support/max-rss.mjs')],
      env: { ...AWS_ENV, AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: server.url, CAPTURE_REPLAY_TEST_MAXRSS_FILE: rssFile },
    },
  );
  const result = await cli.done;
  return { result, peakRss: Number(readFileSync(rssFile, 'utf8')) };
}

/** One target's records by fault (`<fault>` or `<fault>:stream`). */
function records(run: string, target: string, faults: Fault[]): Map<string, RecordLine> {
  const byFault = new Map<string, RecordLine>();
  for (const line of readFileSync(join(dir, 'out', run, target, 'profile_export.jsonl'), 'utf8')
    .trim()
    .split('\n')) {
    const record = JSON.parse(line) as RecordLine;
    const f = faults[record.capture_replay.capture_line - 1]!;
    byFault.set(f.fault + (f.stream ? ':stream' : ''), record);
  }
  return byFault;
}

const outputFiles = (run: string) => filesUnder(join(dir, 'out', run));

const explain = (r: CliResult) =>
  `exit ${r.code}\nstdout:\n${r.stdout.slice(0, 4000)}\nstderr:\n${r.stderr.slice(0, 4000)}`;

const HOSTILE: Fault[] = [
  { fault: 'ok' },
  { fault: 'sm-error-frame', stream: true },
  { fault: 'sm-exception-echo', stream: true },
  { fault: 'sm-model-stream-error', stream: true },
  { fault: 'sm-code-echo' },
  { fault: 'sm-code-escape' },
  { fault: 'html-200' },
];

describe('error text from a hostile SageMaker endpoint', () => {
  let run: { result: CliResult; peakRss: number };
  let s: Map<string, RecordLine>;
  beforeAll(async () => {
    run = await replay('hostile', HOSTILE, ['--target', 'S=sagemaker:faults', '--target', `H=${server.url}`]);
    s = records('hostile', 'S', HOSTILE);
  }, 120_000);

  it('names each failure with a type it may hold: its own when that is a name, else what it is', () => {
    expect([0, 1], explain(run.result)).toContain(run.result.code);
    expect(s.get('ok')!.error).toBeNull();
    expect(s.get('sm-error-frame:stream')!.error).toMatchObject({ code: null, type: 'StreamError' });
    expect(s.get('sm-exception-echo:stream')!.error).toMatchObject({ code: null, type: 'UnmodeledStreamFault' });
    expect(s.get('sm-model-stream-error:stream')!.error).toMatchObject({ code: null, type: 'ModelStreamError' });
    expect(s.get('sm-code-echo')!.error).toMatchObject({ code: 400, type: 'HTTPError' });
    expect(s.get('sm-code-escape')!.error).toMatchObject({ code: 400, type: 'HTTPError' });
    const manifest = JSON.parse(readFileSync(join(dir, 'out', 'hostile', 'S', 'run_manifest.json'), 'utf8'));
    expect(Object.keys(manifest.failedByType).sort()).toEqual([
      'HTTPError',
      'MalformedResponse',
      'ModelStreamError',
      'StreamError',
      'UnmodeledStreamFault',
    ]);
  });

  it('keeps at most an excerpt of what the endpoint said, as printable text', () => {
    const excerpts = [
      'sm-error-frame:stream',
      'sm-exception-echo:stream',
      'sm-model-stream-error:stream',
      'sm-code-echo',
    ].map((k) => s.get(k)!.error!.message);
    expect(excerpts[0]!.startsWith(`invalid request: ${CANARY}`)).toBe(true);
    expect(excerpts[3]!.startsWith(`HTTP 400: invalid request: ${CANARY}`)).toBe(true);
    for (const message of excerpts) expect(message.length, message).toBeLessThanOrEqual('HTTP 400: '.length + EXCERPT);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'hostile', 'S', 'profile_export_aiperf.json'), 'utf8'))
      .error_summary as { error_details: { type: string; message: string } }[];
    for (const { error_details: e } of summary) {
      expect(e.type.length).toBeLessThanOrEqual(ERROR_TEXT_LIMITS.typeChars);
      expect(e.message.length).toBeLessThanOrEqual('HTTP 400: '.length + EXCERPT);
    }
  });

  it('no terminal escape, no more than an excerpt of the prompt, in any file or on the terminal', () => {
    for (const { file, text } of outputFiles('hostile')) {
      expect(CONTROL.test(text.replace(/\r?\n|\t/g, '')), file).toBe(false);
      expect(text.includes(PROMPT_RUN), file).toBe(false);
      expect(text.includes('yyyyyyyyyy'), file).toBe(false);
    }
    for (const text of [run.result.stdout, run.result.stderr]) {
      expect(text).not.toContain('\u001b]');
      expect(text).not.toContain('\u0007');
      expect(text.includes(PROMPT_RUN)).toBe(false);
    }
    expect(run.result.stdout.length).toBeLessThan(20_000);
    expect(statSync(join(dir, 'out', 'hostile', 'S', 'run_manifest.json')).size).toBeLessThan(10_000);
  });

  it('an HTML page answering a chat request is a MalformedResponse, from a SageMaker target as from an HTTP target', () => {
    const h = records('hostile', 'H', HOSTILE);
    const expected = {
      code: 200,
      type: 'MalformedResponse',
      message: expect.stringContaining('content-type text/html'),
    };
    expect(s.get('html-200')!.error).toMatchObject(expected);
    expect(h.get('html-200')!.error).toMatchObject(expected);
    expect(s.get('html-200')!.error!.message).toBe(h.get('html-200')!.error!.message);
  });
});

describe('error text from a hostile SageMaker endpoint, --no-response-excerpts', () => {
  it('keeps none of it anywhere: records, summaries, manifest, report, terminal', async () => {
    const { result } = await replay('hostile-quiet', HOSTILE, [
      '--target',
      'S=sagemaker:faults',
      '--target',
      'B=sagemaker:faults-b',
      '--no-response-excerpts',
    ]);
    expect([0, 1], explain(result)).toContain(result.code);
    const s = records('hostile-quiet', 'S', HOSTILE);
    expect(s.get('sm-error-frame:stream')!.error).toMatchObject({
      type: 'StreamError',
      message: 'response text not kept',
    });
    expect(s.get('sm-exception-echo:stream')!.error).toMatchObject({
      type: 'UnmodeledStreamFault',
      message: 'response text not kept',
    });
    expect(s.get('sm-code-echo')!.error).toMatchObject({
      code: 400,
      type: 'HTTPError',
      message: 'HTTP 400 (response text not kept)',
    });
    const files = outputFiles('hostile-quiet');
    expect(files.some((f) => f.file.endsWith('report.html'))).toBe(true);
    for (const { file, text } of files) {
      expect(text.includes(CANARY), file).toBe(false);
      expect(text.includes('PWNED'), file).toBe(false);
      expect(text.includes('yyyyyyyyyy'), file).toBe(false);
    }
    for (const text of [result.stdout, result.stderr]) {
      expect(text.includes(CANARY)).toBe(false);
      expect(text.includes('PWNED')).toBe(false);
    }
  }, 120_000);
});

describe('an event-stream message claiming 4 GiB', () => {
  it('ends its request as OversizedFrame at once, four in flight in bounded memory', async () => {
    const faults: Fault[] = Array.from({ length: 4 }, () => ({ fault: 'sm-oversized-frame', stream: true }));
    const { result, peakRss } = await replay('oversized', faults, [
      '--target',
      'S=sagemaker:faults',
      '--intra-second',
      'burst',
    ]);
    console.log(`oversized frames: peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MB`);
    expect([0, 1], explain(result)).toContain(result.code);
    const lines = readFileSync(join(dir, 'out', 'oversized', 'S', 'profile_export.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(lines).toHaveLength(4);
    for (const line of lines)
      expect((JSON.parse(line) as RecordLine).error).toMatchObject({
        code: null,
        type: 'OversizedFrame',
        message: expect.stringContaining('4294967295 bytes'),
      });
    expect(peakRss, `peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MB`).toBeLessThan(RSS_BOUND_BYTES);
  }, 180_000);
});
