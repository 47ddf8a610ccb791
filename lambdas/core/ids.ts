import { createHash } from 'node:crypto';

/**
 * A UUID-formatted identifier derived from its parts (SHA-256, version nibble 8 "custom").
 * Deterministic ids make at-least-once delivery safe: a request fired for the same run,
 * target and plan index always carries the same X-Request-ID, so duplicates collapse.
 */
export function deterministicUuid(...parts: (string | number)[]): string {
  const hex = createHash('sha256').update(parts.map(String).join('\u001f')).digest('hex');
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
