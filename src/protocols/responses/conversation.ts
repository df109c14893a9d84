import { isRecord } from '../../util/is-record.js';
import type { ConversationBuilder, ConversationRole } from '../core/conversation.js';
import { entryNamed } from '../core/fields.js';

const MESSAGE_TEXT = new Set(['input_text', 'output_text']);
const OUTPUT_TEXT = new Set(['input_text']);
const ROLES: Record<string, ConversationRole> = { system: 'system', developer: 'system', user: 'user', assistant: 'assistant' };
/** Tool outputs whose text savers may rewrite; other `*_output` items are answers kept as they are. */
const TEXT_OUTPUTS = new Set(['function_call_output', 'custom_tool_call_output']);

/**
 * OpenAI Responses: `instructions` (the system prompt) and `input`, a string or items —
 * messages (string or input_text/output_text parts), calls with a `call_id` answered by
 * `*_output` items with the same `call_id`, reasoning items (kept with what follows them).
 */
export function describeResponsesConversation(body: Record<string, unknown>, view: ConversationBuilder): boolean {
  const input = body.input;
  if (typeof input !== 'string' && !Array.isArray(input)) return false;
  if (typeof body.instructions === 'string') {
    view.addContent(view.addMessage('system', 'instructions', undefined, undefined), body, 'instructions', '', { textTypes: MESSAGE_TEXT });
  }
  if (typeof input === 'string') {
    view.addContent(view.addMessage('user', 'input', undefined, undefined), body, 'input', '', { textTypes: MESSAGE_TEXT });
    return true;
  }
  input.forEach((raw, index) => addItem(view, input, raw, `input[${index}]`));
  return true;
}

function addItem(view: ConversationBuilder, input: unknown[], raw: unknown, path: string): void {
  if (!isRecord(raw)) {
    view.addMessage('other', path, raw, input);
    return;
  }
  const type = raw.type;
  if (type === 'message' || (type === undefined && typeof raw.role === 'string')) {
    const message = view.addMessage(entryNamed(ROLES, raw.role) ?? 'other', path, raw, input);
    view.addContent(message, raw, 'content', path, { textTypes: MESSAGE_TEXT });
    return;
  }
  if (type === 'reasoning') {
    view.addMessage('assistant', path, raw, input).stickyNext = true;
    return;
  }
  const callId = typeof raw.call_id === 'string' ? raw.call_id : undefined;
  if (callId !== undefined && typeof type === 'string' && type.endsWith('_output')) {
    const message = view.addMessage('tool', path, raw, input);
    message.answers.push(callId);
    if (TEXT_OUTPUTS.has(type)) view.addContent(message, raw, 'output', path, { textTypes: OUTPUT_TEXT, toolResult: callId, whenEmpty: () => {} });
    return;
  }
  if (callId !== undefined) {
    const message = view.addMessage('assistant', path, raw, input);
    message.calls.push(callId);
    const args = raw.arguments ?? raw.input;
    if (typeof args === 'string') message.fixedTexts.push(args);
    return;
  }
  if (type === 'mcp_approval_request' && typeof raw.id === 'string') {
    view.addMessage('assistant', path, raw, input).calls.push(raw.id);
    return;
  }
  if (type === 'mcp_approval_response' && typeof raw.approval_request_id === 'string') {
    view.addMessage('tool', path, raw, input).answers.push(raw.approval_request_id);
    return;
  }
  view.addMessage('other', path, raw, input);
}
