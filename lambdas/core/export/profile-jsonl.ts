import type { ProfileRecord } from '../types';
import { stringifyJson } from './json';

/** One line of profile_export.jsonl (no trailing newline). */
export function profileRecordLine(record: ProfileRecord): string {
  return stringifyJson(record);
}
