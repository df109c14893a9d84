import type { ClientProtocol } from '../protocols/core/names.js';

// What a request asks for, read off the client's body as sent (no neutral form made): the
// `thinking`, `images` and `tools` keys of a rule's `when` (SPEC "Routing by purpose").

/** Reasoning efforts that ask for none (Chat `reasoning_effort`, Responses `reasoning.effort`). */
const NO_REASONING = new Set(['none', 'minimal']);

/** Anthropic `thinking.type` enabled or adaptive; Chat / Responses a reasoning effort other than none / minimal. */
export function asksThinking(protocol: ClientProtocol, body: Record<string, unknown>): boolean {
  if (protocol === 'messages') {
    const type = field(body.thinking, 'type');
    return type === 'enabled' || type === 'adaptive';
  }
  const effort = protocol === 'chat' ? body.reasoning_effort : field(body.reasoning, 'effort');
  return typeof effort === 'string' && !NO_REASONING.has(effort);
}

/** Content part types that carry an image in the three client protocols. */
const IMAGE_TYPES = new Set(['image', 'image_url', 'input_image']);

/** An image anywhere in the conversation (`messages`, or Responses' `input`), tool results included. */
export function hasImages(body: Record<string, unknown>): boolean {
  return partsHaveImage(body.messages, 0) || partsHaveImage(body.input, 0);
}

// Content nests a few levels (message → tool_result → content → image); a hostile body's depth
// is already bounded by the JSON reader, this bound keeps the walk short anyway. Plain loops:
// an 80 KB agent history is a few hundred parts, walked in a few µs.
const MAX_DEPTH = 8;

function partsHaveImage(list: unknown, depth: number): boolean {
  if (!Array.isArray(list) || depth > MAX_DEPTH) return false;
  for (let i = 0; i < list.length; i++) {
    const part: unknown = list[i];
    if (part === null || typeof part !== 'object') continue;
    const { type, content, output } = part as { type?: unknown; content?: unknown; output?: unknown };
    if (typeof type === 'string' && IMAGE_TYPES.has(type)) return true;
    // A message's or a tool result's own parts (a string content has none).
    if (typeof content === 'object' && partsHaveImage(content, depth + 1)) return true;
    if (typeof output === 'object' && partsHaveImage(output, depth + 1)) return true;
  }
  return false;
}

function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}
