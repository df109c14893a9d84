import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestText } from '../protocols/neutral.js';
import { clientCodec } from '../protocols/registry.js';
import { isUnsupported } from '../protocols/types.js';
import { tokenCounter } from '../tokens/count.js';
import { Exchange } from './exchange.js';
import { admit } from './model-request.js';
import type { ProxyContext } from './proxy-context.js';
import { routeRequest } from './route-request.js';

/**
 * POST /v1/messages/count_tokens: asked of the route's first tier that speaks Messages
 * (failing over like any request); when none does, or none answers, llm-route counts the
 * prompt itself with a real tokenizer and says so (`x-llm-route-estimated: true`).
 */
export async function serveCountTokens(req: IncomingMessage, res: ServerResponse, ctx: ProxyContext, id: string): Promise<void> {
  const exchange = new Exchange(ctx, res, clientCodec('messages'), id);
  try {
    const admitted = await admit(req, exchange);
    if (!admitted) return;
    const request = { ...admitted.request, stream: false, operation: 'count_tokens' as const };
    exchange.begin(admitted.route, request, { announce: false });
    const outcome = await routeRequest(
      { id, route: admitted.route, request, codec: exchange.codec, arrivedAt: exchange.arrivedAt, client: exchange.client, commit: () => { throw new Error('a token count does not stream'); } },
      { pools: exchange.pools, gate: ctx.gate, telemetry: ctx.telemetry, random: ctx.random },
    );
    switch (outcome.kind) {
      case 'unary':
        return exchange.respond(outcome.answer.answer, outcome.tier, outcome.attempts.length);
      case 'rejected':
        return exchange.respond(outcome.answer, outcome.tier, outcome.attempts.length);
      case 'aborted':
        return exchange.endAborted(outcome.attempts);
      case 'stream':
      case 'unsupported':
      case 'exhausted': {
        const neutral = request.neutral();
        const counter = await tokenCounter();
        const inputTokens = counter.count(isUnsupported(neutral) ? JSON.stringify(request.body.messages) : requestText(neutral));
        return exchange.respondJson(200, { input_tokens: inputTokens }, { 'x-llm-route-estimated': 'true' });
      }
    }
  } finally {
    exchange.close();
  }
}
