import type { Provider } from '../../config/schema.js';
import type { ClientProtocol } from './names.js';
import { chatClient } from '../chat/client.js';
import { chatWire } from '../chat/wire.js';
import { messagesClient } from '../messages/client.js';
import { messagesWire } from '../messages/wire.js';
import { ollamaWire } from '../ollama/wire.js';
import { responsesClient } from '../responses/client.js';
import { responsesWire } from '../responses/wire.js';
import type { ClientCodec, WireCodec, WireProtocol } from './types.js';

/** Every protocol llm-route speaks, registered once: a new protocol is new files plus a line here. */
const CLIENTS: Record<ClientProtocol, ClientCodec> = {
  chat: chatClient,
  responses: responsesClient,
  messages: messagesClient,
};

const WIRES: Record<WireProtocol, WireCodec> = {
  chat: chatWire,
  responses: responsesWire,
  messages: messagesWire,
  ollama: ollamaWire,
};

/** The wire protocol a provider type speaks natively. */
const NATIVE: Record<Provider['type'], WireProtocol> = {
  openai: 'chat',
  anthropic: 'messages',
  ollama: 'ollama',
};

export function clientCodec(protocol: ClientProtocol): ClientCodec {
  return CLIENTS[protocol];
}

export function wireCodec(protocol: WireProtocol): WireCodec {
  return WIRES[protocol];
}

/** The wire a provider is called on for a client speaking `protocol`: that protocol when the server speaks it (relay), else its own. */
export function wireFor(provider: Provider, protocol: ClientProtocol): WireCodec {
  return wireCodec(speaks(provider, protocol) ? protocol : NATIVE[provider.type]);
}

/** The provider's native wire (health checks, probes, bench). */
export function nativeWire(provider: Provider): WireCodec {
  return wireCodec(NATIVE[provider.type]);
}

/** Whether a provider's server speaks `protocol` itself: natively, or declared in `passthrough`. */
export function speaks(provider: Provider, protocol: WireProtocol): boolean {
  return NATIVE[provider.type] === protocol || (provider.passthrough?.includes(protocol as 'responses' | 'messages') ?? false);
}
