import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientCodec, RequestTarget, TokenCounting } from '../protocols/core/client-codec.js';
import { tokenCounter } from '../tokens/count.js';
import { Exchange, type ProxyView } from './exchange.js';
import { readRequest } from './model-request.js';
import { routeRequest } from './route-request.js';

/**
 * A token count: asked of the route's first tier whose server counts tokens in the client's
 * protocol (failing over like any request); when none does, or none answers, llm-route counts
 * the prompt itself with a real tokenizer and says so (`x-llm-route-estimated: true`).
 */
export async function serveTokenCount(
  req: IncomingMessage,
  res: ServerResponse,
  app: ProxyView,
  codec: ClientCodec,
  counting: TokenCounting,
  id: string,
  target: RequestTarget,
): Promise<void> {
  const exchange = new Exchange(app, res, codec, id);
  try {
    const incoming = await readRequest(req, exchange, target, { counting: true });
    if (!incoming) return;
    const request = counting.asCount(incoming.request);
    // A count never streams: the exchange's commit port is never called.
    const outcome = await routeRequest(exchange.begin(incoming.route, request, { announce: false }), app);
    switch (outcome.kind) {
      case 'unary':
        return exchange.respond(outcome.answer.answer, outcome.tier, outcome.attempts.length);
      case 'rejected':
        return exchange.respond(outcome.answer, outcome.tier, outcome.attempts.length);
      case 'aborted':
        return exchange.endAborted(outcome.attempts, outcome.tier?.name);
      case 'stream':
      case 'unsupported':
      case 'client_credential':
      case 'too_long':
      case 'exhausted': {
        const counter = await tokenCounter();
        return exchange.respondJson(
          200,
          counting.estimate(request, (text) => counter.count(text)),
          { 'x-llm-route-estimated': 'true' },
        );
      }
    }
  } finally {
    exchange.close();
  }
}
