import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { loadConfigText } from '../../../src/config/load.js';
import { admin, adminTiers, answer, controlYaml } from '../../helpers/control-kit.js';
import type { FakeUpstream } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';
import { rawRequest, type RawReply } from '../../helpers/raw-client.js';

/**
 * A web page cannot use llm-route (docs/security.md, "Browsers and web pages"), at the HTTP level: forged Host (DNS
 * rebinding), Origin and Sec-Fetch-Site (a page's fetch), JSON-only admin bodies, and CORS for
 * server.cors_origins. Every refusal is a 403 in the endpoint's protocol that reaches no
 * upstream. test/integration/security/browser-chromium.test.ts does the same with a real browser.
 */

const h = useHarness();
const LISTED = 'http://localhost:5173';
const CHAT = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
const MESSAGES = JSON.stringify({ model: 'chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
const RESPONSES = JSON.stringify({ model: 'chat', input: 'hi' });

async function setup(server: Record<string, unknown> = {}): Promise<{ fake: FakeUpstream; p: RunningProxy; port: number }> {
  const fake = await h.fake();
  fake.always(answer('hello'));
  const p = await h.proxy(controlYaml({ tiers: [{ name: 'local', url: fake.url }], server }));
  return { fake, p, port: Number(new URL(p.origin).port) };
}

/** One request with exactly these headers (Host included: fetch would set its own). */
function send(port: number, method: string, path: string, headers: Record<string, string>, body = ''): Promise<RawReply> {
  const lines = Object.entries({ ...headers, 'content-length': String(Buffer.byteLength(body)) }).map(([k, v]) => `${k}: ${v}`);
  return rawRequest(port, { head: [`${method} ${path} HTTP/1.1`, ...lines, 'connection: close'].join('\r\n'), body: body ? [body] : [] });
}

function headerOf(reply: RawReply, name: string): string | undefined {
  const head = reply.text.slice(0, reply.text.indexOf('\r\n\r\n'));
  return new RegExp(`\\r\\n${name}: ([^\\r]*)`, 'i').exec(head)?.[1];
}

const json = { 'content-type': 'application/json' };

describe('the Host check (DNS rebinding)', () => {
  it('refuses a foreign Host on every endpoint, in its protocol, and sends nothing upstream', async () => {
    const { fake, port } = await setup();
    const evil = { host: `evil.example:${port}`, ...json };
    const chat = await send(port, 'POST', '/v1/chat/completions', evil, CHAT);
    expect(chat.status).toBe(403);
    expect(chat.json).toMatchObject({ error: { type: 'invalid_request_error', code: 'host_not_allowed' } });
    expect((chat.json as { error: { message: string } }).error.message).toContain('evil.example');
    const responses = await send(port, 'POST', '/v1/responses', evil, RESPONSES);
    expect(responses.status).toBe(403);
    expect(responses.json).toMatchObject({ error: { code: 'host_not_allowed' } });
    const messages = await send(port, 'POST', '/v1/messages', { ...evil, 'anthropic-version': '2023-06-01' }, MESSAGES);
    expect(messages.status).toBe(403);
    expect(messages.json).toMatchObject({ type: 'error', error: { type: 'permission_error', code: 'host_not_allowed' } });
    for (const path of ['/admin/routes', '/healthz', '/metrics', '/v1/models']) {
      const reply = await send(port, 'GET', path, { host: `evil.example:${port}` });
      expect(reply.status, path).toBe(403);
      expect(reply.text, path).not.toContain('local-model');
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('accepts loopback names with any port or none, in any case', async () => {
    const { fake, port } = await setup();
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LocalHost', `127.1.2.3:${port}`, `[::1]:${port}`, '[::1]', 'localhost:1']) {
      const reply = await send(port, 'POST', '/v1/chat/completions', { host, ...json }, CHAT);
      expect(reply.status, host).toBe(200);
    }
    expect(fake.requests).toHaveLength(7);
    // Names that merely look like loopback are not.
    for (const host of [`localhost.evil.example:${port}`, `127.0.0.1.evil.example`, `[::2]:${port}`, `0.0.0.0:${port}`]) {
      expect((await send(port, 'GET', '/v1/models', { host })).status, host).toBe(403);
    }
  });

  it('accepts the names in server.allowed_hosts (a reverse proxy), with any port', async () => {
    const { fake, port } = await setup({ allowed_hosts: ['LLM.example.com'] });
    expect((await send(port, 'POST', '/v1/chat/completions', { host: 'llm.example.com', ...json }, CHAT)).status).toBe(200);
    expect((await send(port, 'POST', '/v1/chat/completions', { host: 'llm.example.com:8443', ...json }, CHAT)).status).toBe(200);
    expect((await send(port, 'POST', '/v1/chat/completions', { host: 'evil.llm.example.com', ...json }, CHAT)).status).toBe(403);
    expect(fake.requests).toHaveLength(2);
  });

  it('is relaxed when auth_token is set: the token is the gate, whatever the Host', async () => {
    const { fake, port } = await setup({ auth_token: 'tok-secret-1' });
    const host = { host: `evil.example:${port}`, ...json };
    expect((await send(port, 'POST', '/v1/chat/completions', host, CHAT)).status).toBe(401);
    expect((await send(port, 'POST', '/v1/chat/completions', { ...host, authorization: 'Bearer tok-secret-1' }, CHAT)).status).toBe(200);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('the Origin and Sec-Fetch-Site check', () => {
  it("refuses a page's request, text/plain or JSON, before anything else, and sends nothing upstream", async () => {
    const { fake, port } = await setup({ auth_token: 'tok-secret-1' });
    const page = { host: `127.0.0.1:${port}`, origin: 'http://127.0.0.2:8000', authorization: 'Bearer tok-secret-1' };
    const plain = await send(port, 'POST', '/v1/chat/completions', { ...page, 'content-type': 'text/plain' }, CHAT);
    expect(plain.status).toBe(403);
    expect(plain.json).toMatchObject({ error: { code: 'origin_not_allowed' } });
    expect((plain.json as { error: { message: string } }).error.message).toContain('server.cors_origins');
    const asJson = await send(port, 'POST', '/v1/messages', { ...page, ...json }, MESSAGES);
    expect(asJson.status).toBe(403);
    expect(asJson.json).toMatchObject({ type: 'error', error: { type: 'permission_error', code: 'origin_not_allowed' } });
    // A sandboxed frame or a file: page sends "null".
    expect((await send(port, 'POST', '/v1/chat/completions', { ...page, origin: 'null', ...json }, CHAT)).status).toBe(403);
    // A navigation or <img> from another site carries no Origin, only Sec-Fetch-Site.
    const navigation = await send(port, 'GET', '/v1/models', { host: page.host, authorization: page.authorization, 'sec-fetch-site': 'cross-site' });
    expect(navigation.status).toBe(403);
    // What the user types in the address bar, or a same-origin request, is not a page's attack.
    for (const site of ['none', 'same-origin', 'same-site']) {
      expect((await send(port, 'GET', '/v1/models', { host: page.host, authorization: page.authorization, 'sec-fetch-site': site })).status, site).toBe(200);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('answers a refused preflight 403 and a preflight without Origin 405, as before', async () => {
    const { port } = await setup();
    const preflight = { host: `127.0.0.1:${port}`, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' };
    const refused = await send(port, 'OPTIONS', '/v1/chat/completions', { ...preflight, origin: 'https://evil.example' });
    expect(refused.status).toBe(403);
    expect(headerOf(refused, 'access-control-allow-origin')).toBeUndefined();
    expect((await send(port, 'OPTIONS', '/v1/chat/completions', { host: `127.0.0.1:${port}` })).status).toBe(405);
  });

  it('an Anthropic SDK client carrying a foreign Origin gets a PermissionDeniedError', async () => {
    const { fake, p } = await setup();
    const client = new Anthropic({ baseURL: p.origin, apiKey: 'x', maxRetries: 0, defaultHeaders: { origin: 'https://evil.example' } });
    const err = await client.messages.create({ model: 'chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((err as InstanceType<typeof Anthropic.PermissionDeniedError>).message).toContain('server.cors_origins');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('CORS for server.cors_origins', () => {
  it("answers a listed origin's preflight 204 with what the SDKs send, and its request works", async () => {
    const { fake, p, port } = await setup({ cors_origins: [`${LISTED}/`] });
    const asked = 'authorization, content-type, x-stainless-os, x-stainless-retry-count';
    const preflight = await send(port, 'OPTIONS', '/v1/chat/completions', {
      host: `127.0.0.1:${port}`,
      origin: LISTED,
      'access-control-request-method': 'POST',
      'access-control-request-headers': asked,
    });
    expect(preflight.status).toBe(204);
    expect(headerOf(preflight, 'access-control-allow-origin')).toBe(LISTED);
    expect(headerOf(preflight, 'access-control-allow-methods')).toContain('POST');
    expect(headerOf(preflight, 'access-control-allow-headers')).toBe(asked);
    expect(headerOf(preflight, 'vary')).toBe('origin');
    // A preflight naming no headers gets the SDKs' usual ones; a malformed list is not echoed.
    const odd = await send(port, 'OPTIONS', '/v1/messages', { host: `127.0.0.1:${port}`, origin: LISTED, 'access-control-request-headers': 'x-a;evil' });
    expect(headerOf(odd, 'access-control-allow-headers')).toMatch(/anthropic-version.*x-api-key|x-api-key.*anthropic-version/);

    // The real OpenAI SDK, sending the Origin a browser would.
    const client = new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0, defaultHeaders: { origin: LISTED } });
    const { data, response } = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0].message.content).toBe('hello');
    expect(response.headers.get('access-control-allow-origin')).toBe(LISTED);
    expect(response.headers.get('access-control-expose-headers')).toContain('x-llm-route-tier');
    expect(response.headers.get('vary')).toBe('origin');
    expect(fake.requests).toHaveLength(1);
    // An answer without Origin still says it varies by Origin; another origin is still refused.
    expect((await fetch(`${p.origin}/healthz`)).headers.get('vary')).toBe('origin');
    expect((await send(port, 'GET', '/v1/models', { host: `127.0.0.1:${port}`, origin: 'http://localhost:5174' })).status).toBe(403);
  });

  it("a listed origin's requests pass even when the browser calls them cross-site (localhost page, 127.0.0.1 proxy)", async () => {
    const { port } = await setup({ cors_origins: [LISTED] });
    const reply = await send(
      port,
      'POST',
      '/v1/chat/completions',
      { host: `127.0.0.1:${port}`, origin: LISTED, 'sec-fetch-site': 'cross-site', ...json },
      CHAT,
    );
    expect(reply.status).toBe(200);
    expect(headerOf(reply, 'access-control-allow-origin')).toBe(LISTED);
  });

  it('sends no CORS or Vary headers when no origin is listed', async () => {
    const { p } = await setup();
    const res = await fetch(`${p.origin}/healthz`);
    expect(res.headers.get('vary')).toBeNull();
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('/admin/* takes application/json bodies only', () => {
  const TIER = '/admin/routes/chat/tiers/local';
  const webhook = JSON.stringify({
    version: '4',
    status: 'firing',
    alerts: [{ status: 'firing', labels: { alertname: 'LocalSlow', route: 'chat', tier: 'local' }, fingerprint: 'f1' }],
  });

  it('answers 415 to text/plain, a form, or an untyped body, and the weight is unchanged', async () => {
    const { p } = await setup();
    const plain = await admin(p, 'POST', '/admin/alerts', webhook, { 'content-type': 'text/plain' });
    expect(plain.status).toBe(415);
    expect(plain.json).toMatchObject({ error: { code: 'unsupported_media_type' } });
    expect((await admin(p, 'PUT', TIER, '{"weight":0}', { 'content-type': 'text/plain;charset=UTF-8' })).status).toBe(415);
    // curl -d sends a form type.
    expect((await admin(p, 'PUT', TIER, '{"weight":0}', { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(415);
    const untyped = await send(Number(new URL(p.origin).port), 'PUT', TIER, { host: '127.0.0.1' }, '{"weight":0}');
    expect(untyped.status).toBe(415);
    expect((await adminTiers(p)).local).toMatchObject({ weight: 100, override: null });
  });

  it('applies JSON bodies (charset allowed) and bodiless requests as before', async () => {
    const { p } = await setup();
    expect((await admin(p, 'PUT', TIER, '{"weight":0}', { 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
    expect((await adminTiers(p)).local.weight).toBe(0);
    expect((await admin(p, 'DELETE', TIER)).status).toBe(200);
    expect((await adminTiers(p)).local.weight).toBe(100);
    expect((await admin(p, 'POST', '/admin/alerts', JSON.parse(webhook))).status).toBe(200);
    expect((await adminTiers(p)).local.weight).toBe(0);
  });
});

describe('the tier file', () => {
  const file = (server: string): string =>
    `version: 1\nserver: ${server}\nproviders: { p: { type: openai, base_url: "http://127.0.0.1:1/v1" } }\nroutes: { chat: { tiers: [{ provider: p, model: m }] } }\n`;
  const problem = (server: string): string => {
    try {
      loadConfigText(file(server), '/t/llm-route.yaml', {});
    } catch (err) {
      if (err instanceof ConfigError) return err.format();
      throw err;
    }
    throw new Error('loaded');
  };

  it('keeps origins as browsers send them and says what is wrong with others', () => {
    const config = loadConfigText(
      file('{ cors_origins: ["HTTP://LocalHost:5173/", "https://app.example:443", "app://obsidian.md"], allowed_hosts: [LLM.Example.com] }'),
      '/t/llm-route.yaml',
      {},
    );
    expect(config.server.cors_origins).toEqual(['http://localhost:5173', 'https://app.example', 'app://obsidian.md']);
    expect(config.server.allowed_hosts).toEqual(['llm.example.com']);
    expect(problem('{ cors_origins: ["*"] }')).toContain('expected a web origin, scheme://host[:port] without a path, like http://localhost:3000, got "*"');
    expect(problem('{ cors_origins: ["http://localhost:5173/app"] }')).toContain('expected a web origin');
    expect(problem('{ cors_origins: ["localhost:5173"] }')).toContain('expected a web origin');
    expect(problem('{ allowed_hosts: ["llm.example.com:443"] }')).toContain('a host name without port');
    expect(problem('{ cors_origin: [] }')).toContain('did you mean "cors_origins"');
  });
});
