/**
 * The captured traffic a capacity search replays at every step: the captures read once (pass
 * 1, with the preflight and the ingest report, as `replay` does), the window selected by the
 * plan's rules (offsets, intra-second policy), and its records read back and held, so that a
 * step plans them again at its factor without reading the captures again. Each record keeps
 * the time the policy gave it (written as exact), so every step schedules the same instants.
 */
import { planAndReadBack } from '../../core/plan/read-back';
import type { CaptureRecord, IngestReport } from '../../core/types';
import { indexCaptures } from '../replay/ingest';
import { fail, type CommandIo } from '../replay/io';
import type { CapacityConfig } from './config';

export interface CapacityWindow {
  records: CaptureRecord[];
  ingest: IngestReport;
}

function describeWindow(w: CapacityConfig['window']): string {
  const c = w.captureWindow;
  if (c?.startMs != null && c.endMs != null)
    return `${new Date(c.startMs).toISOString()} to ${new Date(c.endMs).toISOString()}`;
  return `${w.startOffsetMs / 1000}-${w.endOffsetMs / 1000} s from the first capture`;
}

/** The window's records, or the exit code of a search that cannot start (said on stderr). */
export async function readWindow(config: CapacityConfig, io: CommandIo): Promise<CapacityWindow | number> {
  const captures = await indexCaptures(config.replay, io);
  if (typeof captures === 'number') return captures;
  let selected: Awaited<ReturnType<typeof planAndReadBack>>;
  try {
    selected = await planAndReadBack(
      captures.records,
      { ...config.replay.plan, runId: config.runId, targetKind: 'openai-chat' },
      captures.readerFor,
      { concurrency: 4 },
    );
  } catch (error) {
    return fail(io, error);
  }
  const { plan, records } = selected;
  if (records.length === 0)
    return fail(
      io,
      `no capture record in the window (${describeWindow(config.window)}): ` +
        `${config.window.captureWindow ? '--from/--to' : '--start-offset'} or --window`,
    );
  return {
    records: plan.entries.map((e, i) => ({
      ...(records[i] as CaptureRecord),
      inferenceTimeMs: e.captureTimeMs,
      hasSubSecondTime: true,
    })),
    ingest: { ...captures.ingest, timing: plan.timing },
  };
}
