import { isRecord } from '../../util/is-record.js';
import type { ConversationBuilder, ConversationRole, Recognition } from '../core/conversation.js';
import { entryNamed } from '../core/fields.js';

/** `think`: true or a level ("low", "medium", "high"); false or absent asks for none. */
export function ollamaAsksThinking(body: Record<string, unknown>): boolean {
  return body.think === true || (typeof body.think === 'string' && body.think !== '');
}

/** Images as Ollama sends them: base64 strings in a message's `images` (or /api/generate's own). */
export function ollamaHasImages(body: Record<string, unknown>): boolean {
  if (hasSome(body.images)) return true;
  return Array.isArray(body.messages) && body.messages.some((message) => isRecord(message) && hasSome(message.images));
}

function hasSome(list: unknown): boolean {
  return Array.isArray(list) && list.length > 0;
}

/** Top-level fields only Ollama's API has. */
const OLLAMA_FIELDS = ['options', 'format', 'think', 'keep_alive'];

/**
 * Ollama's own marks: a message's `images` or `tool_name`, tool-call arguments as an object,
 * `options`, `format`, `think` or `keep_alive`. A /api/generate body (no `messages`) is no
 * conversation: savers leave it alone.
 */
export function recognizeOllama(body: Record<string, unknown>): Recognition {
  if (!Array.isArray(body.messages)) return null;
  if (OLLAMA_FIELDS.some((field) => body[field] !== undefined)) return 'own';
  for (const message of body.messages) {
    if (!isRecord(message)) continue;
    if (Array.isArray(message.images) || message.tool_name !== undefined) return 'own';
    if (
      Array.isArray(message.tool_calls) &&
      message.tool_calls.some((call) => isRecord(call) && isRecord(call.function) && isRecord(call.function.arguments))
    ) {
      return 'own';
    }
  }
  return 'fits';
}

const TEXT = new Set(['text']);
const ROLES: Record<string, ConversationRole> = { system: 'system', user: 'user', assistant: 'assistant', tool: 'tool' };

/**
 * Ollama's /api/chat: `messages` whose content is a string; an assistant's `tool_calls` (whose
 * arguments are an object) answered by `tool` messages that name the call (`tool_call_id`) or
 * only its tool (`tool_name`: then the n-th result of a tool answers its n-th call).
 */
export function describeOllamaConversation(body: Record<string, unknown>, view: ConversationBuilder): boolean {
  const messages = body.messages;
  if (!Array.isArray(messages)) return false;
  const called = new Map<string, number>();
  const answered = new Map<string, number>();
  const nth = (counts: Map<string, number>, name: string): string => {
    const n = counts.get(name) ?? 0;
    counts.set(name, n + 1);
    return `tool:${name}#${n}`;
  };
  messages.forEach((raw, index) => {
    const path = `messages[${index}]`;
    if (!isRecord(raw)) {
      view.addMessage('other', path, raw, messages);
      return;
    }
    const role = entryNamed(ROLES, raw.role) ?? 'other';
    const message = view.addMessage(role, path, raw, messages);
    if (role === 'tool') {
      const byName = typeof raw.tool_name === 'string' ? nth(answered, raw.tool_name) : '';
      const answers = typeof raw.tool_call_id === 'string' ? raw.tool_call_id : byName;
      if (answers !== '') message.answers.push(answers);
      view.addContent(message, raw, 'content', path, { textTypes: TEXT, toolResult: answers });
      return;
    }
    view.addContent(message, raw, 'content', path, { textTypes: TEXT });
    if (role !== 'assistant' || !Array.isArray(raw.tool_calls)) return;
    for (const call of raw.tool_calls) {
      const fn = isRecord(call) && isRecord(call.function) ? call.function : undefined;
      if (!fn) continue;
      if (typeof call.id === 'string') message.calls.push(call.id);
      if (typeof fn.name === 'string') message.calls.push(nth(called, fn.name));
      if (fn.arguments !== undefined) message.fixedTexts.push(typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments));
    }
  });
  return true;
}
