/**
 * Where the command line reads captures (captures-source.ts) loads the S3 client and its SDK only
 * for an s3:// location, at its first call: a replay of local captures starts without them. The
 * S3 modules are replaced here by ones that record being loaded, and captures-source is loaded
 * afresh after them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import type { CaptureObjects } from '../../../lambdas/core/scheduled-runs/window-plan';
import { captureLine } from '../../support/capture-week';

const loaded: string[] = [];
const listed: string[] = [];
const stubObjects = (bucket: string): CaptureObjects => ({
  describe: (key) => `s3://${bucket}/${key}`,
  listFolders: async (prefix) => (listed.push(prefix), []),
  listObjects: async () => [],
  open: async () => null,
});

async function freshCapturesSource() {
  vi.resetModules();
  vi.doMock(
    '../../../lambdas/adapters/aws/capture-listing',
    () => (
      loaded.push('capture-listing'), { s3CaptureObjects: (_client: unknown, bucket: string) => stubObjects(bucket) }
    ),
  );
  vi.doMock('../../../lambdas/local/s3-links', () => (loaded.push('s3-links'), { cliS3Client: () => ({}) }));
  return import('../../../lambdas/local/captures-source');
}

const dir = mkdtempSync(join(tmpdir(), 'cr-lazy-s3-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.doUnmock('../../../lambdas/adapters/aws/capture-listing');
  vi.doUnmock('../../../lambdas/local/s3-links');
  vi.resetModules();
  loaded.length = 0;
  listed.length = 0;
});

const spec = (capturesPath: string) => ({
  capturesPath,
  window: null,
  offsets: { startMs: 0, endMs: null },
  region: null,
});

describe('captures-source and the S3 modules', () => {
  it('reads local captures without loading capture-listing or s3-links', async () => {
    const file = join(dir, 'a.jsonl');
    writeFileSync(file, `${captureLine('e1', Date.UTC(2026, 3, 29, 10))}\n`);
    const { openCaptures } = await freshCapturesSource();
    const read = openCaptures(spec(file), new IngestReportBuilder());
    const ids: string[] = [];
    for await (const record of read.records) ids.push(record.eventId);
    expect(ids).toEqual(['e1']);
    expect(loaded).toEqual([]);
  });

  it('loads them for an s3:// location at its first call', async () => {
    const { openCaptures } = await freshCapturesSource();
    const read = openCaptures(spec('s3://capture-bucket/datacapture/'), new IngestReportBuilder());
    expect(loaded).toEqual([]);
    // The stub bucket is empty: listed through the loaded modules, then said to hold no captures.
    const consume = async () => {
      for await (const record of read.records) throw new Error(`no record expected, got ${record.eventId}`);
    };
    await expect(consume()).rejects.toThrow(/no Data Capture hour folders/);
    expect(loaded.sort()).toEqual(['capture-listing', 's3-links']);
    expect(listed.length).toBeGreaterThan(0);
  });
});
