import type { NeutralRequest } from '../protocols/core/neutral.js';
import { type ClientRequest, isUnsupported } from '../protocols/core/types.js';
import { type Encoding, memoizedCounter, type TokenCounter, tokenCounter } from '../tokens/count.js';

/** Tokens a chat template adds around each message (role markers): a small, generous constant. */
const PER_MESSAGE_TOKENS = 4;

/**
 * A request's prompt tokens for the fit check, counted once per request (every tier of the
 * route sees the same count) with the project's counter, remembering texts: an agent re-sends
 * its whole history, so each text is counted on its own — the memo then finds every earlier
 * one, and only the new turn is really counted.
 */
export class PromptCount {
  private readonly counts = new Map<Encoding, number>();

  constructor(private readonly request: ClientRequest) {}

  /** The count made so far (the first made), if any: what silent-truncation detection compares with. */
  get made(): number | undefined {
    for (const count of this.counts.values()) return count;
    return undefined;
  }

  async tokens(encoding: Encoding): Promise<number> {
    const known = this.counts.get(encoding);
    if (known !== undefined) return known;
    const counter = memoizedCounter(await tokenCounter(encoding));
    const neutral = this.request.neutral();
    const count = isUnsupported(neutral) ? counter.count(JSON.stringify(this.request.body)) : countNeutral(neutral, counter);
    this.counts.set(encoding, count);
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
