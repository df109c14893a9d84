import type { IncomingHttpHeaders } from 'node:http';
import type { Route } from '../config/schema.js';
import type { AppContext } from '../control/app-context.js';
import { routeFacts } from './model-catalog.js';

/**
 * GET /v1/models: the routes, in OpenAI's list shape, or Anthropic's when the client sends
 * anthropic-version; each with the window a client may plan with (docs/rules.md):
 * `context_window` / `max_input_tokens`, left out when no tier's window is known.
 */
export function modelList(app: AppContext, headers: IncomingHttpHeaders): Record<string, unknown> {
  const routes = [...app.config.routes.values()];
  const names = routes.map((route) => route.name);
  if (headers['anthropic-version'] !== undefined) {
    const createdAt = new Date(app.startedAt).toISOString();
    return {
      data: routes.map((route) => ({ type: 'model', id: route.name, display_name: route.name, created_at: createdAt, ...windowOf(route, 'max_input_tokens') })),
      has_more: false,
      first_id: names[0] ?? null,
      last_id: names.at(-1) ?? null,
    };
  }
  const created = Math.floor(app.startedAt / 1000);
  return {
    object: 'list',
    data: routes.map((route) => ({ id: route.name, object: 'model', created, owned_by: 'llm-route', ...windowOf(route, 'context_window'), ...kindOf(route) })),
  };
}

/** An embeddings route says so, in Ollama's word for it (docs/embeddings.md); a chat route's entry is OpenAI's own shape. */
function kindOf(route: Route): Record<string, string[]> {
  return route.embedding ? { capabilities: ['embedding'] } : {};
}

/** The route's largest known window (see routeFacts), under the list's key; nothing when no tier's window is known. */
function windowOf(route: Route, key: 'context_window' | 'max_input_tokens'): Record<string, number> {
  const context = routeFacts(route).context;
  return context === undefined ? {} : { [key]: context };
}
