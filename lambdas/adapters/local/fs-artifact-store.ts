import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import type { ArtifactStore } from '../../ports';

/** Prefix of a file being written; a leftover one is what a crash interrupted. */
export const PARTIAL_FILE_PREFIX = '.partial-';

/**
 * Writes run artifacts under one root folder; keys are relative paths and may not escape it.
 *
 * Every file appears whole or not at all: it is written to a hidden temporary name beside
 * its final one (`.partial-<name>-<pid>-<random>`), flushed to disk, then renamed (atomic on
 * one file system) and the folder flushed, so the renames are durable in order. A crash or a
 * `kill -9` in the middle leaves at most a `.partial-*` file, never a final name with part of
 * its content; since the manifest is written last, a folder without `run_manifest.json` is a
 * run that did not finish.
 */
export class FsArtifactStore implements ArtifactStore {
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  async put(key: string, body: string | Uint8Array): Promise<void> {
    const path = resolve(this.root, key);
    if (path !== this.root && !path.startsWith(this.root + sep)) {
      throw new Error(`artifact key escapes the output folder: ${key}`);
    }
    const folder = dirname(path);
    await mkdir(folder, { recursive: true });
    const temporary = join(
      folder,
      `${PARTIAL_FILE_PREFIX}${basename(path)}-${process.pid}-${randomBytes(4).toString('hex')}`,
    );
    try {
      const file = await open(temporary, 'wx');
      try {
        await file.writeFile(body);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    await syncFolder(folder);
  }

  pathOf(key: string): string {
    return resolve(this.root, key);
  }
}

/** Flushes a folder's entries (the rename) to disk; where folders cannot be opened, the rename stands as it is. */
async function syncFolder(folder: string): Promise<void> {
  let handle;
  try {
    handle = await open(folder, 'r');
    await handle.sync();
  } catch {
    // Some platforms and file systems refuse fsync on a folder: nothing more can be done.
  } finally {
    await handle?.close();
  }
}
