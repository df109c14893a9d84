import { isRecord } from '../../util/is-record.js';
import type { ConversationBuilder, ConversationEntry, ConversationRole } from '../core/conversation.js';
import { entryNamed, isOneOf } from '../core/fields.js';

const TEXT = new Set(['text']);
const ROLES: Record<string, ConversationRole> = { user: 'user', assistant: 'assistant' };
/** Blocks that call a tool (their `id` is answered by a block's `tool_use_id`). */
const CALLS = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

/**
 * Anthropic Messages: `system` (a string or text blocks) and `messages` whose content is a
 * string or blocks — text, tool_use (answered by a tool_result block with its id in the next
 * message), tool_result (string or text/image blocks), thinking, images — of which only text
 * is ever rewritten. Blocks keep every other key (cache_control, citations) as they were.
 */
export function describeMessagesConversation(body: Record<string, unknown>, view: ConversationBuilder): boolean {
  const messages = body.messages;
  if (!Array.isArray(messages)) return false;
  if (typeof body.system === 'string' || Array.isArray(body.system)) {
    const system = view.addMessage('system', 'system', undefined, undefined);
    view.addContent(system, body, 'system', '', { textTypes: TEXT, whenEmpty: () => delete body.system });
  }
  messages.forEach((raw, index) => {
    const path = `messages[${index}]`;
    if (!isRecord(raw)) {
      view.addMessage('other', path, raw, messages);
      return;
    }
    const message = view.addMessage(entryNamed(ROLES, raw.role) ?? 'other', path, raw, messages);
    const content = raw.content;
    if (!Array.isArray(content)) view.addContent(message, raw, 'content', path, { textTypes: TEXT });
    else content.forEach((_block, at) => addBlock(view, message, content, at, `${path}.content[${at}]`));
  });
  return true;
}

function addBlock(view: ConversationBuilder, message: ConversationEntry, content: unknown[], index: number, path: string): void {
  const block = content[index];
  if (!isRecord(block)) return;
  if (block.type === 'text') {
    view.addContentItem(message, content, index, path, { textTypes: TEXT });
    return;
  }
  if (isOneOf(CALLS, block.type) && typeof block.id === 'string') {
    message.calls.push(block.id);
    if (block.input !== undefined) message.fixedTexts.push(JSON.stringify(block.input));
    return;
  }
  if (typeof block.tool_use_id !== 'string') return;
  message.answers.push(block.tool_use_id);
  if (block.type === 'tool_result' || block.type === 'mcp_tool_result') {
    view.addContent(message, block, 'content', path, { textTypes: TEXT, toolResult: block.tool_use_id, whenEmpty: () => {} });
  }
}
