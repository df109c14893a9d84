import { requestText } from './core/neutral.js';
import { type ClientRequest, isUnsupported } from './core/types.js';
import type { Usage } from './core/usage.js';
import { loadedTokenCounter } from '../tokens/count.js';

/**
 * Token estimates for admission (budgets, tpm), made on the request path, so cheap: the real
 * tokenizer when it is already loaded in this thread, else a third of the UTF-8 bytes (a
 * generous count for English and code). What is billed is settled later from the upstream's usage.
 */
export function estimateTokens(text: string): number {
  if (text === '') return 0;
  const counter = loadedTokenCounter();
  return counter ? counter.count(text) : Math.ceil(Buffer.byteLength(text) / 3);
}

/** The prompt's tokens: its message contents, or the whole body when it has no neutral form. */
export function promptEstimate(request: ClientRequest): number {
  const neutral = request.neutral();
  return estimateTokens(isUnsupported(neutral) ? JSON.stringify(request.body) : requestText(neutral));
}

/** The request's own max tokens, when it sets them. */
export function askedMaxTokens(request: ClientRequest): number | undefined {
  const neutral = request.neutral();
  return isUnsupported(neutral) ? undefined : neutral.maxTokens;
}

/** What an answer used: the upstream's usage, else the prompt estimate and the answer's text counted the same cheap way. */
export function usedTokens(usage: Usage | undefined, promptTokens: number, completionText: string): Usage {
  return usage ?? { prompt_tokens: promptTokens, completion_tokens: estimateTokens(completionText) };
}
