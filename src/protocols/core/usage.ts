/**
 * Token counts as the upstream reported them, in OpenAI's convention whatever the protocol:
 * `prompt_tokens` includes the cached (read) and cache-creation tokens; `cached_tokens` says
 * how many of them were read from a prompt cache, `cache_creation_tokens` how many were
 * written to one (Anthropic). So Anthropic's `input_tokens` = prompt − cached − creation.
 */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
  cache_creation_tokens?: number;
}

/**
 * Usage reported in pieces (Anthropic: input at message_start, output at message_delta)
 * folded into one; a later figure replaces an earlier one (the counts are cumulative).
 */
export function mergeUsage(into: Usage | undefined, part: Partial<Usage>): Usage {
  const merged: Usage = into ? { ...into } : { prompt_tokens: 0, completion_tokens: 0 };
  if (part.prompt_tokens !== undefined) merged.prompt_tokens = part.prompt_tokens;
  if (part.completion_tokens !== undefined) merged.completion_tokens = part.completion_tokens;
  if (part.cached_tokens !== undefined) merged.cached_tokens = part.cached_tokens;
  if (part.cache_creation_tokens !== undefined) merged.cache_creation_tokens = part.cache_creation_tokens;
  return merged;
}

/** A non-negative integer count, or undefined. */
export function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
