/**
 * The CLI's exit code with several targets, on a tabular (CSV) capture, as a user runs it: an
 * OpenAI-compatible mock server and the SageMaker mock runtime, each its own process, the
 * latter reached through the real SDK. A chat target that can take none of the records is
 * named ("took none of this capture") and does not fail a run the SageMaker target replayed;
 * the run fails when no target replayed anything, and when every request to a target failed.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startMockProcess, type MockProcess } from '../support/processes';
import { startMockSageMakerProcess } from '../support/sagemaker-mock';

const RECORDS = 6;
let dir: string;
let captures: string;
let http: MockProcess;
let runtime: MockProcess;
const env = () => ({
  AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: runtime.url,
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'AKIDTEST',
  AWS_SECRET_ACCESS_KEY: 'test-secret',
  AWS_PROFILE: '',
  AWS_SESSION_TOKEN: '',
});
const replay = (runId: string, targets: string[]) =>
  runCli(
    [
      'replay',
      captures,
      ...targets.flatMap((t) => ['--target', t]),
      '--time-scale',
      '4',
      '--out',
      join(dir, 'out'),
      '--run-id',
      runId,
      '--no-progress',
      '--resamples',
      '200',
      '--rehearsal',
      '0',
    ],
    { env: env() },
  );
const manifest = (runId: string, target: string) =>
  JSON.parse(readFileSync(join(dir, 'out', runId, target, 'run_manifest.json'), 'utf8')) as Record<string, unknown>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cr-exit-'));
  captures = join(dir, 'tabular.jsonl');
  const line = (i: number) =>
    JSON.stringify({
      captureData: {
        endpointInput: { observedContentType: 'text/csv', mode: 'INPUT', data: `${i},5.1,3.5,1.4`, encoding: 'CSV' },
        endpointOutput: {
          observedContentType: 'text/csv; charset=utf-8',
          mode: 'OUTPUT',
          data: '0.42',
          encoding: 'CSV',
        },
      },
      eventMetadata: { eventId: `tab-${i}`, inferenceTime: `2026-04-29T00:00:0${Math.floor(i / 2)}Z` },
      eventVersion: '0',
    });
  writeFileSync(captures, Array.from({ length: RECORDS }, (_, i) => line(i)).join('\n') + '\n');
  [http, runtime] = await Promise.all([
    startMockProcess(['--ttft-ms', '5', '--itl-ms', '1', '--output-tokens', '4']),
    startMockSageMakerProcess(['--ttft-ms', '5', '--itl-ms', '1', '--endpoint', 'tabular']),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([http?.stop(), runtime?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('exit code of a multi-target run on a tabular capture', () => {
  it('a chat target that takes none, next to a SageMaker target that replays all: exit 0, the chat target named', async () => {
    const run = await replay('ab', [`A=${http.url}`, 'B=sagemaker:tabular']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `A took none of this capture (${RECORDS} dropped: unsupported_content_type ${RECORDS})`,
    );
    expect(manifest('ab', 'A')).toMatchObject({ scheduled: RECORDS, fired: 0, dropped: RECORDS, balanced: true });
    expect(manifest('ab', 'B')).toMatchObject({ scheduled: RECORDS, succeeded: RECORDS, balanced: true });
  }, 120_000);

  it('the chat target alone: nothing replayed, exit 1', async () => {
    const run = await replay('chat-only', [`A=${http.url}`]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('A took none of this capture');
    expect(run.stderr).toContain('capture-replay: no target replayed any of this capture');
  }, 120_000);

  it('a SageMaker target whose every request fails (an unknown endpoint): exit 1 although another replayed', async () => {
    const run = await replay('one-fails', [`A=${http.url}`, 'B=sagemaker:tabular', 'C=sagemaker:no-such-endpoint']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('capture-replay: no request to C succeeded');
    expect(run.stderr).not.toContain('no target replayed');
    expect(manifest('one-fails', 'C')).toMatchObject({ fired: RECORDS, failed: RECORDS });
  }, 120_000);
});
