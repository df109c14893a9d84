import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppContext } from '../control/app-context.js';
import { closesConnection, readJsonBody } from '../http/read-body.js';
import type { ModelCatalog } from '../protocols/core/endpoints.js';
import type { ClientCodec, InfoEndpoint, RequestTarget } from '../protocols/core/client-codec.js';
import { modelCatalog } from './model-catalog.js';

/**
 * An answer llm-route makes itself at a codec's info endpoint (Ollama's /api/tags, /api/show,
 * /api/version, …): the body read with the server's limits when the endpoint reads one, the
 * routes as models only when the answer asks for them. No tier is asked.
 */
export async function serveInfo(
  req: IncomingMessage,
  res: ServerResponse,
  app: AppContext,
  codec: ClientCodec,
  endpoint: InfoEndpoint,
  id: string,
  target: RequestTarget,
): Promise<void> {
  let body: unknown;
  if (endpoint.readsBody) {
    const read = await readJsonBody(req, app.config.server.max_body_bytes, codec.anyContentType);
    if (!read.ok) {
      if (read.status === 499) return void res.destroy();
      const error = codec.errorBody({ status: read.status, kind: 'invalid_request', code: read.code, message: read.message });
      return send(res, read.status, id, 'application/json', error, closesConnection(read));
    }
    body = read.value;
  }
  let catalog: ModelCatalog | undefined;
  const answer = endpoint.answer({ catalog: () => (catalog ??= modelCatalog(app.config, app.gate, app.startedAt)), body, target });
  if (answer.text !== undefined) return send(res, answer.status, id, 'text/plain; charset=utf-8', answer.text, false);
  send(res, answer.status, id, 'application/json; charset=utf-8', JSON.stringify(answer.json ?? null), false);
}

function send(res: ServerResponse, status: number, id: string, type: string, body: string, close: boolean): void {
  const headers: Record<string, string | number> = { 'x-request-id': id, 'content-type': type, 'content-length': Buffer.byteLength(body) };
  if (close) headers.connection = 'close';
  res.writeHead(status, headers);
  res.end(body);
}
