import { type NeutralRequest, requestText } from './neutral.js';
import { type ClientRequest, isUnsupported } from './types.js';
import type { Usage } from './usage.js';
import { type Encoding, estimateTokens, memoizedCounter, type TokenCounter, tokenCounter } from '../../tokens/count.js';

/*
 * A request's prompt in tokens, two ways: counted exactly with the tier's encoding for the fit
 * check (PromptCount), and estimated cheaply for its holds on limits and budgets
 * (promptEstimate). Counting a text is src/tokens/'s; reading the request is the neutral
 * model's, so this sits here, where the Messages codec (its message_start's input tokens) can
 * use it too.
 */

/** Tokens a chat template adds around each message (role markers): a small, generous constant. */
const PER_MESSAGE_TOKENS = 4;

/**
 * A request's prompt tokens for the fit check, counted once per request (every tier of the
 * route sees the same count) with the project's counter, remembering texts: an agent re-sends
 * its whole history, so each text is counted on its own — the memo then finds every earlier
 * one, and only the new turn is really counted.
 */
export class PromptCount {
  /** Made at the first count: most requests are never counted (every request has a PromptCount). */
  private counts: Map<Encoding, number> | null = null;

  constructor(private readonly request: ClientRequest) {}

  /** The count made so far (the first made), if any: what silent-truncation detection compares with. */
  get made(): number | undefined {
    if (this.counts) for (const count of this.counts.values()) return count;
    return undefined;
  }

  async tokens(encoding: Encoding): Promise<number> {
    const known = this.counts?.get(encoding);
    if (known !== undefined) return known;
    const counter = memoizedCounter(await tokenCounter(encoding));
    const neutral = this.request.neutral();
    const count = isUnsupported(neutral) ? counter.count(JSON.stringify(this.request.body)) : countNeutral(neutral, counter);
    (this.counts ??= new Map()).set(encoding, count);
    return count;
  }
}

/** The texts requestText() joins, each counted on its own (so each is remembered on its own). */
export function countNeutral(request: NeutralRequest, counter: TokenCounter): number {
  let total = 0;
  for (const block of request.system) total += counter.count(block);
  for (const message of request.messages) {
    total += PER_MESSAGE_TOKENS;
    for (const part of message.content) {
      if (part.type === 'text') total += counter.count(part.text);
      else if (part.type === 'tool_call') total += counter.count(part.name) + counter.count(part.arguments);
      else if (part.type === 'reasoning') total += counter.count(part.text);
    }
  }
  for (const tool of request.tools) total += counter.count(tool.name) + counter.count(tool.description ?? '') + counter.count(JSON.stringify(tool.parameters));
  return total;
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
