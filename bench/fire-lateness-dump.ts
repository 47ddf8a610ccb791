/**
 * bench/fire-lateness.ts's `--dump <dir>`: one row's observations for a closer look at what was late.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnalysisInput } from './fire-lateness-analysis';
import { serverView } from './lateness-common';

/**
 * One row's observations for a closer look (`--dump <dir>`): each request's id, due time (epoch
 * ms), lateness at the server and our own wire lag (ms); each invocation's collections,
 * connections opened and throttled samples; the server's arrivals file beside it (each request's
 * place on its connection, and when that connection was accepted).
 */
export function dumpRow(dir: string, a: AnalysisInput, arrivalsFile: string): string {
  const view = serverView(a.results.records, a.arrivals);
  const file = join(dir, `fire-${a.peak}-${a.protocol}.json`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    file,
    JSON.stringify({
      requests: a.results.records.map((r) => [
        r.id,
        Number(r.scheduledNs / 1_000_000n),
        view.latenessById.get(r.id) ?? null,
        r.wireLagMs ?? r.lagMs,
      ]),
      invocations: a.invocations.map((i) => ({
        shardIds: i.shardIds,
        gcs: i.gcs,
        connectionsAtMs: i.connectionsAtMs,
        throttledAtMs: i.throttledAtMs,
      })),
    }),
  );
  copyFileSync(arrivalsFile, join(dir, `arrivals-${a.peak}-${a.protocol}.txt`));
  return file;
}
