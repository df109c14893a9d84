import type { Exchange } from './exchange.js';

type Refusing = Pick<Exchange, 'config' | 'fail'>;

/** The answer to a stream over server.max_streams: 503, try again in a second, in the client's protocol. */
export function refuseStream(exchange: Refusing): void {
  const max = exchange.config.server.max_streams;
  const message = `llm-route has ${max} streams open (server.max_streams); try again shortly`;
  exchange.fail({ status: 503, kind: 'overloaded', code: 'too_many_streams', message }, { outcome: 'overloaded' }, { 'retry-after': 1 });
}
