/**
 * What the signal tests (test/e2e/signals*.test.ts) replay: a capture folder of `count` chat
 * requests at `perSecond` per captured second.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { faultCaptureLine } from './fault-server';

/** `count` chat requests, `perSecond` per captured second (spread evenly over it), in `dir/name`. */
export function signalCaptures(dir: string, name: string, count: number, perSecond: number): string {
  const folder = join(dir, name);
  mkdirSync(folder, { recursive: true });
  const start = Date.UTC(2026, 3, 29, 0, 0, 0);
  const lines = Array.from({ length: count }, (_, i) =>
    faultCaptureLine(i, 'ok', { timeMs: start + Math.floor(i / perSecond) * 1000, prompt: `request ${i}` }),
  );
  writeFileSync(join(folder, 'capture.jsonl'), lines.join('\n') + '\n');
  return folder;
}
