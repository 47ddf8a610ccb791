/**
 * The bearer key from a Secrets Manager secret. The console's default secret is JSON
 * (`{"api_key": "..."}`): sending that whole text as `Bearer {...}` would fail every request
 * with 401, so a JSON secret is read by the field the configuration names, and a JSON secret
 * without a named field is an error, not a guess.
 */
export function bearerKeyFromSecret(
  secretString: string | undefined,
  secretId: string,
  field: string | undefined,
): string {
  if (secretString === undefined || secretString === '')
    throw new Error(`secret ${secretId} has no SecretString (binary secrets are not supported)`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString);
  } catch {
    parsed = undefined;
  }
  const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  if (field === undefined) {
    if (isObject)
      throw new Error(
        `secret ${secretId} holds JSON: set apiKeySecretField to the field that holds the key (fields: ${Object.keys(
          parsed as object,
        )
          .slice(0, 10)
          .join(', ')})`,
      );
    return secretString.trim();
  }
  if (!isObject)
    throw new Error(`secret ${secretId} is not a JSON object, but apiKeySecretField "${field}" was configured`);
  const value = (parsed as Record<string, unknown>)[field];
  if (typeof value !== 'string' || value.trim() === '')
    throw new Error(`secret ${secretId} has no non-empty string field "${field}"`);
  return value.trim();
}

/** What SecretApiKey needs of Powertools' SecretsProvider (`get` with its cache options). */
export interface SecretReader {
  get(name: string, options: { maxAge: number; forceFetch?: boolean }): Promise<unknown>;
}

/**
 * The fewest milliseconds between two reads forced by a refused key. A target that refuses
 * the secret's current key (a wrong key, not a rotated one) would otherwise cost one
 * GetSecretValue per refused request; spaced, an execution environment reads at most once
 * a second, and a rotation is still seen at the first refusal after it.
 */
export const FORCED_READ_MIN_INTERVAL_MS = 1000;

export interface SecretApiKeyOptions {
  reader: SecretReader;
  secretId: string;
  /** For a JSON secret: the field that holds the key (bearerKeyFromSecret). */
  field: string | undefined;
  /** How long a read key is kept before the secret is read again (Powertools' `maxAge`). */
  maxAgeSeconds: number;
  /** A read that failed while a key is known: the known key stays in use (told here). */
  onStaleKey?: (error: unknown) => void;
  nowMs?: () => number;
}

/**
 * A target's bearer key from Secrets Manager, kept fresh. The cache is Powertools
 * Parameters' (`maxAge`, `forceFetch`:
 * https://docs.aws.amazon.com/powertools/typescript/latest/features/parameters/); this adds
 * what a replay needs around it: `update()` is awaited before a shard fires, so a read
 * never delays a request on its due time, and `current()` is then a plain value; after the
 * target refuses a key (401/403), `refreshed(sentKey)` reads the secret once (one read
 * however many requests were refused together), and says whether the key changed.
 */
export class SecretApiKey {
  private key: string | undefined;
  private forced: Promise<string> | null = null;
  private lastForcedMs = Number.NEGATIVE_INFINITY;
  private readonly nowMs: () => number;

  constructor(private readonly options: SecretApiKeyOptions) {
    this.nowMs = options.nowMs ?? Date.now;
  }

  /** The key to send now; `update()` must have succeeded once. */
  current(): string {
    if (this.key === undefined) throw new Error(`secret ${this.options.secretId} has not been read`);
    return this.key;
  }

  /**
   * Reads the secret if the cached key has outlived its time-to-live. Throws only when no
   * key was ever read (the caller's record is then retried); with a key known, a failed
   * read keeps it, and the next update tries again.
   */
  async update(): Promise<void> {
    try {
      this.key = await this.read(false);
    } catch (error) {
      if (this.key === undefined) throw error;
      this.options.onStaleKey?.(error);
    }
  }

  /**
   * After the target refused `sentKey`: the key to retry with, or null when the secret
   * still holds `sentKey` (or cannot be read), so the refusal stands as it was.
   */
  async refreshed(sentKey: string): Promise<string | null> {
    if (this.key !== undefined && this.key !== sentKey) return this.key; // read since sentKey was taken
    if (this.forced === null) {
      if (this.nowMs() - this.lastForcedMs < FORCED_READ_MIN_INTERVAL_MS) return null;
      this.lastForcedMs = this.nowMs();
      this.forced = this.read(true).finally(() => (this.forced = null));
    }
    try {
      this.key = await this.forced;
    } catch (error) {
      this.options.onStaleKey?.(error);
      return null;
    }
    return this.key !== sentKey ? this.key : null;
  }

  private async read(forceFetch: boolean): Promise<string> {
    const { reader, secretId, field, maxAgeSeconds } = this.options;
    const value = await reader.get(secretId, { maxAge: maxAgeSeconds, ...(forceFetch ? { forceFetch } : {}) });
    return bearerKeyFromSecret(typeof value === 'string' ? value : undefined, secretId, field);
  }
}
