import { isRecord } from '../../util/is-record.js';
import { holdsPartOf, type Recognition } from '../core/conversation.js';
import { NO_REASONING_EFFORTS } from '../core/neutral.js';
import { isOneOf } from '../core/fields.js';

const IMAGE = new Set(['image_url']);

/** A reasoning effort other than none / minimal. */
export function chatAsksThinking(body: Record<string, unknown>): boolean {
  const effort = body.reasoning_effort;
  return typeof effort === 'string' && !NO_REASONING_EFFORTS.has(effort);
}

/** An `image_url` part in any message, a tool message's content included. */
export function chatHasImages(body: Record<string, unknown>): boolean {
  return holdsPartOf(body.messages, IMAGE);
}

const CHAT_ROLES = new Set(['developer', 'function']);
const CHAT_PARTS = new Set(['image_url', 'input_audio', 'file', 'refusal']);

/**
 * Chat's own marks: a `developer` or `function` message, a `tool_call_id`, tool-call arguments
 * as JSON text, content parts only Chat has. `system` and `tool` messages and `tool_calls`
 * alone are Ollama's too: a body with them fits, nothing more.
 */
export function recognizeChat(body: Record<string, unknown>): Recognition {
  if (!Array.isArray(body.messages)) return null;
  for (const message of body.messages) {
    if (!isRecord(message)) continue;
    if (isOneOf(CHAT_ROLES, message.role) || message.tool_call_id !== undefined) return 'own';
    if (
      Array.isArray(message.tool_calls) &&
      message.tool_calls.some((call) => isRecord(call) && isRecord(call.function) && typeof call.function.arguments === 'string')
    ) {
      return 'own';
    }
    if (Array.isArray(message.content) && message.content.some((part) => isRecord(part) && isOneOf(CHAT_PARTS, part.type))) return 'own';
  }
  return 'fits';
}
