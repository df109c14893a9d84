import { isRecord } from '../../util/is-record.js';
import type { ConversationBuilder, ConversationRole } from '../core/conversation.js';
import { entryNamed } from '../core/fields.js';

const TEXT = new Set(['text']);
const ROLES: Record<string, ConversationRole> = { system: 'system', developer: 'system', user: 'user', assistant: 'assistant', tool: 'tool', function: 'tool' };

/**
 * OpenAI Chat Completions: `messages` with string or text-part content; an assistant's
 * `tool_calls` (and the legacy `function_call`) answered by `tool` (and `function`) messages.
 */
export function describeChatConversation(body: Record<string, unknown>, view: ConversationBuilder): boolean {
  const messages = body.messages;
  if (!Array.isArray(messages)) return false;
  let legacyCall: string | undefined; // the last `function_call`, which a `function` message answers
  messages.forEach((raw, index) => {
    const path = `messages[${index}]`;
    if (!isRecord(raw)) {
      view.addMessage('other', path, raw, messages);
      return;
    }
    const role = entryNamed(ROLES, raw.role) ?? 'other';
    const message = view.addMessage(role, path, raw, messages);
    if (role === 'tool') {
      const callId = raw.role === 'function' ? legacyCall : typeof raw.tool_call_id === 'string' ? raw.tool_call_id : undefined;
      if (callId !== undefined) message.answers.push(callId);
      view.addContent(message, raw, 'content', path, { textTypes: TEXT, toolResult: callId ?? '' });
      return;
    }
    view.addContent(message, raw, 'content', path, { textTypes: TEXT });
    if (role !== 'assistant') return;
    if (Array.isArray(raw.tool_calls)) {
      for (const call of raw.tool_calls) {
        if (!isRecord(call)) continue;
        if (typeof call.id === 'string') message.calls.push(call.id);
        const fn = isRecord(call.function) ? call.function : isRecord(call.custom) ? call.custom : undefined;
        const args = fn?.arguments ?? fn?.input;
        if (typeof args === 'string') message.fixedTexts.push(args);
      }
    }
    if (isRecord(raw.function_call)) {
      legacyCall = `function_call@${index}`;
      message.calls.push(legacyCall);
      if (typeof raw.function_call.arguments === 'string') message.fixedTexts.push(raw.function_call.arguments);
    }
  });
  return true;
}
