import type { Provider } from '../config/schema.js';
import { ANTHROPIC_VERSION } from '../protocols/messages/wire.js';

/**
 * How a health check talks to a provider's server outside the chat endpoint: its credentials
 * in the style of its type, and where its model list is.
 */
export function checkHeaders(provider: Pick<Provider, 'type' | 'api_key' | 'headers'>): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json', ...provider.headers };
  if (provider.type === 'anthropic') {
    headers['anthropic-version'] = ANTHROPIC_VERSION;
    if (provider.api_key) headers['x-api-key'] = provider.api_key;
  } else if (provider.api_key) {
    headers.authorization = `Bearer ${provider.api_key}`;
  }
  return headers;
}

/** OpenAI's `{base_url}/models`, Anthropic's `{base_url}/v1/models`; Ollama's native list is /api/tags (see besideApiRoot). */
export function modelListUrl(provider: Pick<Provider, 'type' | 'base_url'>): URL {
  const base = new URL(provider.base_url);
  const url = new URL(base);
  url.pathname = `${base.pathname.replace(/\/+$/, '')}${provider.type === 'anthropic' ? '/v1/models' : '/models'}`;
  return url;
}
