/**
 * Data Capture read in place (adapters/aws/s3-captures.ts) on a memory bucket that counts its
 * calls (test/support/memory-captures.ts): a week of hour partitions, and what a window by
 * time or by offsets lists and reads. Only the partitions of the window and the hour after it
 * are listed for objects and opened; folders are listed only to find the variant folders and,
 * with an open side or offsets, the partitions that exist in range.
 */
import { describe, expect, it } from 'vitest';
import { partitionOf, readS3Captures, type CaptureSelection } from '../../../lambdas/adapters/aws/s3-captures';
import { CaptureLocationError } from '../../../lambdas/core/errors';
import { DuplicateFilter } from '../../../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import type { CaptureRecord } from '../../../lambdas/core/types';
import { captureWeek, HOUR_MS, partitionPath, type CaptureWeek } from '../../support/capture-week';
import { MemoryCaptureObjects } from '../../support/memory-captures';

function bucketOf(week: CaptureWeek, extra: Record<string, string> = {}): MemoryCaptureObjects {
  const objects = new MemoryCaptureObjects('captures');
  for (const [key, text] of week.files) objects.put(key, text);
  for (const [key, text] of Object.entries(extra)) objects.put(key, text);
  return objects;
}

async function read(objects: MemoryCaptureObjects, prefix: string, selection: CaptureSelection) {
  const report = new IngestReportBuilder();
  const read = readS3Captures(objects, prefix, selection, {
    report,
    duplicates: new DuplicateFilter(),
    nowMs: Date.now(),
  });
  const records: CaptureRecord[] = [];
  for await (const r of read.records) records.push(r);
  return { records, report: report.build(), readerFor: read.readerFor };
}

/** The objects of these hours' partitions (the late files of the hour before included: they are in the partition). */
const keysOfHours = (week: CaptureWeek, hours: number[]) =>
  [...week.files.keys()].filter((k) => hours.some((h) => k.startsWith(week.partitionPrefix(h)))).sort();

const week = captureWeek({ hours: 168 });
const at = (hour: number, minute = 0) => week.startMs + hour * HOUR_MS + minute * 60_000;

describe('a window by time', () => {
  it('lists and reads only the partitions of [from, to) and the hour after', async () => {
    const objects = bucketOf(week);
    const { records, report } = await read(objects, week.variantPrefix, {
      by: 'time',
      startMs: at(50, 30),
      endMs: at(52, 15),
    });
    expect(objects.calls.listObjects).toEqual([50, 51, 52, 53].map((h) => week.partitionPrefix(h)));
    expect([...objects.calls.open].sort()).toEqual(keysOfHours(week, [50, 51, 52, 53]));
    // Every record of the files read is handed on (the caller applies the window to them).
    expect(records.map((r) => r.eventId).sort()).toEqual(
      week.records
        .filter((r) => keysOfHours(week, [50, 51, 52, 53]).includes(r.key))
        .map((r) => r.eventId)
        .sort(),
    );
    expect(report.files.map((f) => f.file)).toEqual(
      keysOfHours(week, [50, 51, 52, 53]).map((k) => `s3://captures/${k}`),
    );
    // Folders: the variant's (to find its years) only; no hour folder is walked.
    expect(objects.calls.listFolders).toEqual([week.variantPrefix]);
  });

  it('with --from only: the partitions that exist from its hour on, found by walking only folders in range', async () => {
    const objects = bucketOf(week);
    await read(objects, week.variantPrefix, { by: 'time', startMs: at(160, 5), endMs: null });
    // Hours 160-167 and the partition of hour 167's late file.
    expect(objects.calls.listObjects).toEqual(
      [160, 161, 162, 163, 164, 165, 166, 167, 168].map((h) => week.partitionPrefix(h)),
    );
    const dayFolders = objects.calls.listFolders.filter((p) => /\/\d{4}\/\d{2}\/\d{2}\/$/.test(p));
    expect(dayFolders.every((p) => p >= `${week.variantPrefix}${partitionPath(at(160)).slice(0, 10)}/`)).toBe(true);
  });

  it('with --to only: from the first partition to the hour after', async () => {
    const objects = bucketOf(week);
    await read(objects, week.variantPrefix, { by: 'time', startMs: null, endMs: at(2, 30) });
    expect(objects.calls.listObjects).toEqual([0, 1, 2, 3].map((h) => week.partitionPrefix(h)));
  });

  it('an ETag changed between the listing and the read: the file skipped with its reason, the rest read', async () => {
    const objects = bucketOf(week);
    const changed = keysOfHours(week, [51])[0] as string;
    const original = objects.listObjects.bind(objects);
    objects.listObjects = async (prefix: string) => {
      const listed = await original(prefix);
      if (prefix === week.partitionPrefix(51)) objects.put(changed, 'rewritten\n');
      return listed;
    };
    const { report } = await read(objects, week.variantPrefix, { by: 'time', startMs: at(51), endMs: at(52) });
    expect(report.skippedFiles).toEqual([
      {
        file: `s3://captures/${changed}`,
        reason: expect.stringMatching(/^changed or deleted since it was listed \(ETag [0-9a-f]+\)$/) as string,
      },
    ]);
    expect(report.files.map((f) => f.file)).not.toContain(`s3://captures/${changed}`);
  });
});

describe('a window by offsets from the first record', () => {
  it('reads the first partition and the hour after, then only the partitions of [first + start, first + end]', async () => {
    const objects = bucketOf(week);
    // The first record is at hour 0 minute 10: +26 h to +27 h is 02:10 to 03:10 the next day.
    await read(objects, week.variantPrefix, { by: 'offsets', startOffsetMs: 26 * HOUR_MS, endOffsetMs: 27 * HOUR_MS });
    expect(objects.calls.listObjects).toEqual([0, 1, 26, 27, 28].map((h) => week.partitionPrefix(h)));
    expect([...objects.calls.open].sort()).toEqual(keysOfHours(week, [0, 1, 26, 27, 28]));
  });

  it('a first partition with nothing accepted in it: on to the next one that exists', async () => {
    const objects = new MemoryCaptureObjects('captures');
    const hours = [0, 5, 6, 7];
    for (const [key, text] of week.files)
      if (hours.some((h) => key.startsWith(week.partitionPrefix(h))))
        objects.put(key, key.startsWith(week.partitionPrefix(0)) ? 'not json\n' : text);
    const { records } = await read(objects, week.variantPrefix, {
      by: 'offsets',
      startOffsetMs: 0,
      endOffsetMs: 30 * 60_000,
    });
    expect(records.map((r) => r.eventId)).toContain('ev-5-10');
    expect(objects.calls.listObjects).toEqual([0, 1, 5, 6].map((h) => week.partitionPrefix(h)));
  });
});

describe('the location', () => {
  it('the capture prefix, an endpoint folder and a variant folder read the same files', async () => {
    const selection: CaptureSelection = { by: 'time', startMs: at(10), endMs: at(11) };
    const names: string[][] = [];
    for (const prefix of ['datacapture/', 'datacapture', 'datacapture/week-endpoint/', week.variantPrefix]) {
      names.push((await read(bucketOf(week), prefix, selection)).report.files.map((f) => f.file));
    }
    expect(names.every((n) => JSON.stringify(n) === JSON.stringify(names[0]))).toBe(true);
    expect(names[0]).toHaveLength(keysOfHours(week, [10, 11]).length);
  });

  it('a prefix without hour partitions is an error naming what to give', async () => {
    const objects = bucketOf(week, { 'other/notes/a.jsonl': '' });
    await expect(read(objects, 'other/', { by: 'time', startMs: null, endMs: null })).rejects.toThrow(
      CaptureLocationError,
    );
    await expect(read(objects, 'other/', { by: 'time', startMs: null, endMs: null })).rejects.toThrow(
      /^no Data Capture hour folders \(yyyy\/mm\/dd\/hh\/\) under s3:\/\/captures\/other\/: give/,
    );
  });

  it('one .jsonl object: read whole; a missing one is an error', async () => {
    const objects = bucketOf(week);
    const key = keysOfHours(week, [3])[0] as string;
    const { records, readerFor } = await read(objects, key, { by: 'time', startMs: null, endMs: null });
    expect(records.length).toBeGreaterThan(0);
    expect(typeof readerFor(`s3://captures/${key}`)).toBe('function');
    expect(() => readerFor('s3://captures/elsewhere.jsonl')).toThrow(/was not read in pass 1/);
    await expect(read(objects, 'datacapture/none.jsonl', { by: 'time', startMs: null, endMs: null })).rejects.toThrow(
      /^no object s3:\/\/captures\/datacapture\/none\.jsonl$/,
    );
  });

  it('other objects of a partition and folders without years are listed as skipped, with s3:// names', async () => {
    const objects = bucketOf(week, {
      [`${week.partitionPrefix(20)}_SUCCESS`]: '',
      'datacapture/stray/notes/readme.txt': '',
    });
    const { report } = await read(objects, 'datacapture/', { by: 'time', startMs: at(20), endMs: at(21) });
    expect(report.skippedFiles).toEqual(
      expect.arrayContaining([
        { file: `s3://captures/${week.partitionPrefix(20)}_SUCCESS`, reason: 'not a .jsonl file' },
        {
          file: 's3://captures/datacapture/stray/notes/',
          reason: 'a folder without Data Capture year folders (yyyy/): not read',
        },
      ]),
    );
  });
});

it('partitionOf is the UTC hour', () => {
  expect(partitionOf(Date.UTC(2026, 3, 29, 23, 59, 59, 999))).toBe('2026/04/29/23');
  expect(partitionOf(Date.UTC(2026, 3, 30))).toBe('2026/04/30/00');
});
