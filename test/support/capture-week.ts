/**
 * A week of Data Capture as SageMaker lays it out, for the tests that read captures in place
 * (a memory bucket, moto): `<prefix><endpoint>/<variant>/yyyy/mm/dd/hh/<file>.jsonl`, one file
 * per hour with records at minutes 10 and 40, and a file written late: the record of hh:59:30
 * lands in the next hour's partition, as Data Capture writes a file a little after its first
 * record. Every record's prompt is its eventId, so a target's log says which were sent.
 *
 * The week ends `daysAgo` days before now (whole UTC hours), so its times are plausible
 * captures whenever the tests run (not ahead of the clock, core/capture/time.ts).
 */
export const HOUR_MS = 3_600_000;

export interface WeekRecord {
  eventId: string;
  timeMs: number;
  /** The object that holds it. */
  key: string;
}

export interface CaptureWeek {
  /** Epoch ms of the first hour. */
  startMs: number;
  /** Object key -> text. */
  files: Map<string, string>;
  records: WeekRecord[];
  /** `<prefix><endpoint>/<variant>/`. */
  variantPrefix: string;
  /** The partition folder (`.../yyyy/mm/dd/hh/`) of an hour of the week (0-based). */
  partitionPrefix(hour: number): string;
}

const two = (n: number) => String(n).padStart(2, '0');

/** `yyyy/mm/dd/hh` of the UTC hour holding `ms`, written out here rather than taken from the code under test. */
export function partitionPath(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}/${two(d.getUTCMonth() + 1)}/${two(d.getUTCDate())}/${two(d.getUTCHours())}`;
}

/** Whole seconds, as SageMaker writes inferenceTime. */
const inferenceTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export function captureLine(eventId: string, timeMs: number): string {
  const body = JSON.stringify({ model: 'week-model', messages: [{ role: 'user', content: eventId }], max_tokens: 4 });
  const output = JSON.stringify({
    choices: [{ message: { role: 'assistant', content: 'ok' } }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  });
  return JSON.stringify({
    captureData: {
      endpointInput: { observedContentType: 'application/json', mode: 'INPUT', data: body, encoding: 'JSON' },
      endpointOutput: { observedContentType: 'application/json', mode: 'OUTPUT', data: output, encoding: 'JSON' },
    },
    eventMetadata: { eventId, inferenceTime: inferenceTime(timeMs) },
    eventVersion: '0',
  });
}

/** A streamed chat request as Data Capture records it (input only), its prompt `request <eventId>`. */
export function streamedChatLine(eventId: string, timeMs: number): string {
  const body = JSON.stringify({
    model: 'm',
    messages: [{ role: 'user', content: `request ${eventId}` }],
    max_tokens: 8,
    stream: true,
  });
  return JSON.stringify({
    captureData: {
      endpointInput: { observedContentType: 'application/json', mode: 'INPUT', data: body, encoding: 'JSON' },
    },
    eventMetadata: { eventId, inferenceTime: inferenceTime(timeMs) },
    eventVersion: '0',
  });
}

export function captureWeek(
  options: {
    prefix?: string;
    endpoint?: string;
    variant?: string;
    hours?: number;
    daysAgo?: number;
    nowMs?: number;
  } = {},
): CaptureWeek {
  const hours = options.hours ?? 168;
  const now = options.nowMs ?? Date.now();
  const startMs = Math.floor(now / HOUR_MS) * HOUR_MS - (options.daysAgo ?? 2) * 24 * HOUR_MS - hours * HOUR_MS;
  const variantPrefix = `${options.prefix ?? 'datacapture/'}${options.endpoint ?? 'week-endpoint'}/${options.variant ?? 'AllTraffic'}/`;
  const partitionPrefix = (hour: number) => `${variantPrefix}${partitionPath(startMs + hour * HOUR_MS)}/`;
  const files = new Map<string, string>();
  const records: WeekRecord[] = [];
  const add = (key: string, eventId: string, timeMs: number) => {
    files.set(key, (files.get(key) ?? '') + captureLine(eventId, timeMs) + '\n');
    records.push({ eventId, timeMs, key });
  };
  for (let h = 0; h < hours; h++) {
    const hourMs = startMs + h * HOUR_MS;
    const key = `${partitionPrefix(h)}10-00-000-h${h}.jsonl`;
    add(key, `ev-${h}-10`, hourMs + 10 * 60_000);
    add(key, `ev-${h}-40`, hourMs + 40 * 60_000);
    // Written after the hour turned: in the next hour's partition.
    add(`${partitionPrefix(h + 1)}00-05-000-late-h${h}.jsonl`, `ev-${h}-59`, hourMs + 59 * 60_000 + 30_000);
  }
  return { startMs, files, records, variantPrefix, partitionPrefix };
}
