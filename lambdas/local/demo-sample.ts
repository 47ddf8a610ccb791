/**
 * The demo's captures: the bundled sample (samples/datacapture), split by content type into
 * two folders with the sample's own layout, so that the demo replays its chat requests as
 * one run and its tabular (non-JSON) requests as another, and the tabular answers never mix
 * into the chat latency figures. Every line is copied byte for byte; a line that is not a
 * JSON record (the sample has bad lines on purpose) stays with the chat part, where the
 * ingest report counts it; files that are not `.jsonl` are copied to the chat part too
 * (counted as skipped there).
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isJsonContentType } from '../core/capture/body-type';

export const SAMPLE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'samples', 'datacapture');

export interface DemoCaptures {
  chatDir: string;
  tabularDir: string;
  /** Tabular records written, by declared content type (e.g. `{"text/csv": 1}`). */
  tabularByType: Record<string, number>;
}

/** The declared input content type of a capture line when it is not JSON; null for JSON inputs and for lines that are not records. */
function nonJsonInputType(line: string): string | null {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return null;
  }
  const type = (record as { captureData?: { endpointInput?: { observedContentType?: unknown } } } | null)?.captureData
    ?.endpointInput?.observedContentType;
  return typeof type === 'string' && !isJsonContentType(type) ? type : null;
}

/** Each line of `text` with its own terminator (a last line without one kept as it is). */
function linesOf(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** Writes `<into>/chat/...` and `<into>/tabular/...` from the sample; returns where, and what went to the tabular part. */
export async function splitSample(into: string, sampleDir: string = SAMPLE_DIR): Promise<DemoCaptures> {
  const chatDir = join(into, 'chat');
  const tabularDir = join(into, 'tabular');
  const tabularByType: Record<string, number> = {};
  const write = async (path: string, text: string) => {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  };
  const entries = await readdir(sampleDir, { recursive: true, withFileTypes: true });
  for (const entry of entries.filter((e) => e.isFile())) {
    const source = join(entry.parentPath, entry.name);
    const path = relative(sampleDir, source);
    const text = await readFile(source, 'utf8');
    if (!entry.name.endsWith('.jsonl')) {
      await write(join(chatDir, path), text);
      continue;
    }
    let chat = '';
    let tabular = '';
    for (const line of linesOf(text)) {
      const type = nonJsonInputType(line);
      if (type === null) chat += line;
      else {
        tabular += line;
        tabularByType[type] = (tabularByType[type] ?? 0) + 1;
      }
    }
    if (chat) await write(join(chatDir, path), chat);
    if (tabular) await write(join(tabularDir, path), tabular);
  }
  return { chatDir, tabularDir, tabularByType };
}
