import { routeKind } from '../config/find-route.js';
import type { Config, Route } from '../config/schema.js';
import { requestKind } from '../protocols/core/client-request.js';
import { embeddingPaths } from '../protocols/registry.js';
import type { ClientRequest } from '../protocols/core/types.js';

/**
 * docs/embeddings.md: a route answers one kind of request. A chat request that names an
 * embeddings route, or an embeddings request that names a chat route (a token count is a chat
 * request), is a 400 naming the route's kind; null when the kinds agree.
 */
export function wrongKind(config: Config, route: Route, request: ClientRequest): string | null {
  const kind = routeKind(route);
  if (requestKind(request) === kind) return null;
  if (kind === 'embeddings') {
    return `route "${route.name}" is an embeddings route (kind: embeddings, space "${route.embedding?.space}"): it answers embedding requests (POST ${embeddingPaths(route.name).join(', ')}), not chat`;
  }
  const embeddings = [...config.routes.values()].filter((other) => routeKind(other) === 'embeddings').map((other) => other.name);
  const where = embeddings.length > 0 ? `: name one of the embeddings routes (${embeddings.join(', ')})` : ': add a route of kind: embeddings';
  return `route "${route.name}" is a chat route: embeddings need a route of kind: embeddings${where}`;
}
