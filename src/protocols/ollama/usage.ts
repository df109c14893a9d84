import { count, type Usage } from '../core/usage.js';

/** Ollama's counts on its final line (no cache figures). */
export function ollamaUsage(line: Record<string, unknown>): Usage | undefined {
  const prompt = count(line.prompt_eval_count);
  const completion = count(line.eval_count);
  if (prompt === undefined && completion === undefined) return undefined;
  return { prompt_tokens: prompt ?? 0, completion_tokens: completion ?? 0 };
}
