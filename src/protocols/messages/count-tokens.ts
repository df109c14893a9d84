import type { TokenCounting } from '../core/client-codec.js';
import { asTokenCount } from '../core/client-request.js';
import { requestText } from '../core/neutral.js';
import { type ClientRequest, isUnsupported } from '../core/types.js';

/**
 * Messages' count_tokens (POST /v1/messages/count_tokens), a capability of its codec: the
 * request as a token count (asked of a tier whose server counts Messages tokens, see the
 * wire's countTokensRequest), and the answer llm-route gives itself when no tier counts.
 */
export const messagesTokenCounting: TokenCounting = {
  asCount: asTokenCount,

  /** llm-route's own count of the prompt, in Messages' answer shape. */
  estimate(request: ClientRequest, count: (text: string) => number): { input_tokens: number } {
    const neutral = request.neutral();
    return { input_tokens: count(isUnsupported(neutral) ? JSON.stringify(request.body.messages) : requestText(neutral)) };
  },
};
