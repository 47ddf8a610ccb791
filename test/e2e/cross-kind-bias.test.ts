/**
 * One clock for every kind of target: an HTTP target and a SageMaker target behind two mocks
 * told the same first-token delay must measure the same TTFT and latency. Both start their
 * request's time on the wire (wire-stamps.ts); before that, the HTTP target started before
 * undici's dispatch and the SageMaker target after signing, and the SageMaker side measured
 * about 1.1 ms less (a false `better` on a 40 ms TTFT). The CLI replays 300 requests to both
 * at once, each mock in its own process.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ComparisonDocument } from '../../lambdas/core/compare/types';
import { writeCaptureFile } from '../support/capture-gen';
import { runCli, startMockProcess, type MockProcess } from '../support/processes';
import { startMockSageMakerProcess } from '../support/sagemaker-mock';
import { retryTimingOnce, tolerance } from '../support/timing';

let dir: string;
let http: MockProcess;
let sagemaker: MockProcess;
let doc: ComparisonDocument;

const MOCK = ['--ttft-ms', '40', '--itl-ms', '5', '--output-tokens', '8'];
/**
 * The paired TTFT/latency shift allowed between two identical endpoints. Load widens it
 * (timing.ts), but never to the old bias (~1.1 ms), which this test exists to catch: the
 * median of paired differences cancels what load does to both targets at the same instants.
 */
const MAX_SHIFT_MS = 0.5;
const CEILING_MS = 0.8;
const shiftLimit = () => Math.min(tolerance('cross-kind shift', MAX_SHIFT_MS), CEILING_MS);

const shiftOf = (d: ComparisonDocument, tag: string) =>
  d.metrics.find((m) => m.tag === tag)?.paired_shift?.difference.estimate ?? NaN;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cr-kinds-'));
  const captures = join(dir, 'captures.jsonl');
  await writeCaptureFile(captures, {
    ratePerSecond: 30,
    durationSeconds: 10,
    startTime: Date.UTC(2026, 10, 20),
    seed: 11,
    bodyBytes: 600,
  });
  [http, sagemaker] = await Promise.all([
    startMockProcess(MOCK),
    startMockSageMakerProcess([...MOCK, '--endpoint', 'ep']),
  ]);
  const env = {
    ...process.env,
    AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: sagemaker.url,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_CONFIG_FILE: join(dir, 'none'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
  };
  const out = join(dir, 'out');
  const replay = async (id: string) => {
    const run = await runCli(
      [
        'replay',
        captures,
        '--target',
        `http=${http.url}`,
        '--target',
        'sm=sagemaker:ep',
        '--streaming',
        '--out',
        out,
        '--run-id',
        id,
        '--no-progress',
        '--resamples',
        '500',
      ],
      { env },
    );
    if (run.code !== 0) throw new Error(`replay exited ${run.code}: ${run.stderr}`);
    return JSON.parse(readFileSync(join(out, id, 'comparison.json'), 'utf8')) as ComparisonDocument;
  };
  const limit = shiftLimit();
  ({ result: doc } = await retryTimingOnce(
    'HTTP vs SageMaker on identical mocks',
    (n) => replay(`kinds-${n}`),
    (d) =>
      ['time_to_first_token', 'request_latency'].flatMap((tag) =>
        Math.abs(shiftOf(d, tag)) <= limit
          ? []
          : [`${tag} shift ${shiftOf(d, tag).toFixed(2)} ms > ${limit.toFixed(2)}`],
      ),
  ));
}, 180_000);

afterAll(async () => {
  await Promise.all([http?.stop(), sagemaker?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

it('identical endpoints of two kinds: TTFT and latency agree within half a millisecond, no verdict either way', () => {
  const limit = shiftLimit();
  expect(doc.pairs.used).toBe(300);
  for (const tag of ['time_to_first_token', 'request_latency']) {
    expect(Math.abs(shiftOf(doc, tag)), tag).toBeLessThanOrEqual(limit);
    expect(['better', 'worse']).not.toContain(doc.metrics.find((m) => m.tag === tag)?.verdict);
  }
});
