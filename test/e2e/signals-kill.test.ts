/**
 * `kill -9` of the CLI (its own process) while the results are being written: the run is
 * visibly incomplete (no manifest) and no file under its final name is cut off.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARTIAL_FILE_PREFIX } from '../../lambdas/adapters/local/fs-artifact-store';
import { loggedArrivals, startCli, startMockProcess } from '../support/processes';
import { signalCaptures } from '../support/signal-captures';
import { until } from '../support/until';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cr-signals-kill-'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kill -9 while the results are written', () => {
  it('leaves no manifest and no file cut off under its final name', async () => {
    // Many streams: a large profile_export.jsonl, long to write: its size is the kill's margin.
    // Records make it large, not tokens: the tokens the CLI reads in one chunk have inter-chunk
    // latencies of 0, a few bytes each.
    const log = join(dir, 'fast.log');
    const fast = await startMockProcess([
      '--ttft-ms',
      '0',
      '--itl-ms',
      '0',
      '--output-tokens',
      '100',
      '--no-precise-timers',
      '--log',
      log,
    ]);
    try {
      const folder = signalCaptures(dir, 'crash', 8000, 2000);
      const runDir = join(dir, 'out', 'crash');
      const targetDir = join(runDir, 'target');
      const cli = startCli([
        'replay',
        folder,
        '--url',
        fast.url,
        '--streaming',
        '--out',
        join(dir, 'out'),
        '--run-id',
        'crash',
        '--no-progress',
        '--lead',
        '200',
        '--timeout',
        '60000',
        '--rehearsal',
        '0',
      ]);
      // The run folder appears at the start (ingest report); the target's folder once its
      // results are being written: kill the moment the first of them has its final name (the
      // small ones come first; the large records file is still being written then).
      await until(() => existsSync(runDir) || cli.child.exitCode !== null, 'the run folder', 60_000);
      await new Promise<void>((resolve, reject) => {
        const finalFile = () =>
          existsSync(targetDir) && readdirSync(targetDir).some((f) => !f.startsWith(PARTIAL_FILE_PREFIX));
        const kill = () => {
          cli.child.kill('SIGKILL');
          resolve();
        };
        const runWatcher = watch(runDir, (_event, name) => {
          if (name !== 'target') return;
          runWatcher.close();
          const targetWatcher = watch(targetDir, (_e, file) => {
            if (file && !file.startsWith(PARTIAL_FILE_PREFIX)) {
              targetWatcher.close();
              kill();
            }
          });
          if (finalFile()) {
            targetWatcher.close();
            kill();
          }
        });
        void cli.done.then(() => reject(new Error('the CLI finished before it was killed')));
      });
      const seen = readdirSync(targetDir);
      const result = await cli.done;
      expect(result.code).toBeNull();
      const files = readdirSync(targetDir);
      // What the kill found: something being written, not a finished run.
      expect(
        seen.some((f) => f.startsWith(PARTIAL_FILE_PREFIX)),
        `files when killed: ${seen.join(', ')}`,
      ).toBe(true);
      // The run is visibly incomplete: no manifest...
      expect(files).not.toContain('run_manifest.json');
      // ... and a file under its final name is whole.
      for (const name of files.filter((f) => !f.startsWith(PARTIAL_FILE_PREFIX))) {
        const text = readFileSync(join(targetDir, name), 'utf8');
        if (name.endsWith('.jsonl')) {
          expect(text.endsWith('\n')).toBe(true);
          const lines = text.trim().split('\n');
          for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
          // The mock writes its log of arrivals as it goes: on a busy machine it may still be
          // writing the last lines when the killed CLI's records are read.
          await until(() => loggedArrivals(log) >= lines.length, `the mock's log of ${lines.length} arrivals`, 15_000);
          expect(lines).toHaveLength(loggedArrivals(log));
        } else if (name.endsWith('.json')) expect(() => JSON.parse(text)).not.toThrow();
        else expect(text.length).toBeGreaterThan(0);
      }
    } finally {
      await fast.stop();
    }
  }, 180_000);
});
