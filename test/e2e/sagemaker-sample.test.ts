/**
 * The bundled sample, CSV record included, replayed in one run against an OpenAI-compatible
 * server and a SageMaker endpoint (the bundled mocks, each its own process; the SageMaker
 * one reached through the real SDK via AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME): every record
 * accounted for on both targets, the CSV record dropped for the HTTP target with its reason
 * and replayed, byte-identical with its content type, on the SageMaker target.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, startMockProcess, type CliResult, type MockProcess } from '../support/processes';
import { readMockSageMakerLog, startMockSageMakerProcess } from '../support/sagemaker-mock';

const SAMPLE = join(REPO_ROOT, 'samples', 'datacapture');
const CSV_BODY = '5.1,3.5,1.4,0.2\n6.2,2.9,4.3,1.3';

let dir: string;
let http: MockProcess;
let runtime: MockProcess;
let run: CliResult;
const manifest = (target: string) =>
  JSON.parse(readFileSync(join(dir, 'out', 'sm', target, 'run_manifest.json'), 'utf8'));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cr-sm-'));
  [http, runtime] = await Promise.all([
    startMockProcess(['--ttft-ms', '20', '--itl-ms', '5', '--output-tokens', '8']),
    startMockSageMakerProcess([
      '--ttft-ms',
      '20',
      '--itl-ms',
      '5',
      '--output-tokens',
      '8',
      '--log',
      join(dir, 'sm.log'),
    ]),
  ]);
  run = await runCli(
    [
      'replay',
      SAMPLE,
      '--target',
      `A=${http.url}`,
      '--target',
      'B=sagemaker:demo-endpoint?variant=AllTraffic',
      '--streaming',
      '--time-scale',
      '4',
      '--out',
      join(dir, 'out'),
      '--run-id',
      'sm',
      '--no-progress',
      '--resamples',
      '200',
      '--rehearsal',
      '0',
    ],
    {
      env: {
        AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: runtime.url,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIDTEST',
        AWS_SECRET_ACCESS_KEY: 'test-secret',
        AWS_PROFILE: '',
        AWS_SESSION_TOKEN: '',
      },
    },
  );
}, 120_000);

afterAll(async () => {
  await Promise.all([http?.stop(), runtime?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('one run, an HTTP target and a SageMaker target', () => {
  it('exits 0 with both targets balanced over the same schedule', () => {
    expect(run.code).toBe(0);
    const [a, b] = [manifest('A'), manifest('B')];
    expect(a.balanced && b.balanced).toBe(true);
    expect(a.scheduled).toBe(b.scheduled);
    expect(b).toMatchObject({ succeeded: b.scheduled, failed: 0, dropped: 0 });
    expect(a).toMatchObject({
      dropped: 1,
      droppedByReason: { unsupported_content_type: 1 },
      succeeded: a.scheduled - 1,
    });
  });

  it('sends the CSV record to the SageMaker endpoint as captured, signed for sagemaker in the region', async () => {
    const log = await readMockSageMakerLog(join(dir, 'sm.log'));
    expect(log).toHaveLength(manifest('B').scheduled);
    const csv = log.filter((r) => r.headers['content-type'] === 'text/csv');
    expect(csv).toHaveLength(1);
    expect(Buffer.from(csv[0]!.body_base64, 'base64').toString('utf8')).toBe(CSV_BODY);
    expect(csv[0]!.path).toBe('/endpoints/demo-endpoint/invocations');
    expect(csv[0]!.headers['x-amzn-sagemaker-target-variant']).toBe('AllTraffic');
    expect(csv[0]!.headers.authorization).toMatch(/Credential=AKIDTEST\/\d{8}\/eu-west-1\/sagemaker\/aws4_request/);
    // Our request id is the InferenceId: the endpoint's own Data Capture joins back to the records.
    const records = readFileSync(join(dir, 'out', 'sm', 'B', 'profile_export.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const ids = new Set(records.map((r: { metadata: { x_request_id: string } }) => r.metadata.x_request_id));
    expect(log.every((r) => ids.has(r.headers['x-amzn-sagemaker-inference-id']!))).toBe(true);
  });

  it('the comparison counts the CSV pair as excluded, by reason', () => {
    const doc = JSON.parse(readFileSync(join(dir, 'out', 'sm', 'comparison.json'), 'utf8'));
    expect(doc.pairs.excluded.baseline_dropped).toBe(1);
    expect(doc.pairs.used).toBe(manifest('A').succeeded);
    expect(readdirSync(join(dir, 'out', 'sm')).sort()).toEqual([
      'A',
      'B',
      'comparison.json',
      'ingest_report.json',
      'report.html',
    ]);
  });
});
