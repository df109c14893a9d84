import { isRecord } from '../../util/is-record.js';
import { count, type Usage } from '../core/usage.js';

/** Chat Completions usage (already in llm-route's convention: prompt_tokens includes cached). */
export function chatUsage(value: unknown): Usage | undefined {
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
