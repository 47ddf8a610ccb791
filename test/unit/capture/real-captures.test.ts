/**
 * Inputs we did not write (test/fixtures/real-captures/README.md names each source): Data
 * Capture files committed to aws/sagemaker-python-sdk, and the capture-record inputs of
 * AIPerf's own SageMaker Data Capture loader tests, one file per test. Each is read with the
 * CLI's reader: nothing crashes, every line is accounted for (blank, accepted, or rejected
 * under one reason), content types are as declared or inferred, and each target kind takes
 * what it can. For AIPerf's cases our outcome is set beside AIPerf's expectation, and where
 * they differ the comment says why.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCaptures } from '../../../lambdas/adapters/local/capture-files';
import { DuplicateFilter, isLive } from '../../../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { buildPlan } from '../../../lambdas/core/plan/plan';
import type { CaptureRecord, IngestReport, RejectReason, TargetKind } from '../../../lambdas/core/types';
import { REPO_ROOT } from '../../support/processes';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/real-captures');

async function read(path: string): Promise<{ report: IngestReport; records: CaptureRecord[] }> {
  const report = new IngestReportBuilder();
  const records: CaptureRecord[] = [];
  for await (const record of readCaptures(path, report, new DuplicateFilter())) records.push(record);
  return { report: report.build(), records: records.filter(isLive) };
}

const plan = (records: CaptureRecord[], targetKind: TargetKind) =>
  buildPlan(records, { runId: 'real', targetKind, timeScale: 1, intraSecond: 'spread' });

function everyLineAccountedFor(report: IngestReport): void {
  for (const f of report.files) expect(f.linesRead, f.file).toBe(f.blankLines + f.accepted + f.rejected);
  expect(report.skippedFiles).toEqual([]);
}

describe('aws/sagemaker-python-sdk test data', () => {
  it(
    'legacy/tests/data/monitor/captured-data.jsonl: two JSON records; a chat target drops them (no messages), ' +
      'a SageMaker target sends them as captured, asking for JSON',
    async () => {
      const path = join(FIXTURES, 'sagemaker-python-sdk/legacy-tests-data-monitor-captured-data.jsonl');
      const { report, records } = await read(path);
      everyLineAccountedFor(report);
      expect(report.totals).toMatchObject({ linesRead: 2, accepted: 2, rejected: 0, contentTypeInferred: 0 });
      expect(records.map((r) => [r.input.contentType, r.output?.contentType])).toEqual([
        ['application/json', 'application/json'],
        ['application/json', 'application/json'],
      ]);
      expect(plan(records, 'openai-chat').incompatible.map((i) => i.reason)).toEqual([
        'not_chat_request',
        'not_chat_request',
      ]);
      const requests = plan(records, 'sagemaker').requests;
      expect(requests.map((r) => [Buffer.from(r.body).toString(), r.contentType, r.accept])).toEqual([
        ['{"instances": [1.0, 2.0, 5.0]}', 'application/json', 'application/json'],
        ['{"instances": [1.0, 2.0, 5.0]}', 'application/json', 'application/json'],
      ]);
    },
  );

  it(
    'tests/data/monitor/capture.jsonl as committed: a template whose inferenceTime is "{%s}", every line ' +
      'bad_inference_time, nothing else',
    async () => {
      const { report } = await read(join(FIXTURES, 'sagemaker-python-sdk/tests-data-monitor-capture.jsonl'));
      everyLineAccountedFor(report);
      // The last line has no newline: a complete JSON value keeps its own verdict.
      expect(report.totals).toMatchObject({
        linesRead: 44,
        accepted: 0,
        rejected: 44,
        rejectedByReason: { bad_inference_time: 44 },
      });
    },
  );

  it(
    'tests/data/monitor/capture.jsonl with its template filled as the SDK\u2019s test fills it: 44 CSV ' +
      'records, dropped by a chat target, replayed as text/csv to SageMaker',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'cr-real-'));
      try {
        const text = readFileSync(
          join(FIXTURES, 'sagemaker-python-sdk/tests-data-monitor-capture.jsonl'),
          'utf8',
        ).replaceAll('{%s}', '2026-04-29T00:00:00Z');
        await writeFile(join(dir, 'capture.jsonl'), text);
        const { report, records } = await read(dir);
        everyLineAccountedFor(report);
        expect(report.totals).toMatchObject({ linesRead: 44, accepted: 44, rejected: 0 });
        expect(new Set(records.map((r) => r.input.contentType))).toEqual(new Set(['text/csv']));
        const chat = plan(records, 'openai-chat');
        expect(chat.requests).toHaveLength(0);
        expect(chat.incompatible.every((i) => i.reason === 'unsupported_content_type')).toBe(true);
        const requests = plan(records, 'sagemaker').requests;
        expect(requests).toHaveLength(44);
        expect(requests.every((r) => r.contentType === 'text/csv' && r.accept === 'text/csv')).toBe(true);
        expect(Buffer.from(requests[0]!.body).toString()).toBe('9,45,45,42,7,5,0');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});

interface Outcome {
  /** Lines read, blank, accepted; rejections by reason. */
  lines: number;
  blank?: number;
  accepted: number;
  rejected?: Partial<Record<RejectReason, number>>;
  /** The accepted records' input content type, and how many were inferred. */
  type?: string;
  inferred?: number;
  /** The output content type of the accepted records (null: none declared, no Accept). */
  output?: string | null;
  /** What a chat target does with the accepted records: replays them, or drops them with this reason. */
  chat?: 'replayed' | 'not_chat_request';
}

/**
 * AIPerf's Data Capture loader tests (ai-dynamo/aiperf
 * tests/unit/dataset/loader/test_sagemaker_data_capture.py): per test, what AIPerf expects of
 * its input, and what we make of the same input.
 */
const AIPERF_CASES: [file: string, aiperf: string, ours: Outcome][] = [
  [
    'test_parse_trace_extracts_messages.jsonl',
    'the messages are read',
    { lines: 1, accepted: 1, type: 'application/json', inferred: 0, output: 'application/json', chat: 'replayed' },
  ],
  [
    'test_parse_trace_handles_base64_encoding.jsonl',
    'BASE64 input and output decoded',
    { lines: 1, accepted: 1, type: 'application/json', inferred: 0, output: 'application/json', chat: 'replayed' },
  ],
  // No content type, as AIPerf writes several of its inputs. AIPerf reads such a record as
  // chat; we infer application/json from `"encoding": "JSON"`, count it as inferred, and a chat
  // target replays it (before issue 18 it was octet-stream and dropped).
  [
    'test_parse_trace_missing_endpoint_output_sets_none_lengths.jsonl',
    'read as chat, no output lengths',
    { lines: 1, accepted: 1, type: 'application/json', inferred: 1, chat: 'replayed' },
  ],
  [
    'test_parse_trace_uses_max_completion_tokens_field.jsonl',
    'read as chat, output_length 200 from max_completion_tokens',
    { lines: 1, accepted: 1, type: 'application/json', inferred: 1, output: null, chat: 'replayed' },
  ],
  [
    'test_parse_trace_csv_output_encoding_gives_none_usage.jsonl',
    'read as chat, no token counts from a CSV output',
    { lines: 1, accepted: 1, type: 'application/json', inferred: 1, output: null, chat: 'replayed' },
  ],
  [
    'test_parse_trace_extracts_tools.jsonl',
    'read as chat, tools kept',
    { lines: 1, accepted: 1, type: 'application/json', inferred: 1, output: null, chat: 'replayed' },
  ],
  // AIPerf refuses a body without messages at load; we keep the record: a chat target drops it
  // with its reason, a SageMaker target replays it.
  [
    'test_parse_trace_rejects_missing_messages.jsonl',
    "DatasetLoaderError: no 'messages' key",
    {
      lines: 1,
      accepted: 1,
      type: 'application/json',
      inferred: 0,
      output: 'application/json',
      chat: 'not_chat_request',
    },
  ],
  // The same eventId and body at different times is one record to us, replayed once (the
  // earliest copy: its time is the schedule's zero); AIPerf replays every line.
  [
    'test_load_single_file.jsonl',
    'two traces',
    { lines: 2, accepted: 1, rejected: { duplicate: 1 }, type: 'application/json', chat: 'replayed' },
  ],
  [
    'test_load_single_file_sorts_by_timestamp.jsonl',
    'three traces sorted by time',
    { lines: 3, accepted: 1, rejected: { duplicate: 2 }, type: 'application/json', chat: 'replayed' },
  ],
  [
    'test_timestamps_are_zero_aligned.jsonl',
    'three traces at 0, 2000 and 4000 ms',
    { lines: 3, accepted: 1, rejected: { duplicate: 2 }, type: 'application/json', chat: 'replayed' },
  ],
  [
    'test_load_skips_empty_lines.jsonl',
    'two traces, blank lines skipped',
    { lines: 4, blank: 2, accepted: 1, rejected: { duplicate: 1 }, type: 'application/json', chat: 'replayed' },
  ],
  [
    'test_load_directory_sorts_by_timestamp',
    'three traces from three files, sorted by time',
    { lines: 3, accepted: 1, rejected: { duplicate: 2 }, type: 'application/json', chat: 'replayed' },
  ],
  // AIPerf stops the whole load at the first bad line; we count it and read on.
  [
    'test_invalid_json_line_raises_dataset_loader_error.jsonl',
    'DatasetLoaderError: Invalid JSON (the load fails)',
    { lines: 1, accepted: 0, rejected: { invalid_json: 1 } },
  ],
  [
    'test_parse_trace_invalid_base64_input_raises_dataset_loader_error.jsonl',
    'DatasetLoaderError: payload decode failed',
    { lines: 1, accepted: 0, rejected: { bad_base64: 1 } },
  ],
  // With its type inferred as JSON the body is checked as JSON (before issue 18 it was accepted
  // as octet-stream and would have been sent as is).
  [
    'test_parse_trace_invalid_inner_json_raises_dataset_loader_error.jsonl',
    'DatasetLoaderError: payload decode failed',
    { lines: 1, accepted: 0, rejected: { bad_inner_json: 1 } },
  ],
  [
    'test_parse_trace_malformed_inference_time_raises_dataset_loader_error.jsonl',
    'DatasetLoaderError: malformed inferenceTime',
    { lines: 1, accepted: 0, rejected: { bad_inference_time: 1 } },
  ],
  [
    'test_parse_trace_missing_event_metadata_raises_dataset_loader_error.jsonl',
    'DatasetLoaderError: missing required field',
    { lines: 1, accepted: 0, rejected: { missing_field: 1 } },
  ],
  [
    'test_parse_trace_missing_capture_data_raises_dataset_loader_error.jsonl',
    'DatasetLoaderError: captureData.endpointInput',
    { lines: 1, accepted: 0, rejected: { missing_field: 1 } },
  ],
  ['test_load_dataset_empty_file_returns_empty.jsonl', 'no traces', { lines: 0, accepted: 0 }],
  // can_load only looks at the shape to pick a loader: a record without `data` passes it, and
  // cannot be replayed.
  ['test_can_load_with_valid_data.jsonl', 'can_load: true', { lines: 1, accepted: 0, rejected: { missing_field: 1 } }],
  [
    'test_can_load_rejects_non_capture_data.jsonl',
    'can_load: false',
    { lines: 1, accepted: 0, rejected: { missing_field: 1 } },
  ],
  [
    'test_can_load_rejects_directory_with_non_capture_jsonl.jsonl',
    'can_load: false',
    { lines: 1, accepted: 0, rejected: { missing_field: 1 } },
  ],
  // Three bytes that are not UTF-8, no newline: a last line cut off mid-write.
  [
    'test_can_load_returns_false_for_corrupt_file.jsonl',
    'can_load: false',
    { lines: 1, accepted: 0, rejected: { truncated_line: 1 } },
  ],
];

describe("AIPerf's SageMaker Data Capture loader test inputs", () => {
  it.each(AIPERF_CASES)('%s (AIPerf: %s)', async (file, _aiperf, ours) => {
    const { report, records } = await read(join(FIXTURES, 'aiperf', file));
    everyLineAccountedFor(report);
    expect(report.totals).toMatchObject({
      linesRead: ours.lines,
      blankLines: ours.blank ?? 0,
      accepted: ours.accepted,
      rejectedByReason: ours.rejected ?? {},
    });
    expect(records).toHaveLength(ours.accepted);
    if (ours.type !== undefined) expect(new Set(records.map((r) => r.input.contentType))).toEqual(new Set([ours.type]));
    if (ours.inferred !== undefined) expect(report.totals.contentTypeInferred).toBe(ours.inferred);
    if (ours.output !== undefined)
      expect(records.map((r) => r.output?.contentType)).toEqual(records.map(() => ours.output));
    if (ours.chat) {
      const chat = plan(records, 'openai-chat');
      if (ours.chat === 'replayed') expect(chat.requests).toHaveLength(records.length);
      else expect(chat.incompatible.map((i) => i.reason)).toEqual(records.map(() => ours.chat));
      // A SageMaker target takes every accepted record, as captured.
      expect(plan(records, 'sagemaker').requests.map((r) => Buffer.from(r.body).toString())).toEqual(
        records.map((r) => Buffer.from(r.input.body).toString()),
      );
    }
  });

  it('the copies of one event in three files keep the earliest: the :01 copy of hour_b/b.jsonl, the schedule starting there', async () => {
    const { records } = await read(join(FIXTURES, 'aiperf/test_load_directory_sorts_by_timestamp'));
    expect(records.map((r) => r.source.file.split('/').slice(-2).join('/'))).toEqual(['hour_b/b.jsonl']);
    expect(plan(records, 'openai-chat').scheduleZeroMs).toBe(Date.UTC(2026, 3, 29, 0, 0, 1));
  });

  it('every AIPerf input file is covered by a case', async () => {
    expect((await readdir(join(FIXTURES, 'aiperf'))).sort()).toEqual(AIPERF_CASES.map(([file]) => file).sort());
  });
});
