import type { EmbeddingWire } from '../../../../src/protocols/core/embedding-codec.js';
import type { WireProtocol } from '../../../../src/protocols/core/types.js';
import { embeddingWire } from '../../../../src/protocols/registry.js';

/** A registered embedding wire, for tests that read its answers. */
export function registryEmbeddingWire(protocol: WireProtocol): EmbeddingWire {
  const wire = embeddingWire(protocol);
  if (!wire) throw new Error(`no embedding wire for ${protocol}`);
  return wire;
}
