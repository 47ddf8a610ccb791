/**
 * profile_export_aiperf.json: AIPerf's flat layout, one key per metric tag. Record metrics
 * carry unit and the full statistics; run-level metrics carry unit and avg.
 */
import type { Aggregates } from '../metrics/aggregate';
import { METRICS } from '../metrics/registry';
import { stringifyJson } from './json';

export const SCHEMA_VERSION = '1.0';

export interface AiperfJsonInfo {
  inputConfig: unknown;
  wasCancelled: boolean;
  startTime: string;
  endTime: string;
}

const EXACT_NS: Record<string, (agg: Aggregates) => bigint | null> = {
  min_request_timestamp: (agg) => agg.minRequestNs,
  max_response_timestamp: (agg) => agg.maxResponseNs,
};

export function aiperfJsonObject(agg: Aggregates, info: AiperfJsonInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { schema_version: SCHEMA_VERSION, producer: 'capture-replay' };
  for (const spec of METRICS) {
    if (spec.kind === 'record') {
      const entry = agg.records[spec.tag];
      if (entry) out[spec.tag] = { unit: entry.unit, ...entry.stats };
    } else {
      const entry = agg.derived[spec.tag];
      if (entry) out[spec.tag] = { unit: entry.unit, avg: EXACT_NS[spec.tag]?.(agg) ?? entry.value };
    }
  }
  out.input_config = info.inputConfig;
  out.was_cancelled = info.wasCancelled;
  out.error_summary = agg.errorSummary;
  out.start_time = info.startTime;
  out.end_time = info.endTime;
  return out;
}

export function renderAiperfJson(agg: Aggregates, info: AiperfJsonInfo): string {
  return stringifyJson(aiperfJsonObject(agg, info), 2) + '\n';
}
