import { count, type Usage } from '../core/usage.js';
import { isRecord } from '../../util/is-record.js';
import type { FinishReason } from '../core/neutral.js';

/**
 * Gemini's `usageMetadata` and finish reasons in the neutral convention, and back.
 * `promptTokenCount` includes the cached tokens (`cachedContentTokenCount`), as OpenAI's
 * `prompt_tokens` does; thoughts (`thoughtsTokenCount`) are output, as OpenAI counts reasoning
 * in `completion_tokens`, while `candidatesTokenCount` leaves them out.
 */
export function geminiUsage(metadata: unknown): Partial<Usage> | undefined {
  if (!isRecord(metadata)) return undefined;
  const prompt = count(metadata.promptTokenCount);
  const candidates = count(metadata.candidatesTokenCount);
  const thoughts = count(metadata.thoughtsTokenCount);
  const cached = count(metadata.cachedContentTokenCount);
  if (prompt === undefined && candidates === undefined && thoughts === undefined) return undefined;
  const usage: Partial<Usage> = {};
  if (prompt !== undefined) usage.prompt_tokens = prompt;
  if (candidates !== undefined || thoughts !== undefined) usage.completion_tokens = (candidates ?? 0) + (thoughts ?? 0);
  if (cached !== undefined && cached > 0) usage.cached_tokens = cached;
  return usage;
}

/** Neutral usage as Gemini's `usageMetadata` (reasoning tokens are not told apart: all output is candidates'). */
export function usageMetadata(usage: Usage): Record<string, number> {
  const metadata: Record<string, number> = {
    promptTokenCount: usage.prompt_tokens,
    candidatesTokenCount: usage.completion_tokens,
    totalTokenCount: usage.prompt_tokens + usage.completion_tokens,
  };
  if (usage.cached_tokens) metadata.cachedContentTokenCount = usage.cached_tokens;
  return metadata;
}

/** Gemini's reasons a candidate stopped for its safety filters (the neutral `content_filter`). */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'LANGUAGE']);

/** A candidate's `finishReason` in the neutral words: `STOP` (also after function calls: the caller settles it), `MAX_TOKENS`, the filters. */
export function neutralFinish(reason: unknown): FinishReason | undefined {
  if (typeof reason !== 'string' || reason === '' || reason === 'FINISH_REASON_UNSPECIFIED') return undefined;
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  return 'stop';
}

/** A neutral finish as Gemini says it: a turn that ended in function calls is `STOP`, as Gemini's own are. */
export function geminiFinish(reason: FinishReason): 'STOP' | 'MAX_TOKENS' | 'SAFETY' {
  return reason === 'length' ? 'MAX_TOKENS' : reason === 'content_filter' ? 'SAFETY' : 'STOP';
}
