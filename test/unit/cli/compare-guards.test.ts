/**
 * `capture-replay compare` on results folders written to disk (lambdas/local/compare/): what
 * it says about runs that did not finish, unpaired counts, records that cannot be right,
 * names a folder or --names controls, and an --out that already holds a comparison.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { compareCommand, type CompareCommandOptions } from '../../../lambdas/local/compare/command';

const work = mkdtempSync(join(tmpdir(), 'cr-compare-command-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface FolderSpec {
  /** Capture event ids, one record each. */
  ids: string[];
  /** time_to_first_token per record, ms (default 50 + i % 7). */
  ttft?: (i: number) => number;
  /** The manifest's fields; none written when null. */
  manifest?: Record<string, unknown> | null;
  wasCancelled?: boolean;
}

/** A target's results folder as `replay` writes it. */
function folder(path: string, spec: FolderSpec): string {
  const dir = join(work, path);
  mkdirSync(dir, { recursive: true });
  const ttft = spec.ttft ?? ((i: number) => 50 + (i % 7));
  const lines = spec.ids.map((id, i) =>
    JSON.stringify({
      metadata: {
        session_num: i,
        x_request_id: `r-${i}`,
        conversation_id: id,
        turn_index: 0,
        request_start_ns: 1_000_000 + i * 1000,
      },
      metrics: {
        time_to_first_token: { value: ttft(i), unit: 'ms' },
        request_latency: { value: ttft(i) + 100, unit: 'ms' },
      },
      error: null,
      capture_replay: { capture_event_id: id, scheduled_ns: 1_000_000 + i * 1000, schedule_lag_ms: 0.5 },
    }),
  );
  writeFileSync(join(dir, 'profile_export.jsonl'), lines.join('\n') + '\n');
  const n = spec.ids.length;
  if (spec.manifest !== null) {
    writeFileSync(
      join(dir, 'run_manifest.json'),
      JSON.stringify({
        scheduled: n,
        fired: n,
        succeeded: n,
        failed: 0,
        dropped: 0,
        droppedByReason: {},
        failedByType: {},
        balanced: true,
        ...spec.manifest,
      }),
    );
  }
  writeFileSync(join(dir, 'profile_export_aiperf.json'), JSON.stringify({ was_cancelled: spec.wasCancelled ?? false }));
  return dir;
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

async function compare(dirs: string[], options: Partial<CompareCommandOptions> = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await compareCommand({ dirs, pairing: 'auto', resamples: 200, stdout, stderr, ...options });
  return { code, stdout: out, stderr: err };
}

// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('compare: a run that did not finish', () => {
  const done = folder('partial/A', { ids: ids('e', 400) });
  const stopped = folder('partial/B', {
    ids: ids('e', 400).slice(0, 75),
    manifest: { scheduled: 400, fired: 75, succeeded: 75, dropped: 325, droppedByReason: { aborted: 325 } },
    wasCancelled: true,
  });
  const unfinished = folder('partial/C', { ids: ids('e', 400).slice(0, 120), manifest: null });

  it('a cancelled run: refused (exit 1), saying what was found and how to compare anyway', async () => {
    const run = await compare([done, stopped]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `capture-replay compare: ${stopped}: the run was stopped before its end (325 of 400 requests dropped ` +
        `as aborted): its verdict would be on part of the run only; compare it anyway with --allow-partial\n`,
    );
    expect(run.stdout).toBe('');
  });

  it('a run without its manifest (still running, or killed): refused too', async () => {
    const run = await compare([done, unfinished]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `${unfinished}: no run_manifest.json: the run has not finished (still running, or stopped before writing it)`,
    );
  });

  it('--allow-partial compares them, and says so on stderr', async () => {
    const run = await compare([done, stopped], { allowPartial: true });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      `${stopped}: the run was stopped before its end (325 of 400 requests dropped as aborted): compared ` +
        `anyway (--allow-partial), the verdict is on what it sent only`,
    );
    expect(run.stdout).toMatch(/^B vs A: unpaired, 75 requests of B and 400 of A compared$/m);
  });

  it("AIPerf's folders (no manifest of ours) are finished unless was_cancelled says otherwise", async () => {
    const aiperf = (name: string, cancelled: boolean) => {
      const dir = join(work, 'aiperf', name);
      mkdirSync(dir, { recursive: true });
      const lines = ids('c', 50).map((id, i) =>
        JSON.stringify({
          metadata: { session_num: i, conversation_id: id, turn_index: 0 },
          metrics: { time_to_first_token: { value: 40 + (i % 5), unit: 'ms' } },
          error: null,
        }),
      );
      writeFileSync(join(dir, 'profile_export.jsonl'), lines.join('\n') + '\n');
      writeFileSync(join(dir, 'profile_export_aiperf.json'), JSON.stringify({ was_cancelled: cancelled }));
      return dir;
    };
    expect((await compare([aiperf('A', false), aiperf('B', false)])).code).toBe(0);
    const cancelled = await compare([aiperf('C', false), aiperf('D', true)]);
    expect(cancelled.code).toBe(1);
    expect(cancelled.stderr).toContain('the run was cancelled (was_cancelled in profile_export_aiperf.json)');
  });
});

describe('compare: counts', () => {
  it('unpaired: each side its own count, not both added as "per side"', async () => {
    const run = await compare([folder('apart/A', { ids: ids('a', 300) }), folder('apart/B', { ids: ids('b', 300) })]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^B vs A: unpaired, 300 requests of B and 300 of A compared$/m);
    expect(run.stdout).not.toContain('600');
  });

  it('a record with a negative latency is left out and counted with its reason, never compared', async () => {
    const a = folder('negative/A', { ids: ids('e', 60), ttft: (i) => (i < 40 ? -2.15 : 50) });
    const b = folder('negative/B', { ids: ids('e', 60) });
    const run = await compare([a, b], { out: join(work, 'negative/out'), pairing: 'paired' });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`capture-replay compare: ${a}: 40 record(s) left out: negative time_to_first_token\n`);
    const doc = JSON.parse(readFileSync(join(work, 'negative/out/comparison.json'), 'utf8')) as {
      comparisons: {
        pairs: { used: number; excluded: Record<string, number> };
        metrics: { tag: string; baseline: { mean: number } }[];
      }[];
    };
    const [c] = doc.comparisons;
    expect(c?.pairs.used).toBe(20);
    expect(c?.pairs.excluded.only_in_candidate).toBe(40);
    expect(c?.metrics.find((m) => m.tag === 'time_to_first_token')?.baseline.mean).toBeGreaterThan(0);
  });
});

describe('compare: names on the terminal', () => {
  it('folder names and --names: control characters shown escaped, never sent to the terminal', async () => {
    const evil = '\x1b]0;PWNED\x07\x1b[31mRED';
    const a = folder(`names/${evil}A`, { ids: ids('e', 30) });
    const b = folder('names/B', { ids: ids('e', 30) });
    const byFolder = await compare([a, b]);
    expect(byFolder.code).toBe(0);
    expect(byFolder.stdout).not.toMatch(RAW_CONTROL);
    expect(byFolder.stdout).toContain('B vs \\x1b]0;PWNED\\x07\\x1b[31mREDA: paired');
    const byNames = await compare([a, b], { names: `base\nline,cand${evil}` });
    expect(byNames.stdout).not.toMatch(RAW_CONTROL);
    expect(byNames.stdout).toContain('cand\\x1b]0;PWNED\\x07\\x1b[31mRED vs base\\x0aline: paired');
    const missing = await compare([join(work, `names/none${evil}`), b]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).not.toMatch(RAW_CONTROL);
    expect(missing.stderr).toContain('none\\x1b]0;PWNED');
  });
});

describe('compare --out', () => {
  const a = folder('out/run/A', { ids: ids('e', 30) });
  const b = folder('out/run/B', { ids: ids('e', 30), ttft: () => 60 });

  it("refuses to replace a run folder's comparison and report (exit 2), unless --overwrite", async () => {
    const runDir = join(work, 'out/run');
    writeFileSync(join(runDir, 'comparison.json'), '{"the":"run\'s own"}\n');
    writeFileSync(join(runDir, 'report.html'), "<p>the run's own</p>\n");
    const refused = await compare([a, b], { out: runDir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      `capture-replay compare: --out ${runDir} already holds comparison.json and report.html: give another ` +
        `--out, or --overwrite to replace them\nRun 'capture-replay compare --help' for the options.\n`,
    );
    expect(readFileSync(join(runDir, 'comparison.json'), 'utf8')).toBe('{"the":"run\'s own"}\n');
    const replaced = await compare([a, b], { out: runDir, overwrite: true });
    expect(replaced.code).toBe(0);
    expect(readFileSync(join(runDir, 'comparison.json'), 'utf8')).toContain('"comparisons"');
    expect(readFileSync(join(runDir, 'report.html'), 'utf8')).toContain('<!doctype html>');
  });

  it('writes to a new folder, or one that holds no comparison', async () => {
    const fresh = join(work, 'out/fresh');
    expect((await compare([a, b], { out: fresh })).code).toBe(0);
    expect(readFileSync(join(fresh, 'comparison.json'), 'utf8')).toContain('"comparisons"');
    // The same --out again: now it holds one.
    expect((await compare([a, b], { out: fresh })).code).toBe(2);
  });
});
