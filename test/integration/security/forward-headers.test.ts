import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { completion } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';

const h = useHarness();

/** Sends a chat request with exactly these headers (node:http, so Connection can name headers). */
function send(port: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'x' }] });
    const req = request(
      { host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('forward_headers', () => {
  it('passes on the client headers a provider names (globs, any case), never credentials or per-hop headers', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('ok')));
    const other = await h.fake();
    other.always((ctx) => ctx.json(200, completion('ok')));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: upstream.url, api_key: 'sk-provider', provider: { forward_headers: ['X-Custom-*', 'x-trace-id', 'x-*'] } },
        { name: 'b', url: other.url },
      ],
    });
    const port = Number(new URL(proxy.origin).port);
    expect(
      await send(port, {
        'x-custom-tenant': 'acme',
        'X-Trace-Id': 't-1',
        'x-api-key': 'client-secret',
        authorization: 'Bearer client-token',
        'x-hop': 'per-hop',
        connection: 'keep-alive, x-hop',
        cookie: 'c=1',
      }),
    ).toBe(200);
    const seen = upstream.requests[0].headers;
    expect(seen['x-custom-tenant']).toBe('acme');
    expect(seen['x-trace-id']).toBe('t-1');
    expect(seen.authorization).toBe('Bearer sk-provider');
    expect(seen['x-api-key']).toBeUndefined();
    expect(seen['x-hop']).toBeUndefined();
    expect(seen.cookie).toBeUndefined();
    expect(JSON.stringify(seen)).not.toContain('client-secret');
    expect(JSON.stringify(seen)).not.toContain('client-token');
  });

  it('forwards nothing from the client by default', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('ok')));
    const proxy = await h.proxy({ tiers: [{ name: 'a', url: upstream.url }] });
    expect(await send(Number(new URL(proxy.origin).port), { 'x-custom-tenant': 'acme', 'x-trace-id': 't-1' })).toBe(200);
    expect(upstream.requests[0].headers['x-custom-tenant']).toBeUndefined();
    expect(upstream.requests[0].headers['x-trace-id']).toBeUndefined();
  });
});
