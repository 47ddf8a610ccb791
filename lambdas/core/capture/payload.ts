/**
 * A captured body's bytes: the `data` string decoded by its encoding (JSON and CSV: UTF-8
 * text; BASE64: strict base64), written into a shared slab. `Buffer.from(string)` allocates
 * once per body, far slower than writing into a slab (bench/parse-throughput.ts compares them).
 */
import type { CaptureEncoding, RejectReason } from '../types';

// Bodies are written into a shared slab and handed out as views (so `body.buffer` is the
// slab: read bodies through byteOffset/byteLength, as every user here does). A record kept alive keeps
// its slab alive (as Node's own 8 KiB Buffer pool does), so the slab is small; bodies too big
// to share one get their own allocation, which their size amortises.
const SLAB_BYTES = 128 * 1024;
const SLAB_MAX_BODY = SLAB_BYTES / 4;
let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
let slabUsed = 0;

/** Makes room for `maxBytes` in the slab; false when a body that size should not share one. */
function slabRoom(maxBytes: number): boolean {
  if (maxBytes > SLAB_MAX_BODY) return false;
  if (slabUsed + maxBytes > SLAB_BYTES) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabUsed = 0;
  }
  return true;
}

function takeSlab(written: number): Buffer {
  const view = slab.subarray(slabUsed, slabUsed + written);
  slabUsed += written;
  return view;
}

function utf8Bytes(text: string): Buffer {
  // Up to a third of the slab's body limit in characters fits whatever they are (3 bytes at
  // most each, a surrogate pair 4 for 2); above, the exact size (simdutf, ~15 GB/s) keeps
  // bodies of up to SLAB_MAX_BODY bytes in the slab, not in a Buffer.from of their own.
  const room = text.length <= SLAB_MAX_BODY / 3 ? text.length * 3 : Buffer.byteLength(text, 'utf8');
  if (!slabRoom(room)) return Buffer.from(text, 'utf8');
  return takeSlab(slab.write(text, slabUsed, 'utf8'));
}

/**
 * Strict base64. Node's decoder skips characters it does not know and also takes the
 * base64url alphabet, which would replay a corrupted body. Rather than a regex over the whole
 * string: a well-formed string has a length that is a multiple of 4 and decodes to exactly 3/4
 * of it less the padding, and any skipped character (or `=` inside) makes the decoded length
 * come up short; `-` and `_` are looked for apart. MIME line breaks are tolerated.
 */
export function strictBase64(data: string): Buffer | null {
  const compact = data.includes('\n') || data.includes('\r') ? data.replace(/[\r\n]/g, '') : data;
  if (compact.length % 4 !== 0 || compact.includes('-') || compact.includes('_')) return null;
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  const expected = (compact.length / 4) * 3 - padding;
  if (!slabRoom(expected)) {
    const decoded = Buffer.from(compact, 'base64');
    return decoded.length === expected ? decoded : null;
  }
  const written = slab.write(compact, slabUsed, expected, 'base64');
  return written === expected ? takeSlab(written) : null;
}

/** The decoded size of (MIME-wrapped) base64 text, without decoding it. */
export function base64ByteLength(data: string): number {
  const compact = data.replace(/[\r\n]/g, '');
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((compact.length * 3) / 4) - padding);
}

/** The input body of a capture line, or why its encoding or data cannot be replayed. */
export function decodePayload(
  data: string,
  rawEncoding: string | null | undefined,
): { ok: true; encoding: CaptureEncoding; body: Buffer } | { ok: false; reason: RejectReason; detail: string } {
  // SageMaker writes upper case; a lower-case spelling names the same encoding.
  const encoding = rawEncoding == null ? 'BASE64' : rawEncoding.toUpperCase();
  if (encoding === 'JSON' || encoding === 'CSV') return { ok: true, encoding, body: utf8Bytes(data) };
  if (encoding !== 'BASE64')
    return {
      ok: false,
      reason: 'bad_encoding',
      detail: `unknown encoding ${JSON.stringify((rawEncoding ?? '').slice(0, 20))} (expected JSON, CSV or BASE64)`,
    };
  const body = strictBase64(data);
  if (!body) return { ok: false, reason: 'bad_base64', detail: `data is not valid base64 (${data.length} chars)` };
  return { ok: true, encoding: 'BASE64', body };
}
