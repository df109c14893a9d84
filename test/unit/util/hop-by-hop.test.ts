import { describe, expect, it } from 'vitest';
import { connectionTokens, isHopByHop, withoutHopByHop } from '../../../src/util/hop-by-hop.js';

describe('hop-by-hop headers', () => {
  it('knows the fixed list in any case, and nothing else', () => {
    for (const name of [
      'connection',
      'Keep-Alive',
      'PROXY-AUTHENTICATE',
      'proxy-authorization',
      'te',
      'trailer',
      'trailers',
      'Transfer-Encoding',
      'upgrade',
      'proxy-connection',
    ]) {
      expect(isHopByHop(name), name).toBe(true);
    }
    for (const name of ['content-type', 'content-length', 'authorization', 'host', 'x-request-id', 'retry-after', 'cache-control', 'tee']) {
      expect(isHopByHop(name), name).toBe(false);
    }
  });

  it('reads the names a Connection header lists, from a string or a repeated header', () => {
    expect([...connectionTokens('close, X-Secret ,,keep-alive')]).toEqual(['close', 'x-secret', 'keep-alive']);
    expect([...connectionTokens(['x-a', 'X-B, x-c'])]).toEqual(['x-a', 'x-b', 'x-c']);
    expect([...connectionTokens(undefined)]).toEqual([]);
  });

  it('drops the hop-by-hop headers and those Connection names, keeping the rest and their case', () => {
    const headers = {
      Connection: 'keep-alive, X-Internal-Hop',
      'Keep-Alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      TE: 'trailers',
      Trailer: 'x-checksum',
      Upgrade: 'h2c',
      'proxy-authorization': 'Basic c2VjcmV0',
      'Proxy-Authenticate': 'Basic',
      'x-internal-hop': 'dropped because Connection names it',
      'content-type': 'text/event-stream',
      'Retry-After': '3',
      'set-cookie': ['a=1', 'b=2'],
      'content-length': 12,
      'x-unset': undefined,
    };
    expect(withoutHopByHop(headers)).toEqual({
      'content-type': 'text/event-stream',
      'Retry-After': '3',
      'set-cookie': ['a=1', 'b=2'],
      'content-length': 12,
    });
  });

  it('honours Connection given as a repeated header (undici answers with a list)', () => {
    expect(withoutHopByHop({ connection: ['x-a', 'x-b'], 'x-a': '1', 'x-b': '2', 'x-c': '3' })).toEqual({ 'x-c': '3' });
  });

  it('leaves a map without hop-by-hop headers as it was, and does not change its input', () => {
    const headers = { authorization: 'Bearer k', 'content-type': 'application/json' };
    const copy = { ...headers, connection: 'close' };
    expect(withoutHopByHop(headers)).toEqual(headers);
    withoutHopByHop(copy);
    expect(copy.connection).toBe('close');
  });
});
