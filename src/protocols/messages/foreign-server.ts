import { isRecord } from '../../util/is-record.js';
import { withoutBillingLine } from './billing-line.js';

/**
 * A Messages body relayed to a server that imitates Anthropic's API (an openai-type provider
 * with `passthrough: [messages]`: llama.cpp, vLLM, LiteLLM, Ollama) rather than Anthropic:
 * - `metadata.user_id` is left out: Claude Code's carries its device and session ids, which
 *   are Anthropic's business only;
 * - `cache_control.ttl` is left out (`{type: "ephemeral"}` stays): servers that know the
 *   older form reject the 1-hour one Claude Code sends (LiteLLM PR #39355);
 * - Claude Code's billing line leaves the system prompt (billing-line.ts): llama.cpp (which pins its
 *   nonce), vLLM and SGLang handle it themselves, but Ollama's and LM Studio's endpoints, or a gateway in front
 *   of another vendor, would read a line that changes every turn (Bedrock refuses it outright).
 * Copy on write: the client's body is shared by every tier of the request.
 */
export function forForeignServer(body: Record<string, unknown>): void {
  if (isRecord(body.metadata) && 'user_id' in body.metadata) {
    const { user_id: _dropped, ...rest } = body.metadata;
    if (Object.keys(rest).length > 0) body.metadata = rest;
    else delete body.metadata;
  }
  const system = withoutBillingLine(body.system);
  if (system !== body.system && (system === '' || (Array.isArray(system) && system.length === 0))) delete body.system;
  else if (Array.isArray(system)) body.system = withoutTtl(system);
  else if (system !== body.system) body.system = system;
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
