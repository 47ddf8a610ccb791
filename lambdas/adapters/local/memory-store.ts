import { createHash } from 'node:crypto';
import type { ObjectStore } from '../../ports';

/** S3's ETag of a single-part, unencrypted (or SSE-S3) object: the quoted MD5 of its bytes. */
const etagOf = (bytes: Uint8Array) => `"${createHash('md5').update(bytes).digest('hex')}"`;

/** S3 compares ETags with or without their quotes. */
const sameEtag = (a: string, b: string) => a.replace(/"/g, '') === b.replace(/"/g, '');

/**
 * In-memory ObjectStore with S3's conditional-write semantics (`If-None-Match: *` creates,
 * `If-Match: <etag>` replaces), for tests and local runs. Every check-and-write happens in
 * one synchronous step, as S3 makes each conditional write atomic.
 */
export class MemoryObjectStore implements ObjectStore {
  readonly objects = new Map<string, Uint8Array>();

  async get(key: string): Promise<Uint8Array | null> {
    return this.objects.get(key) ?? null;
  }

  async getVersioned(key: string): Promise<{ bytes: Uint8Array; etag: string } | null> {
    const bytes = this.objects.get(key);
    return bytes ? { bytes, etag: etagOf(bytes) } : null;
  }

  async put(key: string, body: string | Uint8Array, _contentType?: string): Promise<void> {
    this.objects.set(key, typeof body === 'string' ? Buffer.from(body) : body);
  }

  async putIfAbsent(key: string, body: string | Uint8Array, _contentType?: string): Promise<boolean> {
    return this.putIfMatch(key, body, null);
  }

  async putIfMatch(
    key: string,
    body: string | Uint8Array,
    etag: string | null,
    _contentType?: string,
  ): Promise<boolean> {
    const current = this.objects.get(key);
    if (etag === null ? current !== undefined : current === undefined || !sameEtag(etagOf(current), etag)) return false;
    this.objects.set(key, typeof body === 'string' ? Buffer.from(body) : body);
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
