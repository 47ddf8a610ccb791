/**
 * What a capture says of the endpoint's answer: information only, nothing about it rejects a
 * line. Its content type, size, token usage (an LLM's answer) or digest (a deterministic one).
 */
import { createHash } from 'node:crypto';
import type { CapturedOutputSummary, TokenUsage } from '../types';
import { isJsonContentType } from './body-type';
import { base64ByteLength, strictBase64 } from './payload';

// OpenAI's usage object is flat ({prompt_tokens, completion_tokens, total_tokens, maybe
// *_details objects one level down}) and written last; parsing just it, found from the end,
// costs a fraction of a second JSON.parse of the whole answer. `"usage"` with bare quotes
// cannot come from inside a string value, where quotes are escaped.
const USAGE_OBJECT = /\s*:\s*(\{(?:[^{}]|\{[^{}]*\})*\})/y;

function tokenCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;
}

/** The last `"usage"` in `text`, or -1. */
function lastUsageKey(text: string): number {
  // lastIndexOf is a runtime call that cost more than the forward search (a builtin) of the
  // answer's tail, where usage is written; the whole text is searched only if it is not there.
  let at = text.indexOf('"usage"', text.length - 512);
  if (at === -1) return text.lastIndexOf('"usage"');
  for (let next = text.indexOf('"usage"', at + 1); next !== -1; next = text.indexOf('"usage"', next + 1)) at = next;
  return at;
}

function usageOf(text: string): TokenUsage | null {
  const key = lastUsageKey(text);
  if (key === -1) return null;
  USAGE_OBJECT.lastIndex = key + 7;
  const match = USAGE_OBJECT.exec(text);
  if (!match?.[1]) return null;
  try {
    const usage = JSON.parse(match[1]) as { prompt_tokens?: unknown; completion_tokens?: unknown };
    const result = {
      promptTokens: tokenCount(usage.prompt_tokens),
      completionTokens: tokenCount(usage.completion_tokens),
    };
    return result.promptTokens === null && result.completionTokens === null ? null : result;
  } catch {
    return null;
  }
}

/** The summary of a line's `endpointOutput`, or null when it has none or no data. */
export function summariseOutput(output: unknown): CapturedOutputSummary | null {
  if (typeof output !== 'object' || output === null) return null;
  const { data, observedContentType, encoding } = output as {
    data?: unknown;
    observedContentType?: unknown;
    encoding?: unknown;
  };
  if (typeof data !== 'string') return null;
  // None declared (absent or null): none is asked for when replaying. InvokeEndpoint's Accept
  // is optional and the container answers in its default type without it, while one it does
  // not support is refused (the built-in XGBoost takes text/csv and text/libsvm only:
  // https://docs.aws.amazon.com/sagemaker/latest/dg/cdf-inference.html). The usage is looked for.
  const contentType = typeof observedContentType === 'string' ? observedContentType : null;
  const base64 = typeof encoding !== 'string' || encoding.toUpperCase() === 'BASE64';
  let usage: TokenUsage | null = null;
  if (contentType === null || isJsonContentType(contentType))
    usage = usageOf(base64 ? Buffer.from(data, 'base64').toString('utf8') : data);
  // Only outputs without token usage are hashed: they are the deterministic ones worth an exact
  // comparison, and small; hashing every LLM answer would slow the parser for nothing.
  // (Invalid base64 has no known bytes: no digest.)
  const bytes = usage !== null ? null : base64 ? strictBase64(data) : Buffer.from(data, 'utf8');
  const sha256 = bytes === null ? null : createHash('sha256').update(bytes).digest('hex');
  return { contentType, byteLength: base64 ? base64ByteLength(data) : Buffer.byteLength(data, 'utf8'), usage, sha256 };
}
