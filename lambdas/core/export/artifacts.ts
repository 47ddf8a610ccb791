import type { ArtifactStore } from '../../ports';
import type { IngestReport, ProfileRecord } from '../types';
import type { Aggregates } from '../metrics/aggregate';
import { renderAiperfCsv } from './aiperf-csv';
import { renderAiperfJson } from './aiperf-json';
import { exportInputConfigOf } from './input-config';
import { stringifyJson } from './json';
import { outputAgreement } from '../metrics/agreement';
import { profileRecordLine } from './profile-jsonl';
import type { ManifestWithLags } from './manifest';

/** File names of a run's artifacts: the same locally and in S3. */
export const ARTIFACT_FILES = {
  records: 'profile_export.jsonl',
  aiperfJson: 'profile_export_aiperf.json',
  aiperfCsv: 'profile_export_aiperf.csv',
  manifest: 'run_manifest.json',
  ingestReport: 'ingest_report.json',
} as const;

/** The manifest file (manifest.ts): accounting, schedule lag and wire lag. */
export type ManifestWithLag = ManifestWithLags;

export interface TargetArtifacts {
  records: readonly ProfileRecord[];
  aggregates: Aggregates;
  manifest: ManifestWithLag;
  /**
   * The run's configuration, best an ExportInputConfig (input-config.ts: AIPerf's
   * `input_config` and our `capture_replay`); any other value is written as ours.
   */
  inputConfig: unknown;
  wasCancelled: boolean;
  startTime: string;
  endTime: string;
}

/**
 * Writes one target's artifacts under `prefix` (e.g. `<run-id>/<target>/`), the manifest
 * last; returns the keys written.
 */
export async function writeTargetArtifacts(
  store: ArtifactStore,
  prefix: string,
  artifacts: TargetArtifacts,
): Promise<string[]> {
  const data = await writeTargetData(store, prefix, artifacts);
  return [...data, await writeTargetManifest(store, prefix, artifacts)];
}

/**
 * The target's results without its manifest: records, AIPerf JSON and CSV. A run with several
 * targets writes every target's data (and its run-level files) before any manifest.
 */
export async function writeTargetData(
  store: ArtifactStore,
  prefix: string,
  artifacts: TargetArtifacts,
): Promise<string[]> {
  const lines = artifacts.records.map(profileRecordLine);
  const files: [string, string, string][] = [
    [ARTIFACT_FILES.records, lines.length > 0 ? lines.join('\n') + '\n' : '', 'application/x-ndjson'],
    [
      ARTIFACT_FILES.aiperfJson,
      renderAiperfJson(artifacts.aggregates, {
        inputConfig: exportInputConfigOf(artifacts.inputConfig),
        wasCancelled: artifacts.wasCancelled,
        startTime: artifacts.startTime,
        endTime: artifacts.endTime,
      }),
      'application/json',
    ],
    [ARTIFACT_FILES.aiperfCsv, renderAiperfCsv(artifacts.aggregates), 'text/csv'],
  ];
  await Promise.all(files.map(([name, body, type]) => store.put(prefix + name, body, type)));
  return files.map(([name]) => prefix + name);
}

/**
 * The manifest, written after everything it accounts for: whoever sees it (a user polling S3,
 * a test, `compare`) finds the other files complete, and a run cut short (a crash, `kill -9`)
 * has none. Returns its key.
 */
export async function writeTargetManifest(
  store: ArtifactStore,
  prefix: string,
  artifacts: Pick<TargetArtifacts, 'manifest' | 'records'>,
): Promise<string> {
  const manifest = { ...artifacts.manifest, outputAgreement: outputAgreement(artifacts.records) };
  await store.put(prefix + ARTIFACT_FILES.manifest, stringifyJson(manifest, 2) + '\n', 'application/json');
  return prefix + ARTIFACT_FILES.manifest;
}

export async function writeIngestReport(store: ArtifactStore, prefix: string, report: IngestReport): Promise<string> {
  const key = prefix + ARTIFACT_FILES.ingestReport;
  await store.put(key, stringifyJson(report, 2) + '\n', 'application/json');
  return key;
}
