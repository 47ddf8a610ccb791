/**
 * A run's manifest never ends before it starts (`endedAt >= startedAt`), nor its AIPerf export
 * (`end_time >= start_time`): also when the target fires nothing because every record was
 * dropped for it (a chat target on a tabular capture), whose results are made before its
 * schedule zero. Held for the CLI's runReplay and for the pipeline's collector.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { MemoryQueue } from '../../../lambdas/adapters/local/memory-queue';
import { runSpan } from '../../../lambdas/core/export/manifest';
import { collectRun, dispatchRun } from '../../../lambdas/core/pipeline/stages';
import { buildPlan, type PlanOptions } from '../../../lambdas/core/plan/plan';
import { runReplay } from '../../../lambdas/core/run/replay';
import type { CaptureRecord, IngestReport } from '../../../lambdas/core/types';
import type { ArtifactStore } from '../../../lambdas/ports';
import { FakeTarget, VirtualClock } from '../../support/virtual-clock';

const S = 1_800_000_000_000_000_000n;
const MS = 1_000_000n;

const csv = (id: string, second: number): CaptureRecord => ({
  eventId: id,
  inferenceId: null,
  inferenceTimeMs: Date.UTC(2026, 3, 29, 0, 0, second),
  hasSubSecondTime: false,
  input: { contentType: 'text/csv', encoding: 'CSV', body: Buffer.from(`${second},1,2`) },
  output: null,
  source: { file: 'f.jsonl', line: second + 1 },
});
const RECORDS = [csv('v1', 1), csv('v2', 2)];
const INGEST: IngestReport = {
  files: [],
  skippedFiles: [],
  totals: {
    files: 1,
    linesRead: 2,
    blankLines: 0,
    accepted: 2,
    rejected: 0,
    contentTypeInferred: 0,
    rejectedByReason: {},
  },
};

/** The manifest's and the AIPerf export's times of a target, from what the store was given. */
function times(files: Map<string, string>, prefix: string) {
  const manifest = JSON.parse(files.get(`${prefix}run_manifest.json`)!) as {
    startedAt: string;
    endedAt: string;
    dropped: number;
    fired: number;
  };
  const aiperf = JSON.parse(files.get(`${prefix}profile_export_aiperf.json`)!) as {
    start_time: string;
    end_time: string;
  };
  return { manifest, aiperf };
}

const notBefore = (end: string, start: string) => Date.parse(end) >= Date.parse(start);

describe('endedAt >= startedAt', () => {
  it('runSpan: from the schedule zero to the end; a run that ends before its zero starts when it ends', () => {
    expect(runSpan(S, S + 5n * MS)).toEqual({
      startedAt: new Date(Number(S / MS)).toISOString(),
      endedAt: new Date(Number(S / MS) + 5).toISOString(),
    });
    expect(runSpan(S + 500n * MS, S)).toEqual({
      startedAt: new Date(Number(S / MS)).toISOString(),
      endedAt: new Date(Number(S / MS)).toISOString(),
    });
  });

  it('the CLI: a chat target that drops every record of a CSV capture, next to a SageMaker target that replays them', async () => {
    const files = new Map<string, string>();
    const store: ArtifactStore = {
      put: async (key, body) => void files.set(key, typeof body === 'string' ? body : Buffer.from(body).toString()),
    };
    const clock = new VirtualClock(S);
    await runReplay({
      runId: 'run',
      records: RECORDS,
      ingestReport: INGEST,
      plan: { timeScale: 1, intraSecond: 'spread' },
      targets: [
        { client: new FakeTarget('chat', clock), kind: 'openai-chat' },
        { client: new FakeTarget('sm', clock), kind: 'sagemaker' },
      ],
      clock,
      store,
      leadMs: 500,
      inputConfig: () => ({}),
    });
    const chat = times(files, 'run/chat/');
    expect(chat.manifest).toMatchObject({ fired: 0, dropped: 2 });
    expect(notBefore(chat.manifest.endedAt, chat.manifest.startedAt)).toBe(true);
    expect(notBefore(chat.aiperf.end_time, chat.aiperf.start_time)).toBe(true);
    const sm = times(files, 'run/sm/');
    expect(sm.manifest).toMatchObject({ fired: 2, dropped: 0 });
    // A target that fired starts at its schedule zero, the lead after planning.
    expect(sm.manifest.startedAt).toBe(new Date(Number(S / MS) + 500).toISOString());
    expect(notBefore(sm.manifest.endedAt, sm.manifest.startedAt)).toBe(true);
  });

  it('the pipeline: the collector finalises a target that takes none of the records before the schedule zero', async () => {
    const clock = new VirtualClock(S);
    const store = new MemoryObjectStore();
    const queue = new MemoryQueue(() => clock.nowNs());
    const options: Omit<PlanOptions, 'targetKind'> = { runId: 'run-p', timeScale: 1, intraSecond: 'spread' };
    const result = await dispatchRun({
      runId: 'run-p',
      plan: buildPlan(RECORDS, { ...options, targetKind: 'openai-chat' }),
      targets: ['A', 'B'],
      targetPlans: { B: buildPlan(RECORDS, { ...options, targetKind: 'sagemaker' }) },
      startNs: S + 30_000n * MS,
      leadMs: 20_000,
      graceMs: 60_000,
      inputConfig: null,
      notScheduledByReason: {},
      store,
      queue,
      clock,
    });
    expect(result.status).toBe('scheduled');
    const a = await collectRun('run-p', 'A', { store, clock });
    expect(a.manifest).toMatchObject({ fired: 0, dropped: 2 });
    expect(notBefore(a.manifest!.endedAt, a.manifest!.startedAt)).toBe(true);
    const aiperf = JSON.parse(store.text('runs/run-p/A/profile_export_aiperf.json')!) as {
      start_time: string;
      end_time: string;
    };
    expect(notBefore(aiperf.end_time, aiperf.start_time)).toBe(true);
  });
});
