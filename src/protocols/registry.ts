import type { Provider } from '../config/schema.js';
import type { ClientProtocol } from './core/names.js';
import { chatClient } from './chat/client.js';
import { chatWire } from './chat/wire.js';
import { messagesClient } from './messages/client.js';
import { messagesWire } from './messages/wire.js';
import { ollamaClient } from './ollama/client.js';
import { ollamaWire } from './ollama/wire.js';
import { responsesClient } from './responses/client.js';
import { responsesWire } from './responses/wire.js';
import type { WireCodec, WireProtocol } from './core/types.js';
import { profileOf } from './profiles.js';
import type { ClientCodec, ClientEndpoint } from './core/client-codec.js';
import type { EmbeddingClient, EmbeddingWire, ProtocolEmbeddings } from './core/embedding-codec.js';
import { openaiEmbeddings } from './chat/embeddings.js';
import { ollamaEmbeddings } from './ollama/embeddings.js';
import { parseEmbeddings } from './embeddings/inputs.js';

/** The protocols with embeddings (docs/embeddings.md): a protocol's embeddings are a file in its folder plus a line here. */
const EMBEDDINGS: Partial<Record<WireProtocol, ProtocolEmbeddings>> = {
  chat: openaiEmbeddings,
  ollama: ollamaEmbeddings,
};

/** Every protocol llm-route speaks, registered once: a new protocol is new files plus a line here. */
const CLIENTS: Record<ClientProtocol, ClientCodec> = {
  chat: withEmbeddings(chatClient),
  responses: responsesClient,
  messages: messagesClient,
  ollama: withEmbeddings(ollamaClient),
};

/** A client codec with its protocol's embeddings endpoints added (each served with the protocol's errors), when it has some. */
function withEmbeddings(codec: ClientCodec): ClientCodec {
  const embeddings = EMBEDDINGS[codec.protocol];
  if (!embeddings) return codec;
  const endpoints = embeddings.endpoints.map(
    (endpoint): ClientEndpoint => ({ path: endpoint.path, method: 'POST', serves: 'model', codec: embeddingCodec(codec, endpoint.client) }),
  );
  return { ...codec, endpoints: [...codec.endpoints, ...endpoints] };
}

/** The protocol's codec for one embeddings endpoint: its errors and what it tells of a request, its batches read and answered by `client`. */
function embeddingCodec(codec: ClientCodec, client: EmbeddingClient): ClientCodec {
  return {
    ...codec,
    endpoints: [],
    embeddings: client,
    parse: (body, headers, credential) => parseEmbeddings(codec.protocol, client.read, body, headers, credential),
  };
}

/** A client protocol's codec for its (first) embeddings endpoint, as `explain` reads a body; undefined when it has none. */
export function embeddingsCodec(protocol: ClientProtocol): ClientCodec | undefined {
  const endpoint = CLIENTS[protocol].endpoints.find((e) => e.serves === 'model' && e.codec?.embeddings !== undefined);
  return endpoint?.serves === 'model' ? endpoint.codec : undefined;
}

/** The embeddings side of a wire's servers; undefined when it has none (Anthropic's API). */
export function embeddingWire(protocol: WireProtocol): EmbeddingWire | undefined {
  return EMBEDDINGS[protocol]?.wire;
}

const WIRES: Record<WireProtocol, WireCodec> = {
  chat: chatWire,
  responses: responsesWire,
  messages: messagesWire,
  ollama: ollamaWire,
};

/** The client codecs in the order they are registered (Chat Completions first: the shape of answers to paths no protocol owns). */
const CLIENT_LIST: readonly ClientCodec[] = Object.values(CLIENTS);

export function clientCodec(protocol: ClientProtocol): ClientCodec {
  return CLIENTS[protocol];
}

export function clientCodecs(): readonly ClientCodec[] {
  return CLIENT_LIST;
}

/** An endpoint the client codecs name, with the codec whose protocol it speaks. */
export interface ServedEndpoint {
  endpoint: ClientEndpoint;
  codec: ClientCodec;
}

/** Every endpoint of every client codec, by path. */
const ENDPOINTS: ReadonlyMap<string, ServedEndpoint> = new Map(
  CLIENT_LIST.flatMap((codec) => codec.endpoints.map((endpoint): [string, ServedEndpoint] => [endpoint.path, { endpoint, codec }])),
);

/** The client endpoint at `path`, if a codec names one. */
export function clientEndpoint(path: string): ServedEndpoint | undefined {
  return ENDPOINTS.get(path);
}

/** The codec whose error shape an answer to `path` takes: its endpoint's, or one whose paths it falls under; else Chat Completions'. */
export function codecOfPath(path: string): ClientCodec {
  const served = ENDPOINTS.get(path);
  if (served) return served.codec;
  for (const codec of CLIENT_LIST) if (codec.pathPrefix !== undefined && path.startsWith(codec.pathPrefix)) return codec;
  return CLIENT_LIST[0];
}

export function wireCodec(protocol: WireProtocol): WireCodec {
  return WIRES[protocol];
}

/** The wire a provider is called on for a client speaking `protocol`: that protocol when the server speaks it (relay), else its own. */
export function wireFor(provider: Provider, protocol: ClientProtocol): WireCodec {
  return wireCodec(speaks(provider, protocol) ? protocol : profileOf(provider).wire);
}

/** The provider's native wire (health checks, probes, bench). */
export function nativeWire(provider: Provider): WireCodec {
  return wireCodec(profileOf(provider).wire);
}

/** Whether a provider's server speaks `protocol` itself: natively, or declared in `passthrough`. */
export function speaks(provider: Provider, protocol: WireProtocol): boolean {
  return profileOf(provider).wire === protocol || (provider.passthrough?.includes(protocol as 'responses' | 'messages') ?? false);
}
