import type { IncomingHttpHeaders } from 'node:http';
import type { AppContext } from './app-context.js';

/** GET /v1/models: the route names, in OpenAI's list shape, or Anthropic's when the client sends anthropic-version. */
export function modelList(app: AppContext, headers: IncomingHttpHeaders): Record<string, unknown> {
  const names = [...app.config.routes.keys()];
  if (headers['anthropic-version'] !== undefined) {
    const createdAt = new Date(app.startedAt).toISOString();
    return {
      data: names.map((name) => ({ type: 'model', id: name, display_name: name, created_at: createdAt })),
      has_more: false,
      first_id: names[0] ?? null,
      last_id: names.at(-1) ?? null,
    };
  }
  const created = Math.floor(app.startedAt / 1000);
  return { object: 'list', data: names.map((name) => ({ id: name, object: 'model', created, owned_by: 'llm-route' })) };
}
