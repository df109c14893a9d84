import { isRecord } from '../../util/is-record.js';
import { count, type Usage } from '../core/usage.js';

/**
 * Chat Completions usage (already in llm-route's convention: prompt_tokens includes cached).
 * The cached figure is `prompt_tokens_details.cached_tokens` (OpenAI; vLLM when started with
 * `--enable-prompt-tokens-details`; llama.cpp since it added the field), else llama.cpp's own
 * `timings` beside the usage (`cache_n` read from its KV cache, `prompt_n` evaluated,
 * `predicted_n` generated), which its older builds send instead and every build sends on the
 * finish chunk of a stream that did not ask for usage. `cached_tokens` is absent when the
 * server said nothing about its cache, so "not reported" never reads as "0% cached".
 */
export function chatUsage(value: unknown, timings?: unknown): Usage | undefined {
  const usage = reportedUsage(value);
  return timings === undefined ? usage : withTimings(usage, timings);
}

/** `usage` with llama.cpp's cache figure from its `timings` where it has none; made from the timings when there is no usage. */
export function withTimings(usage: Usage | undefined, timings: unknown): Usage | undefined {
  if (!isRecord(timings)) return usage;
  const cached = count(timings.cache_n);
  if (cached === undefined) return usage;
  if (usage === undefined) {
    const evaluated = count(timings.prompt_n);
    const predicted = count(timings.predicted_n);
    if (evaluated === undefined || predicted === undefined) return undefined;
    return { prompt_tokens: cached + evaluated, completion_tokens: predicted, cached_tokens: cached };
  }
  return usage.cached_tokens === undefined ? { ...usage, cached_tokens: cached } : usage;
}

function reportedUsage(value: unknown): Usage | undefined {
  if (!isRecord(value)) return undefined;
  const prompt = count(value.prompt_tokens);
  const completion = count(value.completion_tokens);
  if (prompt === undefined && completion === undefined) return undefined;
  const usage: Usage = { prompt_tokens: prompt ?? 0, completion_tokens: completion ?? 0 };
  const details = value.prompt_tokens_details;
  const cached = isRecord(details) ? count(details.cached_tokens) : undefined;
  if (cached !== undefined) usage.cached_tokens = cached;
  return usage;
}

/** llm-route's usage as a Chat Completions `usage` object. */
export function toChatUsage(usage: Usage): Record<string, unknown> {
  const out: Record<string, unknown> = {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
  if (usage.cached_tokens) out.prompt_tokens_details = { cached_tokens: usage.cached_tokens };
  return out;
}
