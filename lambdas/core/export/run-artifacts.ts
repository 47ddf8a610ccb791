/**
 * A run's root files beside its per-target folders: the A/B comparison (two targets or
 * more) and the report a person opens. The same writer for the local CLI, `compare` and the
 * pipeline, through the ArtifactStore port.
 */
import type { ArtifactStore } from '../../ports';
import type { ComparisonDocument } from '../compare/types';
import { stringifyJson } from './json';

export const RUN_FILES = { comparison: 'comparison.json', report: 'report.html' } as const;

/** Writes `comparison.json` (when there is one) and `report.html` under `prefix`; returns the keys. */
export async function writeRunAnalysis(
  store: ArtifactStore,
  prefix: string,
  comparison: ComparisonDocument | null,
  reportHtml: string,
): Promise<string[]> {
  const keys: string[] = [];
  if (comparison) {
    await store.put(prefix + RUN_FILES.comparison, stringifyJson(comparison, 2) + '\n', 'application/json');
    keys.push(prefix + RUN_FILES.comparison);
  }
  await store.put(prefix + RUN_FILES.report, reportHtml, 'text/html; charset=utf-8');
  keys.push(prefix + RUN_FILES.report);
  return keys;
}
