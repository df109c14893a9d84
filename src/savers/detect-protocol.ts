import { clientCodecs } from '../protocols/registry.js';
import type { ClientProtocol } from '../telemetry/events.js';
import { isRecord } from '../util/is-record.js';

/**
 * The protocol a request body is written in, from its shape, as each client codec recognizes
 * its own: the first that finds what only its protocol writes (Responses' `input`, Anthropic's
 * top-level `system` or blocks, Ollama's `images` and `options`, Chat's `developer` role or
 * `image_url` parts), else the first the body could be (a plain user/assistant exchange reads
 * the same in several: Chat Completions, the first registered). Null: not a request body.
 */
export function detectProtocol(body: unknown): ClientProtocol | null {
  if (!isRecord(body)) return null;
  let fits: ClientProtocol | null = null;
  for (const codec of clientCodecs()) {
    const seen = codec.recognize(body);
    if (seen === 'own') return codec.protocol;
    if (seen === 'fits') fits ??= codec.protocol;
  }
  return fits;
}
