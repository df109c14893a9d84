import type { TokenCounting } from '../core/client-codec.js';
import { asTokenCount } from '../core/client-request.js';
import { requestText } from '../core/neutral.js';
import { type ClientRequest, isUnsupported } from '../core/types.js';
import { generationOf } from './schema.js';

/**
 * Gemini's countTokens (`POST …/models/{model}:countTokens`), a capability of its codec: asked
 * of the route's first gemini tier (relayed, see the wire's countTokensRequest), else counted by
 * llm-route with a real tokenizer, answered as Gemini does: `{"totalTokens": n}`.
 */
export const geminiTokenCounting: TokenCounting = {
  asCount: asTokenCount,

  estimate(request: ClientRequest, count: (text: string) => number): { totalTokens: number } {
    const neutral = request.neutral();
    return { totalTokens: count(isUnsupported(neutral) ? JSON.stringify(generationOf(request.body).contents ?? []) : requestText(neutral)) };
  },
};
