import { isRecord } from '../../util/is-record.js';

/**
 * A Messages body relayed to a server that imitates Anthropic's API (an openai-type provider
 * with `passthrough: [messages]`: llama.cpp, vLLM, LiteLLM, Ollama) rather than Anthropic:
 * - `metadata.user_id` is left out: Claude Code's carries its device and session ids, which
 *   are Anthropic's business only;
 * - `cache_control.ttl` is left out (`{type: "ephemeral"}` stays): servers that know the
 *   older form reject the 1-hour one Claude Code sends (LiteLLM PR #39355).
 * Copy on write: the client's body is shared by every tier of the request.
 */
export function forForeignServer(body: Record<string, unknown>): void {
  if (isRecord(body.metadata) && 'user_id' in body.metadata) {
    const { user_id: _dropped, ...rest } = body.metadata;
    if (Object.keys(rest).length > 0) body.metadata = rest;
    else delete body.metadata;
  }
  if (Array.isArray(body.system)) body.system = withoutTtl(body.system);
  if (Array.isArray(body.tools)) body.tools = withoutTtl(body.tools);
  if (Array.isArray(body.messages)) {
    body.messages = mapChanged(body.messages, (message) => {
      if (!isRecord(message) || !Array.isArray(message.content)) return message;
      const content = withoutTtl(message.content);
      return content === message.content ? message : { ...message, content };
    });
  }
}

/** The blocks with any `cache_control.ttl` removed; the same array when none had one. */
function withoutTtl(blocks: unknown[]): unknown[] {
  return mapChanged(blocks, (block) => {
    if (!isRecord(block) || !isRecord(block.cache_control) || !('ttl' in block.cache_control)) return block;
    const { ttl: _ttl, ...cacheControl } = block.cache_control;
    return { ...block, cache_control: cacheControl };
  });
}

/** `items` mapped; the same array when `change` returned every item itself. */
function mapChanged(items: unknown[], change: (item: unknown) => unknown): unknown[] {
  let out: unknown[] | null = null;
  for (let i = 0; i < items.length; i++) {
    const changed = change(items[i]);
    if (changed !== items[i]) (out ??= items.slice())[i] = changed;
  }
  return out ?? items;
}
