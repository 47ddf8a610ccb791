/**
 * Token counts a server reports (`usage`) are believed only when plausible: a whole number,
 * not negative, at most MAX_PLAUSIBLE_TOKENS. Anything else (`1e308`, `0.5`, `-1`, a string)
 * is treated as missing, as if the server had not reported it: one absurd count would
 * otherwise turn every run-wide sum and throughput into Infinity, written as null.
 */
import type { TokenUsage } from '../types';

/** More tokens than any model's context holds by two orders of magnitude. */
export const MAX_PLAUSIBLE_TOKENS = 10_000_000;

export function plausibleTokenCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_PLAUSIBLE_TOKENS
    ? value
    : null;
}

/** The usage with implausible counts set to null; null when neither count is plausible. */
export function plausibleUsage(
  usage: { promptTokens?: unknown; completionTokens?: unknown } | null | undefined,
): TokenUsage | null {
  if (!usage) return null;
  const promptTokens = plausibleTokenCount(usage.promptTokens);
  const completionTokens = plausibleTokenCount(usage.completionTokens);
  return promptTokens === null && completionTokens === null ? null : { promptTokens, completionTokens };
}

/** OpenAI's `usage` object (`prompt_tokens`, `completion_tokens`) as plausible counts; null when absent or implausible. */
export function plausibleOpenAIUsage(raw: unknown): TokenUsage | null {
  if (!raw || typeof raw !== 'object') return null;
  const u = raw as { prompt_tokens?: unknown; completion_tokens?: unknown };
  return plausibleUsage({ promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens });
}
