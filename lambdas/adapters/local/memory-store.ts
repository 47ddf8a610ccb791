import type { ObjectStore } from '../../ports';

/** In-memory ObjectStore with S3's conditional-create semantics, for tests and local runs. */
export class MemoryObjectStore implements ObjectStore {
  readonly objects = new Map<string, Uint8Array>();

  async get(key: string): Promise<Uint8Array | null> {
    return this.objects.get(key) ?? null;
  }

  async put(key: string, body: string | Uint8Array): Promise<void> {
    this.objects.set(key, typeof body === 'string' ? Buffer.from(body) : body);
  }

  async putIfAbsent(key: string, body: string | Uint8Array): Promise<boolean> {
    if (this.objects.has(key)) return false;
    await this.put(key, body);
    return true;
  }

  async list(prefix: string): Promise<string[]> {
    return [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
  }

  text(key: string): string | null {
    const v = this.objects.get(key);
    return v ? Buffer.from(v).toString('utf8') : null;
  }
}
