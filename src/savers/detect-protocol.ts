import type { ClientProtocol } from '../telemetry/events.js';
import { isRecord } from '../util/is-record.js';

const ANTHROPIC_BLOCKS = new Set(['tool_use', 'tool_result', 'thinking', 'redacted_thinking', 'document', 'server_tool_use', 'search_result']);
const CHAT_PARTS = new Set(['image_url', 'input_audio', 'file', 'refusal']);
const CHAT_ROLES = new Set(['system', 'developer', 'tool', 'function']);

/**
 * The protocol a request body is written in, from its shape: `input` is Responses; `messages`
 * with a top-level `system` or Anthropic blocks is Anthropic Messages; other `messages` are Chat
 * Completions (a plain user/assistant exchange reads the same in both). Null: not a request body.
 */
export function detectProtocol(body: unknown): ClientProtocol | null {
  if (!isRecord(body)) return null;
  if (!Array.isArray(body.messages)) return typeof body.input === 'string' || Array.isArray(body.input) ? 'responses' : null;
  if (body.system !== undefined) return 'messages';
  for (const message of body.messages) {
    if (!isRecord(message)) continue;
    if (CHAT_ROLES.has(String(message.role)) || message.tool_calls !== undefined || message.tool_call_id !== undefined) return 'chat';
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (!isRecord(block)) continue;
      if (ANTHROPIC_BLOCKS.has(String(block.type)) || (block.type === 'image' && isRecord(block.source))) return 'messages';
      if (CHAT_PARTS.has(String(block.type))) return 'chat';
    }
  }
  return 'chat';
}
