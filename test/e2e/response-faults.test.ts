/**
 * A hostile target (test/support/fault-server.ts, its own process) against the CLI (its own
 * process): redirects, error statuses with 50 MB bodies, 200s carrying error objects,
 * absurd token counts, cut-off and slow bodies. Each request must end as the documented
 * record, the client's memory must stay bounded whatever the bodies' size (peak RSS read
 * from the CLI process itself), and no credential or more than an excerpt of the response
 * text may reach an output file.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { RESPONSE_LIMITS } from '../../lambdas/adapters/http/response-body';
import { replayCommand } from '../../lambdas/local/replay/command';
import { setEnv } from '../support/set-env';
import { faultCaptureLine, REDIRECT_LOCATION } from '../support/fault-server';
import { filesUnder } from '../support/output-files';
import { REPO_ROOT, startCli, startUrlProcess, type CliResult, type MockProcess } from '../support/processes';

/** Peak RSS the CLI may reach with a dozen 50 MB bodies in flight (idle it is ~150 MB; holding them whole took 0.9-1.9 GB). */
const RSS_BOUND_BYTES = 320 * 1024 * 1024;
const EXCERPT = RESPONSE_LIMITS.excerptChars;
const CANARY = 'PROMPT-ECHO-CANARY';

interface Fault {
  fault: string;
  stream?: boolean;
}

interface RecordLine {
  metadata: { request_ack_ns: number | null; request_start_ns: number; request_end_ns: number; was_cancelled: boolean };
  metrics: Record<string, { value: number | number[] }>;
  error: { code: number | null; type: string; message: string } | null;
  capture_replay: { capture_line: number };
}

let dir: string;
let server: MockProcess;
const AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'AKIDTEST',
  AWS_SECRET_ACCESS_KEY: 'test-secret',
  AWS_PROFILE: '',
  AWS_SESSION_TOKEN: '',
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cr-faults-'));
  server = await startUrlProcess([join(REPO_ROOT, 'test/support/fault-server.ts')], [], 'fault server');
}, 60_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes a capture file asking for `faults` in order (all in one captured second: spread over it). */
function captures(name: string, faults: Fault[]): string {
  const folder = join(dir, name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'capture.jsonl'),
    faults.map((f, i) => faultCaptureLine(i, f.fault, { stream: f.stream ?? false })).join('\n') + '\n',
  );
  return folder;
}

/** Runs the CLI with the peak-RSS probe; its result, records by capture line, and peak RSS. */
async function replay(name: string, faults: Fault[], args: string[], env: NodeJS.ProcessEnv = {}) {
  const rssFile = join(dir, `${name}.maxrss`);
  const cli = startCli(
    [
      'replay',
      captures(name, faults),
      '--out',
      join(dir, 'out'),
      '--run-id',
      name,
      '--no-progress',
      '--lead',
      '200',
      '--rehearsal',
      '0',
      ...args,
    ],
    {
      nodeArgs: ['--import', join(REPO_ROOT, 'test/support/max-rss.mjs')],
      env: { CAPTURE_REPLAY_TEST_MAXRSS_FILE: rssFile, ...env },
    },
  );
  const result = await cli.done;
  return { result, peakRss: Number(readFileSync(rssFile, 'utf8')) };
}

function records(run: string, target: string): Map<string, RecordLine[]> {
  const lines = readFileSync(join(dir, 'out', run, target, 'profile_export.jsonl'), 'utf8')
    .trim()
    .split('\n');
  const byFault = new Map<string, RecordLine[]>();
  const faults = readFileSync(join(dir, run, 'capture.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(JSON.parse(l).captureData.endpointInput.data) as { fault: string; stream: boolean });
  for (const line of lines) {
    const record = JSON.parse(line) as RecordLine;
    const f = faults[record.capture_replay.capture_line - 1]!;
    const key = f.fault + (f.stream ? ':stream' : '');
    byFault.set(key, [...(byFault.get(key) ?? []), record]);
  }
  return byFault;
}

function one(map: Map<string, RecordLine[]>, key: string): RecordLine {
  const list = map.get(key);
  expect(list, key).toHaveLength(1);
  return list![0]!;
}

const allOutput = (run: string) => filesUnder(join(dir, 'out', run));

const ms = (ns: number) => ns / 1e6;
const explain = (r: CliResult) => `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

describe('50 MB bodies: the record they should give, in bounded memory', () => {
  it('HTTP target: 500s with 50 MB bodies, 200s with 50 MB answers (JSON and SSE), a 50 MB SSE event', async () => {
    const faults: Fault[] = [
      ...Array.from({ length: 6 }, () => ({ fault: 'error-50mb' })),
      ...Array.from({ length: 6 }, () => ({ fault: 'ok-50mb' })),
      ...Array.from({ length: 2 }, () => ({ fault: 'ok-50mb', stream: true })),
      { fault: 'sse-huge-event', stream: true },
    ];
    const { result, peakRss } = await replay('big-http', faults, ['--url', server.url, '--timeout', '120000']);
    expect(result.code, explain(result)).toBe(0);
    const byFault = records('big-http', 'target');
    for (const r of byFault.get('error-50mb')!) {
      expect(r.error).toMatchObject({ code: 500, type: 'HTTPError' });
      expect(r.error!.message.startsWith('HTTP 500: internal error. ECHO: PROMPT-ECHO-CANARY')).toBe(true);
      expect(r.error!.message.length).toBeLessThanOrEqual('HTTP 500: '.length + EXCERPT);
    }
    for (const r of [...byFault.get('ok-50mb')!, ...byFault.get('ok-50mb:stream')!]) {
      expect(r.error).toBeNull();
      expect(r.metrics.output_sequence_length?.value).toBe(5);
      expect(r.metrics.input_sequence_length?.value).toBe(3);
    }
    expect(byFault.get('ok-50mb:stream')![0]!.metrics.time_to_first_token).toBeDefined();
    expect(one(byFault, 'sse-huge-event:stream').error).toMatchObject({ code: null, type: 'MalformedStream' });
    expect(peakRss, `peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MB`).toBeLessThan(RSS_BOUND_BYTES);
  }, 180_000);

  it('SageMaker target: 502 pages of 50 MB, 200s with 50 MB answers', async () => {
    const faults: Fault[] = [
      ...Array.from({ length: 5 }, () => ({ fault: 'error-50mb' })),
      ...Array.from({ length: 5 }, () => ({ fault: 'ok-50mb' })),
    ];
    const { result, peakRss } = await replay(
      'big-sm',
      faults,
      ['--target', 'S=sagemaker:faults', '--timeout', '120000'],
      { ...AWS_ENV, AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: server.url },
    );
    expect(result.code, explain(result)).toBe(0);
    const byFault = records('big-sm', 'S');
    for (const r of byFault.get('error-50mb')!) expect(r.error).toMatchObject({ code: 502, type: 'HTTPError' });
    for (const r of byFault.get('ok-50mb')!) {
      expect(r.error).toBeNull();
      expect(r.metrics.output_sequence_length?.value).toBe(5);
    }
    expect(peakRss, `peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MB`).toBeLessThan(RSS_BOUND_BYTES);
  }, 180_000);
});

describe('what counts as an error, and what token counts are believed', () => {
  const faults: Fault[] = [
    { fault: 'ok' },
    { fault: 'ok-stream', stream: true },
    { fault: 'redirect' },
    { fault: 'error-echo' },
    { fault: 'ok-error-object' },
    { fault: 'ok-error-object', stream: true },
    { fault: 'usage-huge' },
    { fault: 'usage-huge', stream: true },
    { fault: 'usage-fraction' },
    { fault: 'usage-negative' },
    { fault: 'truncated-stream', stream: true },
    { fault: 'slow-body' },
  ];
  let run: { result: CliResult; peakRss: number };
  let byFault: Map<string, RecordLine[]>;
  beforeAll(async () => {
    run = await replay('semantics', faults, [
      '--url',
      server.url.replace('http://', 'http://cli-user:cli-secret@'),
      '--timeout',
      '3000',
    ]);
    byFault = records('semantics', 'target');
  }, 60_000);

  it('finishes, every request accounted for', () => {
    expect(run.result.code, explain(run.result)).toBe(0);
    const manifest = JSON.parse(readFileSync(join(dir, 'out', 'semantics', 'target', 'run_manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ scheduled: faults.length, fired: faults.length, balanced: true });
  });

  it('a redirect is an error (not followed), its location without credentials', () => {
    const r = one(byFault, 'redirect');
    expect(r.error).toMatchObject({ code: 302, type: 'HTTPError' });
    expect(r.error!.message).toContain('elsewhere.invalid');
    expect(r.error!.message).not.toMatch(/hunter2|replay-user|SECRETKEY123/);
    expect(REDIRECT_LOCATION).toContain('hunter2');
  });

  it('a 200 carrying an error object is an error, streamed or not', () => {
    expect(one(byFault, 'ok-error-object').error).toMatchObject({
      code: 200,
      type: 'ResponseError',
      message: expect.stringContaining('overloaded; you said'),
    });
    expect(one(byFault, 'ok-error-object:stream').error).toMatchObject({
      code: null,
      type: 'StreamError',
      message: expect.stringContaining('overloaded; you said'),
    });
  });

  it('implausible token counts (1e308, 0.5, -1) count as missing; aggregates stay numbers', () => {
    for (const key of ['usage-huge', 'usage-huge:stream', 'usage-fraction', 'usage-negative']) {
      const r = one(byFault, key);
      expect(r.error, key).toBeNull();
      expect(r.metrics.output_sequence_length, key).toBeUndefined();
      expect(r.metrics.input_sequence_length, key).toBeUndefined();
    }
    const aggregates = JSON.parse(
      readFileSync(join(dir, 'out', 'semantics', 'target', 'profile_export_aiperf.json'), 'utf8'),
    );
    expect(aggregates.output_sequence_length).toMatchObject({ avg: 5, sum: 10, max: 5 });
    expect(aggregates.total_output_tokens.avg).toBe(10);
    expect(Number.isFinite(aggregates.output_token_throughput.avg)).toBe(true);
  });

  it('a cut-off stream is truncated; a body slower than --timeout is a timeout with its ack kept', () => {
    expect(one(byFault, 'truncated-stream:stream').error).toMatchObject({ code: null, type: 'StreamTruncated' });
    const slow = one(byFault, 'slow-body');
    expect(slow.error).toMatchObject({ code: 408, type: 'TimeoutError' });
    expect(slow.metadata.request_ack_ns).not.toBeNull();
    expect(ms(slow.metadata.request_end_ns - slow.metadata.request_start_ns)).toBeGreaterThanOrEqual(2900);
    expect(one(byFault, 'ok').error).toBeNull();
    expect(one(byFault, 'ok-stream:stream').metrics.output_sequence_length?.value).toBe(5);
  });

  it('response text is an excerpt in records and error_summary; no credential anywhere in the output', () => {
    const echo = one(byFault, 'error-echo');
    expect(echo.error).toMatchObject({ code: 400, type: 'HTTPError' });
    expect(echo.error!.message.startsWith('HTTP 400: invalid request: PROMPT-ECHO-CANARY')).toBe(true);
    expect(echo.error!.message.length).toBeLessThanOrEqual('HTTP 400: '.length + EXCERPT);
    const summary = JSON.parse(
      readFileSync(join(dir, 'out', 'semantics', 'target', 'profile_export_aiperf.json'), 'utf8'),
    ).error_summary as { error_details: { message: string } }[];
    expect(summary.length).toBeGreaterThan(3);
    for (const entry of summary) expect(entry.error_details.message.length).toBeLessThanOrEqual(40 + EXCERPT);
    for (const { file, text } of allOutput('semantics')) {
      expect(text, file).not.toMatch(/hunter2|SECRETKEY123|cli-secret/);
      // The prompt (over 1,000 characters) never appears beyond an excerpt's length.
      expect(text.includes('confidential words of the customer '.repeat(5)), file).toBe(false);
    }
  });
});

describe('--no-response-excerpts', () => {
  it('keeps no response text in any output, for HTTP and SageMaker targets alike', async () => {
    const faults: Fault[] = [
      { fault: 'ok' },
      { fault: 'redirect' },
      { fault: 'error-echo' },
      { fault: 'ok-error-object' },
      { fault: 'ok-error-object', stream: true },
      { fault: 'error-50mb' },
    ];
    const restoreEnv = setEnv({ ...AWS_ENV, AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: server.url });
    onTestFinished(restoreEnv);
    const sink = () => {
      let text = '';
      return {
        stream: { write: (chunk: string) => ((text += chunk), true) } as unknown as NodeJS.WritableStream,
        text: () => text,
      };
    };
    const [stdout, stderr] = [sink(), sink()];
    const code = await replayCommand({
      capturesPath: captures('no-excerpts', faults),
      target: [`H=${server.url}`, 'S=sagemaker:faults'],
      out: join(dir, 'out'),
      runId: 'no-excerpts',
      path: '/v1/chat/completions',
      targetName: 'target',
      streaming: false,
      timeScale: 1,
      intraSecond: 'spread',
      seed: 1,
      timeout: 60_000,
      lead: 200,
      latePolicy: 'fire',
      progress: false,
      resamples: 100,
      responseExcerpts: false,
      stdout: stdout.stream,
      stderr: stderr.stream,
    });
    expect(code, stderr.text()).toBe(0);
    const h = records('no-excerpts', 'H');
    expect(one(h, 'error-echo').error).toMatchObject({
      code: 400,
      type: 'HTTPError',
      message: 'HTTP 400 (response text not kept)',
    });
    expect(one(h, 'redirect').error).toMatchObject({ code: 302, message: 'HTTP 302 (response text not kept)' });
    expect(one(h, 'ok-error-object').error).toMatchObject({
      type: 'ResponseError',
      message: 'HTTP 200 with an error object (response text not kept)',
    });
    expect(one(h, 'ok-error-object:stream').error).toMatchObject({
      type: 'StreamError',
      message: 'error object in the stream (response text not kept)',
    });
    const s = records('no-excerpts', 'S');
    expect(one(s, 'error-echo').error).toMatchObject({
      code: 400,
      type: 'ModelError',
      message: 'response text not kept',
    });
    expect(one(s, 'ok-error-object').error).toMatchObject({ code: 200, type: 'ResponseError' });
    for (const { file, text } of allOutput('no-excerpts')) {
      expect(text.includes(CANARY), file).toBe(false);
      expect(text.includes('overloaded'), file).toBe(false);
    }
  });
});

describe('--no-response-excerpts on the command line', () => {
  it('reaches the target: no response text in any output file', async () => {
    const { result } = await replay(
      'no-excerpts-cli',
      [{ fault: 'error-echo' }, { fault: 'ok-error-object' }],
      ['--url', server.url, '--no-response-excerpts', '--no-preflight'],
    );
    // Every request failed, by design: exit 1 says so; the records are what this checks.
    expect(result.stderr).not.toMatch(/unknown option/);
    const h = records('no-excerpts-cli', 'target');
    expect(one(h, 'error-echo').error).toMatchObject({ code: 400, message: 'HTTP 400 (response text not kept)' });
    for (const { file, text } of allOutput('no-excerpts-cli')) expect(text.includes(CANARY), file).toBe(false);
  }, 60_000);
});
