import { isRecord } from '../../util/is-record.js';
import { count, type Usage } from '../core/usage.js';

/** Responses usage (OpenAI's convention, like llm-route's: input_tokens includes cached). */
export function responsesUsage(value: unknown): Usage | undefined {
  if (!isRecord(value)) return undefined;
  const input = count(value.input_tokens);
  const output = count(value.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const usage: Usage = { prompt_tokens: input ?? 0, completion_tokens: output ?? 0 };
  const details = value.input_tokens_details;
  const cached = isRecord(details) ? count(details.cached_tokens) : undefined;
  if (cached !== undefined) usage.cached_tokens = cached;
  return usage;
}

/** llm-route's usage as a Responses `usage` object. */
export function toResponsesUsage(usage: Usage | undefined): Record<string, unknown> {
  const input = usage?.prompt_tokens ?? 0;
  const output = usage?.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage?.cached_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}
