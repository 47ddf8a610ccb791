import type { ObjectStore } from '../../lambdas/ports';

/**
 * One finaliser's view of a shared store. Its first read of anything under hours/ is answered
 * at once, but the answer is handed over only after `resume`: the finaliser then acts on what
 * it read while others were writing (the classic lost-update window). `readHour` resolves
 * when that first read has happened.
 */
export class StallingView implements ObjectStore {
  readonly readHour: Promise<void>;
  private signalRead!: () => void;
  private stalled = false;

  constructor(
    private readonly base: ObjectStore,
    private readonly resume: Promise<void>,
  ) {
    this.readHour = new Promise((r) => (this.signalRead = r));
  }

  private async stall<T>(key: string, value: T): Promise<T> {
    if (this.stalled || !key.startsWith('hours/')) return value;
    this.stalled = true;
    this.signalRead();
    await this.resume;
    return value;
  }

  async get(key: string) {
    return this.stall(key, await this.base.get(key));
  }
  async getVersioned(key: string) {
    return this.stall(key, await this.base.getVersioned(key));
  }
  async list(prefix: string) {
    return this.stall(prefix, await this.base.list(prefix));
  }
  put(key: string, body: string | Uint8Array, contentType?: string) {
    return this.base.put(key, body, contentType);
  }
  putIfAbsent(key: string, body: string | Uint8Array, contentType?: string) {
    return this.base.putIfAbsent(key, body, contentType);
  }
  putIfMatch(key: string, body: string | Uint8Array, etag: string | null, contentType?: string) {
    return this.base.putIfMatch(key, body, etag, contentType);
  }
}
