/**
 * `capture-replay capacity` as a hostile user runs it (issue 32: findings 1, 3 to 7, 10 to 12),
 * each case the CLI in its own process against a mock server in its own: an earlier run's
 * results in the way, target names that shared a folder, a search stopped by SIGINT, a target
 * that answers 404 or dies mid-search, a window a chat target cannot take, a one-request
 * capture, a streamed objective without --streaming, what a step shows while it runs, a step
 * larger than memory holds, the warm-up's count and a run id with an escape code. Short
 * windows (1 s, 21 requests) and small factors; how far a search gets still depends on the CLI
 * sending on time (a late client limits it), so the file is in the timing project.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapacityDocument } from '../../lambdas/core/capacity/types';
import { writeCaptureFile } from '../support/capture-gen';
import { cliScript, REPO_ROOT, runCli, startCli, startMockProcess, type MockProcess } from '../support/processes';

const work = mkdtempSync(join(tmpdir(), 'cr-capacity-guards-'));
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
/** 20 requests a second for 2 s, none asking to stream: a 1 s window holds 21. */
const captures = join(work, 'captures');
/** A quick search: 1 s windows, no cool-down, no rehearsal, up to 2x. */
const QUICK = [
  '--window',
  '1s',
  '--cooldown',
  '0',
  '--rehearsal',
  '0',
  '--lead',
  '100',
  '--max-factor',
  '2',
  '--goodput',
  'time_to_first_token:300',
];

let mock: MockProcess;
beforeAll(async () => {
  mkdirSync(captures);
  await writeCaptureFile(join(captures, 'c.jsonl'), {
    ratePerSecond: 20,
    durationSeconds: 2,
    startTime: Date.UTC(2026, 3, 29),
    bodyBytes: 300,
  });
  mock = await startMockProcess(['--ttft-ms', '2', '--itl-ms', '1', '--output-tokens', '4']);
}, 60_000);
afterAll(async () => {
  await mock?.stop();
  rmSync(work, { recursive: true, force: true });
});

const capacity = (out: string, runId: string, extra: string[], env?: NodeJS.ProcessEnv) =>
  runCli(['capacity', captures, '--out', out, '--run-id', runId, ...QUICK, ...extra], env ? { env } : {});
const documentOf = (out: string, runId: string) =>
  JSON.parse(readFileSync(join(out, runId, 'capacity.json'), 'utf8')) as CapacityDocument;

describe('an earlier run with the same --run-id and --out (finding 1)', () => {
  it('is refused (exit 2, nothing changed), a replay run and an earlier search alike; --overwrite replaces the search whole', async () => {
    const out = join(work, 'same-id');
    const replay = await runCli([
      'replay',
      captures,
      '--url',
      mock.url,
      '--out',
      out,
      '--run-id',
      'nightly',
      '--time-scale',
      '20',
      '--lead',
      '100',
      '--rehearsal',
      '0',
      '--no-progress',
    ]);
    expect(replay.code, replay.stderr).toBe(0);
    const report = readFileSync(join(out, 'nightly', 'report.html'), 'utf8');
    const onReplay = await capacity(out, 'nightly', ['--target', `A=${mock.url}`, '--streaming']);
    expect(onReplay.code).toBe(2);
    expect(onReplay.stderr).toMatch(
      new RegExp(
        `^capture-replay capacity: ${join(out, 'nightly')} already holds the results of run nightly ` +
          `\\([^)]+\\): give another --run-id or --out, or --overwrite to replace that run\nRun ` +
          `'capture-replay capacity --help' for the options\\.\n$`,
      ),
    );
    expect(readFileSync(join(out, 'nightly', 'report.html'), 'utf8')).toBe(report);
    expect(readdirSync(join(out, 'nightly')).sort()).toEqual(['ingest_report.json', 'report.html', 'target']);

    const first = await capacity(out, 'search', ['--target', `A=${mock.url}`, '--streaming']);
    expect(first.code, first.stderr).toBe(0);
    expect(readdirSync(join(out, 'search', 'steps')).sort()).toEqual(['A-1x', 'A-2x', 'A-warm-up']);
    const again = await capacity(out, 'search', ['--target', `A=${mock.url}`, '--streaming', '--max-factor', '1']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /already holds the results of run search \([^)]+\): give another --run-id or --out, or --overwrite/,
    );
    const replaced = await capacity(out, 'search', [
      '--target',
      `A=${mock.url}`,
      '--streaming',
      '--max-factor',
      '1',
      '--overwrite',
    ]);
    expect(replaced.code, replaced.stderr).toBe(0);
    // No step of the first search left beside the new one's.
    expect(readdirSync(join(out, 'search', 'steps')).sort()).toEqual(['A-1x', 'A-warm-up']);
    expect(documentOf(out, 'search').targets[0]!.steps.map((s) => s.factor)).toEqual([1]);
  }, 120_000);
});

describe('step folders (finding 3)', () => {
  it('targets named warm-up and 1x each get folders of their own, none written twice', async () => {
    const out = join(work, 'names');
    const run = await capacity(out, 'names', [
      '--target',
      `warm-up=${mock.url}`,
      '--target',
      `1x=${mock.url}`,
      '--streaming',
      '--max-factor',
      '1',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const steps = join(out, 'names', 'steps');
    expect(readdirSync(steps).sort()).toEqual(['1x-1x', '1x-warm-up', 'warm-up-1x', 'warm-up-warm-up']);
    // Each folder holds the one target it was for.
    expect(['1x-1x', '1x-warm-up'].map((d) => readdirSync(join(steps, d)).filter((f) => !f.includes('.')))).toEqual([
      ['1x'],
      ['1x'],
    ]);
    expect(
      ['warm-up-1x', 'warm-up-warm-up'].map((d) => readdirSync(join(steps, d)).filter((f) => !f.includes('.'))),
    ).toEqual([['warm-up'], ['warm-up']]);
  }, 60_000);
});

describe('a search stopped by SIGINT (finding 4)', () => {
  // With no cool-down the signal lands between two steps, or in the next: the process never dies of it, the steps unwritten.
  it.each([
    ['in a cool-down', '1'],
    ['between two steps', '0'],
  ])(
    '%s: said as stopped, never as the cap; what was measured kept, exit 130',
    async (_when, cooldown) => {
      const out = join(work, `sigint-${cooldown}`);
      const cli = startCli([
        'capacity',
        captures,
        '--out',
        out,
        '--run-id',
        'stopped',
        '--target',
        `A=${mock.url}`,
        '--target',
        `B=${mock.url}`,
        '--streaming',
        ...QUICK,
        '--max-factor',
        '8',
        '--cooldown',
        cooldown,
      ]);
      await cli.waitForStderr(/A at 1x: 21 requests, goodput/, 60_000);
      cli.child.kill('SIGINT');
      const run = await cli.done;
      expect(run.code, run.stderr).toBe(130);
      expect(run.stdout).not.toContain('the cap');
      const [a, b] = documentOf(out, 'stopped').targets;
      // 1x, or 2x when the signal came as the next step was being planned (that step runs, then the search stops).
      const met = a!.sustained_factor!;
      expect([1, 2]).toContain(met);
      expect(a).toMatchObject({ limited_by: 'stopped', limit_factor: 2 * met });
      expect(a!.note).toBe(
        `The search was stopped by SIGINT before it ended (the step at ${2 * met}x was not measured): the ` +
          `target met the objectives at ${met}x. What was measured is kept; run the search again to finish it.`,
      );
      expect(b).toMatchObject({ sustained_factor: null, limited_by: 'stopped', limit_factor: null, steps: [] });
      expect(run.stdout.split('\n')[0]).toBe(
        `A sustains at least ${met}x (the search was stopped before it ended) today's traffic at 99 % ` +
          `goodput, B none judged (the search was stopped before it ended).`,
      );
      expect(run.stderr).toContain('capture-replay: SIGINT: the search stops here; the steps measured are written\n');
    },
    60_000,
  );
});

describe('a broken target (finding 5)', () => {
  it('every request 404: said as broken with the status, in the summary, capacity.json and report.html; one step, exit 1', async () => {
    const out = join(work, 'not-found');
    const run = await capacity(out, 'nope', ['--target', `A=${mock.url}`, '--streaming', '--path', '/nope']);
    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')[0]).toBe(
      'No factor sustained at 99 % goodput: A broken (no request succeeded at 1x, HTTPError 404).',
    );
    expect(run.stderr).toContain(
      `capture-replay: no request to A succeeded at 1x (21 of 21 failed: HTTPError 404 21): the target is ` +
        `broken or down, not at its capacity; check that it is up, its URL and --path (the steps are in ` +
        `${join(out, 'nope', 'capacity.json')})\n`,
    );
    const [a] = documentOf(out, 'nope').targets;
    expect(a).toMatchObject({ sustained_factor: null, limited_by: 'broken', limit_factor: 1 });
    expect(a!.steps).toHaveLength(1);
    expect(a!.steps[0]).toMatchObject({
      outcome: 'broken',
      errors: [{ error: 'HTTPError 404', count: 21, message: 'HTTP 404: no route for POST /nope' }],
    });
    const report = readFileSync(join(out, 'nope', 'report.html'), 'utf8');
    expect(report).toContain('HTTPError 404');
    expect(report).toContain('data-limited-by="broken"');
  }, 60_000);

  it('a target killed mid-search: what it met kept, then broken where it stopped answering, exit 1', async () => {
    const doomed = await startMockProcess(['--ttft-ms', '2', '--itl-ms', '1', '--output-tokens', '4']);
    const out = join(work, 'killed');
    const cli = startCli([
      'capacity',
      captures,
      '--out',
      out,
      '--run-id',
      'killed',
      '--target',
      `A=${doomed.url}`,
      '--streaming',
      ...QUICK,
      '--max-factor',
      '8',
      '--cooldown',
      '1',
    ]);
    await cli.waitForStderr(/A at 1x: 21 requests, goodput/, 60_000);
    await doomed.stop();
    const run = await cli.done;
    expect(run.code, run.stderr).toBe(1);
    const [a] = documentOf(out, 'killed').targets;
    expect(a).toMatchObject({ sustained_factor: 1, limited_by: 'broken', limit_factor: 2 });
    expect(a!.steps.map((s) => s.outcome)).toEqual(['met', 'broken']);
    expect(run.stderr).toMatch(/^capture-replay: no request to A succeeded at 2x \(42 of 42 failed: /m);
  }, 60_000);
});

describe('a window with nothing to search (finding 6)', () => {
  it('CSV records to a chat target: refused before any step (exit 1), said with what to do', async () => {
    const csv = join(work, 'csv');
    mkdirSync(csv);
    const line = (i: number) =>
      JSON.stringify({
        captureData: {
          endpointInput: { observedContentType: 'text/csv', mode: 'INPUT', data: `${i},5.1,3.5`, encoding: 'CSV' },
        },
        eventMetadata: { eventId: `tab-${i}`, inferenceTime: `2026-04-29T00:00:0${Math.floor(i / 3)}Z` },
        eventVersion: '0',
      });
    writeFileSync(join(csv, 'tabular.jsonl'), Array.from({ length: 6 }, (_, i) => line(i)).join('\n') + '\n');
    const out = join(work, 'csv-out');
    const run = await runCli([
      'capacity',
      csv,
      '--out',
      out,
      '--run-id',
      'csv',
      '--target',
      `A=${mock.url}`,
      '--streaming',
      ...QUICK,
      '--window',
      '10s',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "capture-replay: none of the window's 6 captured requests can go to A, an OpenAI-compatible target " +
        '(unsupported_content_type 6: content type text/csv cannot be sent to a chat target): nothing to ' +
        'search; give it a window of chat requests, or search a sagemaker:<endpoint> target, which takes every content type\n',
    );
    expect(run.stdout).toBe('');
    expect(existsSync(join(out, 'csv', 'steps'))).toBe(false);
  }, 60_000);

  it('a one-request capture: a factor that samples none is not a failure, the search grows past it', async () => {
    const one = join(work, 'one');
    mkdirSync(one);
    writeFileSync(join(one, 'c.jsonl'), readFileSync(join(captures, 'c.jsonl'), 'utf8').split('\n')[0] + '\n');
    const out = join(work, 'one-out');
    const run = await runCli([
      'capacity',
      one,
      '--out',
      out,
      '--run-id',
      'one',
      '--target',
      `A=${mock.url}`,
      '--streaming',
      ...QUICK,
      '--start-factor',
      '0.001',
      '--growth',
      '10',
      '--max-factor',
      '4',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const [a] = documentOf(out, 'one').targets;
    expect(a).toMatchObject({ sustained_factor: 4, limited_by: 'cap' });
    const empty = a!.steps.filter((s) => s.requests === 0);
    expect(empty.length).toBeGreaterThan(0);
    expect(empty.every((s) => s.outcome === 'empty')).toBe(true);
    expect(run.stderr).toContain(
      'A at 0.001x: 0 requests, goodput --, error rate --, time_to_first_token p99 --: no request at this ' +
        "factor: the window's requests sampled at 0.001x kept none\n",
    );
  }, 60_000);
});

describe('--goodput on a streamed metric without --streaming (finding 7)', () => {
  it('capacity: refused when no request of the window streams, in one line saying to add --streaming (exit 2)', async () => {
    const run = await capacity(join(work, 'unstreamed'), 'unstreamed', ['--target', `A=${mock.url}`]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'capture-replay: warning: --goodput time_to_first_token is measured on streamed answers only, and --streaming is not given',
    );
    expect(run.stderr).toContain(
      'capture-replay capacity: --goodput time_to_first_token: measured on streamed answers only, and none ' +
        "of the window's 21 requests asks to stream, so no request could meet it: add --streaming\n",
    );
  }, 60_000);

  it('replay: warned in one line before it runs', async () => {
    const run = await runCli([
      'replay',
      captures,
      '--url',
      mock.url,
      '--out',
      join(work, 'unstreamed-replay'),
      '--goodput',
      'time_to_first_token:300 inter_token_latency:50',
      '--time-scale',
      '20',
      '--lead',
      '100',
      '--rehearsal',
      '0',
      '--no-progress',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr.split('\n')[0]).toBe(
      'capture-replay: warning: --goodput time_to_first_token, inter_token_latency is measured on streamed ' +
        'answers only, and --streaming is not given: every request captured without "stream": true misses that ' +
        'objective however fast it is answered; add --streaming',
    );
  }, 60_000);
});

/** Whether util-linux's `script` can give the CLI a terminal here. */
const hasScript = spawnSync('script', ['-qec', 'true', '/dev/null']).status === 0;

describe('what a step shows while it runs (finding 10)', () => {
  it('names its target, factor and size before it runs; --no-progress is taken', async () => {
    const run = await capacity(join(work, 'shown'), 'shown', [
      '--target',
      `A=${mock.url}`,
      '--streaming',
      '--no-progress',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.split('\n');
    const started = lines.indexOf('  A at 2x: 42 requests...');
    expect(started).toBeGreaterThan(0);
    expect(lines[started + 1]).toMatch(/^ {2}A at 2x: 42 requests, goodput/);
    expect(lines).toContain('  A: warming up at 1x...');
  }, 60_000);

  it.skipIf(!hasScript)(
    "shows replay's progress bar on a terminal, and none with --no-progress",
    () => {
      const cli = (extra: string) =>
        spawnSync(
          'script',
          [
            '-qec',
            `"${process.execPath}" "${cliScript()}" capacity "${captures}" --out "${join(work, 'tty')}" ` +
              `--target A=${mock.url} --streaming ${QUICK.map((a) => `'${a}'`).join(' ')} --max-factor 1 ${extra}`,
            '/dev/null',
          ],
          { encoding: 'utf8', cwd: REPO_ROOT, timeout: 60_000 },
        );
      const bar = cli('');
      expect(bar.status, bar.stdout).toBe(0);
      expect(bar.stdout).toMatch(/replay \|=+\| 21\/21 requests \| 0 failed \| 0 dropped/);
      const none = cli('--no-progress');
      expect(none.status, none.stdout).toBe(0);
      expect(none.stdout).not.toContain('replay |');
    },
    60_000,
  );
});

describe('a step larger than memory holds (finding 11)', () => {
  it('the search goes no higher than the largest step that fits, says so first, and names the memory of large steps', async () => {
    const out = join(work, 'memory');
    const run = await capacity(
      out,
      'memory',
      ['--target', `A=${mock.url}`, '--streaming', '--max-factor', '16', '--resolution', '0.25'],
      { CAPTURE_REPLAY_MAX_STEP_REQUESTS: '100' },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      "--max-factor 16 would plan 336 requests in one step, more than one step holds in this replayer's " +
        'memory (100 requests, about 12 KB each): the search goes up to 4.75x (a shorter --window goes further)\n',
    );
    expect(run.stderr).toContain('  A at 4.75x: 100 requests, about 1 MB of memory until its results are written...\n');
    const doc = documentOf(out, 'memory');
    expect(doc.search).toMatchObject({ max_factor: 4.75, max_step_requests: 100 });
    const [a] = doc.targets;
    expect(a!.steps.map((s) => s.requests)).toEqual([21, 42, 84, 100]);
    expect(a).toMatchObject({ sustained_factor: 4.75, limited_by: 'cap' });
    expect(a!.note).toContain(
      "the largest factor one step of this window holds in this replayer's memory (100 requests): a shorter --window to look further",
    );
  }, 60_000);
});

describe('smaller ones (finding 12)', () => {
  it('the warm-up says the requests it sent, and capacity.json counts them', async () => {
    const out = join(work, 'warm-up');
    const run = await capacity(out, 'warm', [
      '--target',
      `A=${mock.url}`,
      '--streaming',
      '--start-factor',
      '0.25',
      '--max-factor',
      '0.25',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const sent = (
      JSON.parse(readFileSync(join(out, 'warm', 'steps', 'A-warm-up', 'A', 'run_manifest.json'), 'utf8')) as {
        fired: number;
      }
    ).fired;
    expect(sent).toBeLessThan(21);
    expect(run.stderr).toContain(
      `  A: warmed up with ${sent} request${sent === 1 ? '' : 's'} at 0.25x, not judged (steps/A-warm-up/)\n`,
    );
    expect(documentOf(out, 'warm').search.warm_up_requests).toBe(sent);
  }, 60_000);

  it('a --run-id with an escape code: its usage error shows it escaped, as replay does', async () => {
    const run = await runCli([
      'capacity',
      captures,
      '--target',
      `A=${mock.url}`,
      '--goodput',
      'time_to_first_token:300',
      '--run-id',
      'a\u001b[2Jb',
      '--out',
      join(work, 'esc'),
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).not.toMatch(RAW_CONTROL);
    expect(run.stderr).toContain(`--run-id must be letters, digits, '.', '_' or '-' (got "a\\x1b[2Jb")`);
  }, 60_000);
});
