/**
 * The results a run writes, checked against AIPerf's own output models by
 * scripts/aiperf-schema-check.py (pydantic + msgspec declarations written from AIPerf's
 * source). Needs python3 with pydantic and msgspec: skipped without them on a developer's
 * machine, a failure under CI (.ci/run installs them).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FsArtifactStore } from '../../../lambdas/adapters/local/fs-artifact-store';
import { writeTargetArtifacts } from '../../../lambdas/core/export/artifacts';
import { replayInputConfig } from '../../../lambdas/core/export/input-config';
import { buildManifest } from '../../../lambdas/core/export/manifest';
import { aggregate } from '../../../lambdas/core/metrics/aggregate';
import { computeProfileRecord } from '../../../lambdas/core/metrics/record-metrics';
import { OUTCOMES } from './fixtures';

const SCRIPT = join(import.meta.dirname, '..', '..', '..', 'scripts', 'aiperf-schema-check.py');
const probe = spawnSync('python3', ['-c', 'import pydantic, msgspec'], { encoding: 'utf8' });
const available = probe.status === 0;
const root = mkdtempSync(join(tmpdir(), 'aiperf-schema-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const records = OUTCOMES.filter((o) => o.result).map((o) => computeProfileRecord(o, 'record_processor_0'));
const manifest = buildManifest({
  runId: 'run-1',
  target: 'A',
  outcomes: OUTCOMES,
  notScheduledByReason: {},
  startedAt: '2026-04-29T00:00:00.000Z',
  endedAt: '2026-04-29T00:00:04.000Z',
});

async function writeRun(prefix: string, model: string | null): Promise<string> {
  await writeTargetArtifacts(new FsArtifactStore(root), prefix, {
    records,
    aggregates: aggregate(records),
    manifest,
    inputConfig: replayInputConfig({
      target: 'A',
      url: 'https://user:secret@llm.example:8443',
      path: '/v1/chat/completions',
      model,
      streaming: true,
      timeoutMs: 600_000,
      capture: 'samples/datacapture',
      limit: 10,
      maxInFlight: 32,
      extra: { run_id: 'run-1', schedule: { time_scale: 1 } },
    }),
    wasCancelled: false,
    startTime: '2026-04-29T00:00:00.000Z',
    endTime: '2026-04-29T00:00:04.000Z',
  });
  return join(root, prefix);
}

function check(folder: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync('python3', [SCRIPT, folder], { encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('AIPerf schema check', () => {
  it('python3 with pydantic and msgspec is available (required under CI)', () => {
    if (process.env.CI)
      expect(available, `python3 -c "import pydantic, msgspec" failed: ${probe.stderr || probe.error?.message}`).toBe(
        true,
      );
  });

  describe.skipIf(!available)('with python3, pydantic and msgspec', () => {
    it('accepts a run with --model: every record and the aggregate, input_config a valid BenchmarkConfig', {
      timeout: 60_000,
    }, async () => {
      const folder = await writeRun('with-model/A/', 'llama-3-8b');
      const result = check(folder);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(result.stdout).toContain('OK: 4 record(s)');
      const json = JSON.parse(readFileSync(join(folder, 'profile_export_aiperf.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      expect(json.input_config).toBeDefined();
      expect(JSON.stringify(json)).not.toContain('secret');
    });

    it('accepts a run without --model (no input_config)', { timeout: 60_000 }, async () => {
      const folder = await writeRun('no-model/A/', null);
      const result = check(folder);
      expect(result.status, result.stderr).toBe(0);
    });

    it('rejects a record with a key of ours in metadata, naming the line', { timeout: 60_000 }, async () => {
      const folder = await writeRun('bad-record/A/', 'm');
      const file = join(folder, 'profile_export.jsonl');
      const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
      const second = JSON.parse(lines[1]!) as { metadata: Record<string, unknown> };
      second.metadata.target = 'A';
      lines[1] = JSON.stringify(second);
      writeFileSync(file, lines.join('\n') + '\n');
      const result = check(folder);
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/profile_export\.jsonl:2: metadata\.target: Extra inputs are not permitted/);
      expect(result.stderr).not.toMatch(/profile_export\.jsonl:[134]:/);
    });

    it('rejects a metric value without its unit and an error without a message', { timeout: 60_000 }, async () => {
      const folder = await writeRun('bad-values/A/', 'm');
      const file = join(folder, 'profile_export.jsonl');
      const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
      const first = JSON.parse(lines[0]!) as { metrics: Record<string, unknown> };
      first.metrics.request_latency = { value: 80 };
      const fourth = JSON.parse(lines[3]!) as { error: Record<string, unknown> };
      delete fourth.error.message;
      lines[0] = JSON.stringify(first);
      lines[3] = JSON.stringify(fourth);
      writeFileSync(file, lines.join('\n') + '\n');
      const result = check(folder);
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/profile_export\.jsonl:1: metrics\.request_latency\.unit/);
      expect(result.stderr).toMatch(/profile_export\.jsonl:4: error\.message/);
    });

    it('rejects an input_config AIPerf would not load: unknown keys, a password in a URL', {
      timeout: 60_000,
    }, async () => {
      const folder = await writeRun('bad-config/A/', 'm');
      const file = join(folder, 'profile_export_aiperf.json');
      const json = JSON.parse(readFileSync(file, 'utf8')) as { input_config: Record<string, Record<string, unknown>> };
      json.input_config.tool = { name: 'capture-replay' };
      json.input_config.endpoint!.urls = ['https://user:pw@llm.example'];
      writeFileSync(file, JSON.stringify(json));
      const result = check(folder);
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/input_config\.tool: Extra inputs are not permitted/);
      expect(result.stderr).toMatch(/input_config\.endpoint\.urls: .*userinfo/);
    });
  });
});
