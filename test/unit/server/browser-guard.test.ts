import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import type { ServerConfig } from '../../../src/config/schema.js';
import { browserRefusal } from '../../../src/server/browser-guard.js';
import { answerCors } from '../../../src/server/cors.js';

function serverConfig(serverYaml = ''): ServerConfig {
  const text = `version: 1\n${serverYaml}providers:\n  p: { type: openai, base_url: "http://127.0.0.1:1/v1" }\nroutes:\n  chat:\n    tiers: [{ provider: p, model: m }]\n`;
  return loadConfigText(text, '/t/llm-route.yaml', {}).server;
}

/** A request as node:http makes it, with the headers (lower-case) and method given. */
function request(headers: Record<string, string>, method = 'POST'): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.method = method;
  req.headers = headers;
  return req;
}

const plain = serverConfig();

describe('browserRefusal', () => {
  it('lets a client that is no browser through: loopback Host, no Origin', () => {
    for (const host of ['127.0.0.1:4141', 'localhost:4141', '[::1]:4141', 'localhost', '127.0.0.2:80']) {
      expect(browserRefusal(request({ host }), plain), host).toBeNull();
    }
    expect(browserRefusal(request({}), plain)).toBeNull(); // HTTP/1.0 sends no Host
  });

  it('refuses another Host (DNS rebinding) unless it is allowed, or a token guards the server', () => {
    const refused = browserRefusal(request({ host: 'evil.example:4141' }), plain);
    expect(refused).toMatchObject({ status: 403, kind: 'forbidden', code: 'host_not_allowed' });
    expect(refused?.message).toContain('Host "evil.example:4141" is not this machine');
    expect(browserRefusal(request({ host: 'proxy.lan:443' }), serverConfig('server:\n  allowed_hosts: [proxy.lan]\n'))).toBeNull();
    expect(browserRefusal(request({ host: 'proxy.lan:443' }), serverConfig('server:\n  auth_token: t0ken-for-tests\n'))).toBeNull();
  });

  it('refuses a page: any Origin not listed, or a cross-site navigation', () => {
    const fromPage = browserRefusal(request({ host: '127.0.0.1:4141', origin: 'https://evil.example' }), plain);
    expect(fromPage).toMatchObject({ status: 403, code: 'origin_not_allowed' });
    expect(fromPage?.message).toContain('Origin "https://evil.example"');
    expect(browserRefusal(request({ host: '127.0.0.1:4141', 'sec-fetch-site': 'cross-site' }), plain)).toMatchObject({ code: 'origin_not_allowed' });
    expect(browserRefusal(request({ host: '127.0.0.1:4141', 'sec-fetch-site': 'same-origin' }), plain)).toBeNull();
    const listed = serverConfig('server:\n  cors_origins: ["https://app.example"]\n');
    expect(browserRefusal(request({ host: '127.0.0.1:4141', origin: 'https://app.example' }), listed)).toBeNull();
    expect(browserRefusal(request({ host: '127.0.0.1:4141', origin: 'https://app.example.evil' }), listed)).not.toBeNull();
  });
});

describe('answerCors', () => {
  const listed = serverConfig('server:\n  cors_origins: ["https://app.example"]\n');
  const corsOf = (req: IncomingMessage, server: ServerConfig) => {
    const res = new ServerResponse(req);
    const answered = answerCors(req, res, server);
    return { answered, res, headers: res.getHeaders() };
  };

  it('adds nothing when no origin is listed', () => {
    const { answered, headers } = corsOf(request({ origin: 'https://app.example' }), plain);
    expect(answered).toBe(false);
    expect(headers).toEqual({});
  });

  it("answers a listed origin's preflight with 204, echoing a header list it asked for and nothing else", () => {
    const asked = corsOf(request({ origin: 'https://app.example', 'access-control-request-headers': 'content-type, x-stainless-os' }, 'OPTIONS'), listed);
    expect(asked.answered).toBe(true);
    expect(asked.res.statusCode).toBe(204);
    expect(asked.headers).toMatchObject({
      vary: 'origin',
      'access-control-allow-origin': 'https://app.example',
      'access-control-allow-headers': 'content-type, x-stainless-os',
      'access-control-max-age': '600',
    });
    const odd = corsOf(request({ origin: 'https://app.example', 'access-control-request-headers': 'x\r\nset-cookie: a' }, 'OPTIONS'), listed);
    expect(odd.headers['access-control-allow-headers']).toContain('authorization, content-type, x-api-key');
  });

  it('marks a listed origin’s request readable and lets the request go on; another origin only varies', () => {
    const allowed = corsOf(request({ origin: 'https://app.example' }), listed);
    expect(allowed.answered).toBe(false);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(allowed.headers['access-control-expose-headers']).toContain('x-llm-route-tier');
    const other = corsOf(request({ origin: 'https://other.example' }, 'OPTIONS'), listed);
    expect(other.answered).toBe(false);
    expect(other.headers).toEqual({ vary: 'origin' });
  });
});
