import type { IncomingHttpHeaders } from 'node:http';
import type { Provider } from '../config/schema.js';
import type { ClientProtocol } from './core/names.js';
import { chatClient } from './chat/client.js';
import { chatWire } from './chat/wire.js';
import { geminiClient } from './gemini/client.js';
import { geminiWire } from './gemini/wire.js';
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
import { geminiEmbeddings } from './gemini/embeddings.js';
import { parseEmbeddings } from './embeddings/inputs.js';
import { callsUnder, modelInPath, type PathTemplate, templateOf } from './core/endpoint-path.js';

/** The protocols with embeddings (docs/embeddings.md): a protocol's embeddings are a file in its folder plus a line here. */
const EMBEDDINGS: Partial<Record<WireProtocol, ProtocolEmbeddings>> = {
  chat: openaiEmbeddings,
  ollama: ollamaEmbeddings,
  gemini: geminiEmbeddings,
};

/** Every protocol llm-route speaks, registered once: a new protocol is new files plus a line here. */
const CLIENTS: Record<ClientProtocol, ClientCodec> = {
  chat: withEmbeddings(chatClient),
  responses: responsesClient,
  messages: messagesClient,
  ollama: withEmbeddings(ollamaClient),
  gemini: withEmbeddings(geminiClient),
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
    // A batch with no input is answered as one (no vectors), never taken for a model load.
    loading: undefined,
    parse: (body, headers, credential, target) => parseEmbeddings(codec.protocol, client.read, body, headers, credential, target),
  };
}

/**
 * A client protocol's codec for the embeddings endpoint `body` is for, as `explain` reads a body:
 * the first whose reader takes it (Gemini's `:embedContent` or `:batchEmbedContents`), else its
 * first; undefined when the protocol has none.
 */
export function embeddingsCodec(protocol: ClientProtocol, body: Record<string, unknown> = {}, route = ''): ClientCodec | undefined {
  const codecs = CLIENTS[protocol].endpoints.flatMap((e) => (e.serves === 'model' && e.codec?.embeddings !== undefined ? [e.codec] : []));
  return codecs.find((codec) => typeof codec.embeddings?.read(body, route) !== 'string') ?? codecs[0];
}

/** Each protocol's first embeddings endpoint (`/v1/embeddings`, …), a path template naming `route`: where a request for it goes. */
export function embeddingPaths(route: string): string[] {
  return Object.values(EMBEDDINGS).map(({ endpoints: [first] }) => {
    const template = templateOf(first.path);
    return template ? `${template.head}${route}${template.tail}` : first.path;
  });
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
  gemini: geminiWire,
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

/** An endpoint a request's path reaches, with the route a template in it named. */
export interface EndpointMatch extends ServedEndpoint {
  model?: string;
}

const served: ServedEndpoint[] = CLIENT_LIST.flatMap((codec) => codec.endpoints.map((endpoint) => ({ endpoint, codec })));

/** Every exact path of every client codec, each with its endpoints (several when they claim their requests: `GET /v1/models`). */
const EXACT: ReadonlyMap<string, readonly ServedEndpoint[]> = served.reduce((byPath, one) => {
  if (templateOf(one.endpoint.path) === null) byPath.set(one.endpoint.path, [...(byPath.get(one.endpoint.path) ?? []), one]);
  return byPath;
}, new Map<string, ServedEndpoint[]>());

/** The templated paths, method calls (`…{model}:generateContent`) before a model's own path (`…/models/{model}`). */
const TEMPLATES: ReadonlyArray<{ template: PathTemplate; served: ServedEndpoint }> = served
  .map((one) => ({ template: templateOf(one.endpoint.path), served: one }))
  .filter((entry): entry is { template: PathTemplate; served: ServedEndpoint } => entry.template !== null)
  .sort((a, b) => Number(a.template.tail === '') - Number(b.template.tail === ''));

/**
 * The client endpoint `path` reaches for this request: an exact path's first endpoint that claims
 * it (or claims nothing), else a template's, with the route its path names. Undefined: no codec
 * serves it (the server's own paths, or none).
 */
export function matchEndpoint(path: string, headers: IncomingHttpHeaders, query: URLSearchParams): EndpointMatch | undefined {
  const exact = EXACT.get(path);
  if (exact !== undefined) {
    for (const one of exact) if (claimed(one.endpoint, headers, query)) return one;
    return undefined;
  }
  if (TEMPLATES.length === 0) return undefined;
  for (const { template, served: one } of TEMPLATES) {
    const model = modelInPath(template, path);
    if (model !== undefined && claimed(one.endpoint, headers, query)) return { ...one, model };
  }
  return undefined;
}

function claimed(endpoint: ClientEndpoint, headers: IncomingHttpHeaders, query: URLSearchParams): boolean {
  return endpoint.serves !== 'info' || endpoint.claims === undefined || endpoint.claims(headers, query);
}

/** Whether some codec serves `path` (for some request). */
export function servesPath(path: string): boolean {
  return EXACT.has(path) || TEMPLATES.some(({ template }) => modelInPath(template, path) !== undefined);
}

/**
 * The codec whose error shape an answer to `path` takes: the endpoint's it reaches, or one whose
 * paths it falls under (a prefix it names, or a method call under one of its templates: Gemini's
 * `/v1/models/x:embedContent`); else Chat Completions'. Without the request's headers, an
 * endpoint that claims its requests claims none.
 */
export function codecOfPath(path: string, headers: IncomingHttpHeaders = {}, query: URLSearchParams = NO_QUERY): ClientCodec {
  const match = matchEndpoint(path, headers, query);
  if (match) return match.codec;
  for (const { template, served: one } of TEMPLATES) if (callsUnder(template, path)) return one.codec;
  for (const codec of CLIENT_LIST) if (codec.pathPrefix !== undefined && path.startsWith(codec.pathPrefix)) return codec;
  return CLIENT_LIST[0];
}

const NO_QUERY = new URLSearchParams();

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
