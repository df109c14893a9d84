import { count, type Usage } from '../core/usage.js';

/**
 * Ollama's counts on its final line. `prompt_eval_count` is the whole prompt; recent Ollama
 * adds `prompt_eval_cached_count`, the part of it read from its KV cache (earlier versions say
 * nothing of their cache: no cached figure then, rather than 0).
 */
export function ollamaUsage(line: Record<string, unknown>): Usage | undefined {
  const prompt = count(line.prompt_eval_count);
  const completion = count(line.eval_count);
  if (prompt === undefined && completion === undefined) return undefined;
  const usage: Usage = { prompt_tokens: prompt ?? 0, completion_tokens: completion ?? 0 };
  const cached = count(line.prompt_eval_cached_count);
  if (cached !== undefined) usage.cached_tokens = cached;
  return usage;
}
