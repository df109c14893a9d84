import { isRecord } from '../../util/is-record.js';
import type { NeutralRequest } from '../core/neutral.js';

/**
 * A conversation that moved between providers carries thinking another provider signed, and
 * Anthropic refuses a signature it did not make ("messages.1.content.0: Invalid `signature`
 * in `thinking` block"; CLIProxyAPI#1584). Which blocks are foreign cannot be told from the
 * signature, so the one retry such a refusal earns goes without any thinking of the past turns:
 * the model loses its earlier reasoning, not the conversation.
 */
const INVALID_SIGNATURE = /invalid\W{0,3}signature\W{0,3}in\W{0,3}(?:redacted_)?thinking/i;

export function isInvalidSignature(status: number | undefined, message: string): boolean {
  return status === 400 && INVALID_SIGNATURE.test(message);
}

/** A Messages body without its assistant turns' thinking and redacted_thinking blocks; null when it has none. */
export function messagesWithoutThinking(body: Record<string, unknown>): Record<string, unknown> | null {
  if (!Array.isArray(body.messages)) return null;
  let removed = false;
  const messages = body.messages.map((message: unknown) => {
    if (!isRecord(message) || message.role !== 'assistant' || !Array.isArray(message.content)) return message;
    const content = message.content.filter((block: unknown) => !(isRecord(block) && (block.type === 'thinking' || block.type === 'redacted_thinking')));
    if (content.length === message.content.length) return message;
    removed = true;
    return { ...message, content };
  });
  return removed ? { ...body, messages } : null;
}

/** A neutral request without signed (or redacted) reasoning; null when it has none. */
export function neutralWithoutSignedThinking(request: NeutralRequest): NeutralRequest | null {
  let removed = false;
  const messages = request.messages.map((message) => {
    if (message.role !== 'assistant') return message;
    const content = message.content.filter((part) => !(part.type === 'reasoning' && (part.signature || part.redacted)));
    if (content.length === message.content.length) return message;
    removed = true;
    return { ...message, content };
  });
  return removed ? { ...request, messages } : null;
}
