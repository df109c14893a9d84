import { isRecord } from '../../util/is-record.js';
import { holdsPartOf, type Recognition } from '../core/conversation.js';
import type { NeutralTool } from '../core/neutral.js';
import { isUnsupported } from '../core/types.js';
import { toolList } from './to-neutral.js';
import { isOneOf } from '../core/fields.js';

/** `thinking.type` enabled or adaptive. */
export function messagesAsksThinking(body: Record<string, unknown>): boolean {
  const type = isRecord(body.thinking) ? body.thinking.type : undefined;
  return type === 'enabled' || type === 'adaptive';
}

const IMAGE = new Set(['image']);

/** An `image` block in any message, a tool_result's content included. */
export function messagesHasImages(body: Record<string, unknown>): boolean {
  return holdsPartOf(body.messages, IMAGE);
}

/** The client's tools of its own kinds (Anthropic's hosted kinds are not function tools: none then). */
export function messagesTools(body: Record<string, unknown>): NeutralTool[] {
  const list = toolList(body.tools);
  return isUnsupported(list) ? [] : list.tools;
}

/** `tool_choice: {"type": "none"}`. */
export function messagesChoosesNoTool(body: Record<string, unknown>): boolean {
  return isRecord(body.tool_choice) && body.tool_choice.type === 'none';
}

const BLOCKS = new Set(['tool_use', 'tool_result', 'thinking', 'redacted_thinking', 'document', 'server_tool_use', 'search_result']);

/** Anthropic's own marks: a top-level `system`, its content blocks, an image with a `source`. */
export function recognizeMessages(body: Record<string, unknown>): Recognition {
  if (!Array.isArray(body.messages)) return null;
  if (body.system !== undefined) return 'own';
  for (const message of body.messages) {
    if (!isRecord(message) || !Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (isRecord(block) && (isOneOf(BLOCKS, block.type) || (block.type === 'image' && isRecord(block.source)))) return 'own';
    }
  }
  return 'fits';
}
