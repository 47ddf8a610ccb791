/**
 * `capture-replay capacity` as a hostile user runs it (issue 32: findings 3 to 6, 12), each
 * case the CLI in its own process against a mock server in its own: target names that shared
 * a folder, a search stopped by SIGINT, a target that answers 404 or dies mid-search, a window
 * a chat target cannot take, a one-request capture, the warm-up's count and a run id with an
 * escape code. Short windows (1 s, 21 requests) and small factors: nothing here measures
 * timing.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapacityDocument } from '../../lambdas/core/capacity/types';
import { writeCaptureFile } from '../support/capture-gen';
import { runCli, startCli, startMockProcess, type MockProcess } from '../support/processes';

const work = mkdtempSync(join(tmpdir(), 'cr-capacity-guards-'));
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
/** 20 requests a second for 2 s, none asking to stream: a 1 s window holds 21. */
const captures = join(work, 'captures');
/** A quick search: 1 s windows, no cool-down, no rehearsal, up to 2x. */
const QUICK = ['--window', '1s', '--cooldown', '0', '--rehearsal', '0', '--lead', '100', '--max-factor', '2', '--goodput', 'time_to_first_token:300'];

let mock: MockProcess;
beforeAll(async () => {
  mkdirSync(captures);
  await writeCaptureFile(join(captures, 'c.jsonl'), { ratePerSecond: 20, durationSeconds: 2, startTime: Date.UTC(2026, 3, 29), bodyBytes: 300 });
  mock = await startMockProcess(['--ttft-ms', '2', '--itl-ms', '1', '--output-tokens', '4']);
}, 60_000);
afterAll(async () => {
  await mock?.stop();
  rmSync(work, { recursive: true, force: true });
});

const capacity = (out: string, runId: string, extra: string[], env?: NodeJS.ProcessEnv) =>
  runCli(['capacity', captures, '--out', out, '--run-id', runId, ...QUICK, ...extra], env ? { env } : {});
const documentOf = (out: string, runId: string) => JSON.parse(readFileSync(join(out, runId, 'capacity.json'), 'utf8')) as CapacityDocument;

describe('step folders (finding 3)', () => {
  it('targets named warm-up and 1x each get folders of their own, none written twice', async () => {
    const out = join(work, 'names');
    const run = await capacity(out, 'names', ['--target', `warm-up=${mock.url}`, '--target', `1x=${mock.url}`, '--streaming', '--max-factor', '1']);
    expect(run.code, run.stderr).toBe(0);
    const steps = join(out, 'names', 'steps');
    expect(readdirSync(steps).sort()).toEqual(['1x-1x', '1x-warm-up', 'warm-up-1x', 'warm-up-warm-up']);
    // Each folder holds the one target it was for.
    expect(['1x-1x', '1x-warm-up'].map((d) => readdirSync(join(steps, d)).filter((f) => !f.includes('.')))).toEqual([['1x'], ['1x']]);
    expect(['warm-up-1x', 'warm-up-warm-up'].map((d) => readdirSync(join(steps, d)).filter((f) => !f.includes('.')))).toEqual([['warm-up'], ['warm-up']]);
  }, 60_000);
});

describe('a search stopped by SIGINT (finding 4)', () => {
  // With no cool-down the signal lands between two steps, or in the next: the process never dies of it, the steps unwritten.
  it.each([['in a cool-down', '1'], ['between two steps', '0']])('%s: said as stopped, never as the cap; what was measured kept, exit 130', async (_when, cooldown) => {
    const out = join(work, `sigint-${cooldown}`);
    const cli = startCli(['capacity', captures, '--out', out, '--run-id', 'stopped', '--target', `A=${mock.url}`, '--target', `B=${mock.url}`, '--streaming', ...QUICK, '--max-factor', '8', '--cooldown', cooldown]);
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
    expect(a!.note).toBe(`The search was stopped by SIGINT before it ended (the step at ${2 * met}x was not measured): the target met the objectives at ${met}x. What was measured is kept; run the search again to finish it.`);
    expect(b).toMatchObject({ sustained_factor: null, limited_by: 'stopped', limit_factor: null, steps: [] });
    expect(run.stdout.split('\n')[0]).toBe(`A sustains at least ${met}x (the search was stopped before it ended) today's traffic at 99 % goodput, B none judged (the search was stopped before it ended).`);
    expect(run.stderr).toContain('capture-replay: SIGINT: the search stops here; the steps measured are written\n');
  }, 60_000);
});

describe('a broken target (finding 5)', () => {
  it('every request 404: said as broken with the status, in the summary, capacity.json and report.html; one step, exit 1', async () => {
    const out = join(work, 'not-found');
    const run = await capacity(out, 'nope', ['--target', `A=${mock.url}`, '--streaming', '--path', '/nope']);
    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')[0]).toBe('No factor sustained at 99 % goodput: A broken (no request succeeded at 1x, HTTPError 404).');
    expect(run.stderr).toContain(
      `capture-replay: no request to A succeeded at 1x (21 of 21 failed: HTTPError 404 21): the target is broken or down, not at its capacity; check that it is up, its URL and --path (the steps are in ${join(out, 'nope', 'capacity.json')})\n`,
    );
    const [a] = documentOf(out, 'nope').targets;
    expect(a).toMatchObject({ sustained_factor: null, limited_by: 'broken', limit_factor: 1 });
    expect(a!.steps).toHaveLength(1);
    expect(a!.steps[0]).toMatchObject({ outcome: 'broken', errors: [{ error: 'HTTPError 404', count: 21, message: 'HTTP 404: no route for POST /nope' }] });
    const report = readFileSync(join(out, 'nope', 'report.html'), 'utf8');
    expect(report).toContain('HTTPError 404');
    expect(report).toContain('data-limited-by="broken"');
  }, 60_000);

  it('a target killed mid-search: what it met kept, then broken where it stopped answering, exit 1', async () => {
    const doomed = await startMockProcess(['--ttft-ms', '2', '--itl-ms', '1', '--output-tokens', '4']);
    const out = join(work, 'killed');
    const cli = startCli(['capacity', captures, '--out', out, '--run-id', 'killed', '--target', `A=${doomed.url}`, '--streaming', ...QUICK, '--max-factor', '8', '--cooldown', '1']);
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
        captureData: { endpointInput: { observedContentType: 'text/csv', mode: 'INPUT', data: `${i},5.1,3.5`, encoding: 'CSV' } },
        eventMetadata: { eventId: `tab-${i}`, inferenceTime: `2026-04-29T00:00:0${Math.floor(i / 3)}Z` },
        eventVersion: '0',
      });
    writeFileSync(join(csv, 'tabular.jsonl'), Array.from({ length: 6 }, (_, i) => line(i)).join('\n') + '\n');
    const out = join(work, 'csv-out');
    const run = await runCli(['capacity', csv, '--out', out, '--run-id', 'csv', '--target', `A=${mock.url}`, '--streaming', ...QUICK, '--window', '10s']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "capture-replay: none of the window's 6 captured requests can go to A, an OpenAI-compatible target (unsupported_content_type 6: content type text/csv cannot be sent to a chat target): nothing to search; give it a window of chat requests, or search a sagemaker:<endpoint> target, which takes every content type\n",
    );
    expect(run.stdout).toBe('');
    expect(existsSync(join(out, 'csv', 'steps'))).toBe(false);
  }, 60_000);

  it('a one-request capture: a factor that samples none is not a failure, the search grows past it', async () => {
    const one = join(work, 'one');
    mkdirSync(one);
    writeFileSync(join(one, 'c.jsonl'), readFileSync(join(captures, 'c.jsonl'), 'utf8').split('\n')[0] + '\n');
    const out = join(work, 'one-out');
    const run = await runCli(['capacity', one, '--out', out, '--run-id', 'one', '--target', `A=${mock.url}`, '--streaming', ...QUICK, '--start-factor', '0.001', '--growth', '10', '--max-factor', '4']);
    expect(run.code, run.stderr).toBe(0);
    const [a] = documentOf(out, 'one').targets;
    expect(a).toMatchObject({ sustained_factor: 4, limited_by: 'cap' });
    const empty = a!.steps.filter((s) => s.requests === 0);
    expect(empty.length).toBeGreaterThan(0);
    expect(empty.every((s) => s.outcome === 'empty')).toBe(true);
    expect(run.stderr).toContain("A at 0.001x: 0 requests, goodput --, error rate --, time_to_first_token p99 --: no request at this factor: the window's requests sampled at 0.001x kept none\n");
  }, 60_000);
});

describe('smaller ones (finding 12)', () => {
  it('the warm-up says the requests it sent, and capacity.json counts them', async () => {
    const out = join(work, 'warm-up');
    const run = await capacity(out, 'warm', ['--target', `A=${mock.url}`, '--streaming', '--start-factor', '0.25', '--max-factor', '0.25']);
    expect(run.code, run.stderr).toBe(0);
    const sent = (JSON.parse(readFileSync(join(out, 'warm', 'steps', 'A-warm-up', 'A', 'run_manifest.json'), 'utf8')) as { fired: number }).fired;
    expect(sent).toBeLessThan(21);
    expect(run.stderr).toContain(`  A: warmed up with ${sent} request${sent === 1 ? '' : 's'} at 0.25x, not judged (steps/A-warm-up/)\n`);
    expect(documentOf(out, 'warm').search.warm_up_requests).toBe(sent);
  }, 60_000);

  it('a --run-id with an escape code: its usage error shows it escaped, as replay does', async () => {
    const run = await runCli(['capacity', captures, '--target', `A=${mock.url}`, '--goodput', 'time_to_first_token:300', '--run-id', 'a\u001b[2Jb', '--out', join(work, 'esc')]);
    expect(run.code).toBe(2);
    expect(run.stderr).not.toMatch(RAW_CONTROL);
    expect(run.stderr).toContain(`--run-id must be letters, digits, '.', '_' or '-' (got "a\\x1b[2Jb")`);
  }, 60_000);
});
