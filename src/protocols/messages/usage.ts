import { isRecord } from '../../util/is-record.js';
import { count, type Usage } from '../core/usage.js';

/**
 * Anthropic usage in llm-route's convention. Anthropic's `input_tokens` excludes cache reads
 * and writes, so prompt = input + cache_read + cache_creation (counting them once: LiteLLM
 * #9812 counted them twice). A piece without input_tokens (message_delta) has only output.
 */
export function anthropicUsage(value: unknown): Partial<Usage> | undefined {
  if (!isRecord(value)) return undefined;
  const input = count(value.input_tokens);
  const output = count(value.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const usage: Partial<Usage> = {};
  if (output !== undefined) usage.completion_tokens = output;
  if (input !== undefined) {
    const read = count(value.cache_read_input_tokens);
    const written = count(value.cache_creation_input_tokens) ?? 0;
    usage.prompt_tokens = input + (read ?? 0) + written;
    // Present, even as 0 (Anthropic, llama.cpp): the server reports its cache; absent: it says nothing of one.
    if (read !== undefined) usage.cached_tokens = read;
    if (written > 0) usage.cache_creation_tokens = written;
  }
  return usage;
}

/**
 * llm-route's usage as an Anthropic `usage` object. The cache counts are always there, 0 when
 * nothing was cached, as Anthropic and llama-server send them (clients read them unguarded).
 */
export function toAnthropicUsage(usage: Usage | undefined): Record<string, number> {
  if (!usage) return { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
  const read = usage.cached_tokens ?? 0;
  const written = usage.cache_creation_tokens ?? 0;
  return {
    input_tokens: Math.max(0, usage.prompt_tokens - read - written),
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
    output_tokens: usage.completion_tokens,
  };
}
