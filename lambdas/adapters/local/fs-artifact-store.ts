import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import type { ArtifactStore } from '../../ports';

/** Writes run artifacts under one root folder; keys are relative paths and may not escape it. */
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
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, body);
  }

  pathOf(key: string): string {
    return resolve(this.root, key);
  }
}
