/**
 * A capture bucket in memory, behind the plan function's CaptureObjects port: folders listed
 * as S3 lists them with Delimiter `/`, objects with an MD5 ETag, reads that fail (null) when
 * the object changed since it was listed, as If-Match does. Counts its calls, so a test can
 * see what was listed and read.
 */
import { createHash } from 'node:crypto';
import type { CaptureObjects } from '../../lambdas/core/scheduled-runs/window-plan';

export class MemoryCaptureObjects implements CaptureObjects {
  readonly objects = new Map<string, Uint8Array>();
  readonly calls = { listFolders: [] as string[], listObjects: [] as string[], open: [] as string[], ranges: 0 };

  constructor(readonly bucket = 'captures') {}

  put(key: string, body: string | Uint8Array): void {
    this.objects.set(key, typeof body === 'string' ? Buffer.from(body) : body);
  }

  private etagOf(bytes: Uint8Array): string {
    return createHash('md5').update(bytes).digest('hex');
  }

  describe(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }

  async listFolders(prefix: string): Promise<string[]> {
    this.calls.listFolders.push(prefix);
    const out = new Set<string>();
    for (const key of this.objects.keys()) {
      if (!key.startsWith(prefix)) continue;
      const slash = key.indexOf('/', prefix.length);
      if (slash >= 0) out.add(key.slice(0, slash + 1));
    }
    return [...out].sort();
  }

  async listObjects(prefix: string) {
    this.calls.listObjects.push(prefix);
    return [...this.objects]
      .filter(([key]) => key.startsWith(prefix))
      .map(([key, bytes]) => ({ key, etag: this.etagOf(bytes), size: bytes.byteLength }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async open(key: string, etag: string) {
    this.calls.open.push(key);
    const bytes = this.objects.get(key);
    if (!bytes || this.etagOf(bytes) !== etag) return null;
    const chunkBytes = 64 * 1024;
    return {
      chunks: (async function* () {
        for (let i = 0; i < bytes.byteLength; i += chunkBytes) yield bytes.subarray(i, i + chunkBytes);
      })(),
      readRange: async (start: number, end: number) => {
        this.calls.ranges++;
        const now = this.objects.get(key);
        if (!now || this.etagOf(now) !== etag) throw new Error(`${key} changed since it was listed`);
        return now.subarray(start, end);
      },
    };
  }
}
