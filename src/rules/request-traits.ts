import type { ClientProtocol } from '../protocols/core/names.js';
import { clientCodec, clientCodecs } from '../protocols/registry.js';

// What a request asks for, read off the client's body as sent (no neutral form made): the
// `thinking` and `images` keys of a rule's `when` (docs/rules.md). Each protocol's
// codec knows how its body says it (Anthropic's `thinking`, OpenAI's reasoning effort, Ollama's
// `think`; `image_url`, `image` and `input_image` parts, Ollama's `images`).

/** The body, in `protocol`, asks the model to reason. */
export function asksThinking(protocol: ClientProtocol, body: Record<string, unknown>): boolean {
  return clientCodec(protocol).asksThinking(body);
}

/** An image anywhere in the conversation, tool results included: as `protocol` writes one, or as any client protocol does. */
export function hasImages(body: Record<string, unknown>, protocol?: ClientProtocol): boolean {
  if (protocol !== undefined) return clientCodec(protocol).hasImages(body);
  return clientCodecs().some((codec) => codec.hasImages(body));
}
