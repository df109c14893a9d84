import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { anthropicError, anthropicMessage, anthropicTextStream } from '../../helpers/anthropic-upstream.js';
import { completion, type FakeUpstream, healthyStream } from '../../helpers/fake-upstream.js';
import { requestLog, useHarness, waitFor } from '../../helpers/harness.js';
import type { RunningProxy, TierSpec } from '../../helpers/proxy.js';
import { checkTier } from '../../../src/health/check-tier.js';

// `api_key: from_client` (docs/client-credentials.md): the client's own key or
// login goes to that provider only, as received; never to another tier; none is a 401 in the
// client's protocol; its 401/403 costs no health; checks never send it.

const h = useHarness();

const OAUTH = 'sk-ant-oat01-TESTLOGIN-7f3c9e1d2b';
const OAUTH_BETA = 'claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14';
const OPENAI_KEY = 'sk-proj-TESTOWNKEY-4a8b2c6d';

/** A local tier that always fails (500), and a from_client tier of `type` after it. */
async function localThenOwn(type: 'anthropic' | 'openai', extra: Partial<TierSpec> = {}, server: Record<string, unknown> = {}) {
  const local = await h.fake();
  local.always((ctx) => ctx.error(500, 'local model crashed'));
  const cloud = await h.fake();
  const tiers: TierSpec[] = [
    { name: 'local', url: local.url, retry: { attempts: 1 } },
    { name: 'plan', url: type === 'anthropic' ? `http://127.0.0.1:${cloud.port}` : cloud.url, type, api_key: 'from_client', retry: { attempts: 1 }, ...extra },
  ];
  const proxy = await h.proxy({ tiers, server });
  return { local, cloud, proxy };
}

function claudeCode(proxy: RunningProxy, headers: Record<string, string | null> = {}): Anthropic {
  return new Anthropic({ baseURL: proxy.origin, apiKey: null, authToken: OAUTH, maxRetries: 0, defaultHeaders: { 'anthropic-beta': OAUTH_BETA, ...headers } });
}

function noCredentialIn(fake: FakeUpstream): void {
  for (const seen of fake.requests) {
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers['x-api-key']).toBeUndefined();
    expect(JSON.stringify(seen.headers)).not.toMatch(/TESTLOGIN|TESTOWNKEY/);
  }
}

describe('api_key: from_client', () => {
  it("sends Claude Code's login and its oauth beta to the from_client tier as received, and nothing to the local tier", async () => {
    const { local, cloud, proxy } = await localThenOwn('anthropic');
    cloud.always(anthropicTextStream(['from ', 'your plan']));
    const stream = claudeCode(proxy).messages.stream({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(await stream.finalText()).toBe('from your plan');

    expect(local.requests).toHaveLength(1);
    noCredentialIn(local);
    expect(cloud.requests).toHaveLength(1);
    const seen = cloud.requests[0].headers;
    expect(seen.authorization).toBe(`Bearer ${OAUTH}`);
    expect(seen['anthropic-beta']).toBe(OAUTH_BETA);
    expect(seen['x-api-key']).toBeUndefined();

    const line = await requestLog(proxy);
    expect(line).toMatchObject({ tier: 'plan', outcome: 'ok', credential: 'client' });
    expect(JSON.stringify(proxy.logs)).not.toContain('TESTLOGIN');
  });

  it("sends the Anthropic SDK's apiKey, or an x-api-key, as received: whole answers and token counts alike", async () => {
    const { local, cloud, proxy } = await localThenOwn('anthropic');
    cloud.always((ctx) =>
      ctx.req.url?.includes('count_tokens') ? ctx.json(200, { input_tokens: 42 }) : ctx.json(200, anthropicMessage([{ type: 'text', text: 'whole' }])),
    );
    const key = 'sk-ant-api03-TESTOWNKEY-9c1d';
    // This SDK sends its apiKey as a Bearer token; Claude Code with ANTHROPIC_API_KEY sends x-api-key.
    const sdk = new Anthropic({ baseURL: proxy.origin, apiKey: key, maxRetries: 0 });
    const xApiKey = new Anthropic({ baseURL: proxy.origin, apiKey: null, maxRetries: 0, defaultHeaders: { authorization: null, 'x-api-key': key } });
    for (const client of [sdk, xApiKey]) {
      const message = await client.messages.create({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
      expect(message.content).toEqual([{ type: 'text', text: 'whole' }]);
      const count = await client.messages.countTokens({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
      expect(count.input_tokens).toBe(42);
    }
    expect(cloud.requests.map((r) => [r.url, r.headers['x-api-key'], r.headers.authorization])).toEqual([
      ['/v1/messages', undefined, `Bearer ${key}`],
      ['/v1/messages/count_tokens', undefined, `Bearer ${key}`],
      ['/v1/messages', key, undefined],
      ['/v1/messages/count_tokens', key, undefined],
    ]);
    noCredentialIn(local);
  });

  it("sends an OpenAI client's key with its organization and project, for Chat and (translated) Responses alike", async () => {
    const { local, cloud, proxy } = await localThenOwn('openai');
    cloud.next(healthyStream(['chat ', 'ok']), (ctx) => ctx.json(200, completion('responses ok')));
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: OPENAI_KEY, organization: 'org-test', project: 'proj_test', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta?.content ?? '';
    expect(text).toBe('chat ok');
    const response = await client.responses.create({ model: 'chat', input: 'hi' });
    expect(response.output_text).toBe('responses ok');

    for (const seen of cloud.requests) {
      expect(seen.url).toBe('/v1/chat/completions');
      expect(seen.headers).toMatchObject({ authorization: `Bearer ${OPENAI_KEY}`, 'openai-organization': 'org-test', 'openai-project': 'proj_test' });
    }
    expect(cloud.requests).toHaveLength(2);
    expect(local.requests).toHaveLength(2);
    noCredentialIn(local);
    for (const seen of local.requests) expect(seen.headers['openai-organization']).toBeUndefined();
  });

  it("never sends one API's credential to a from_client provider of the other: Claude Code's login does not reach OpenAI", async () => {
    const local = await h.fake();
    local.always((ctx) => ctx.error(500, 'local model crashed'));
    const openai = await h.fake();
    const anthropic = await h.fake();
    anthropic.always(anthropicTextStream(['anthropic']));
    const proxy = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, retry: { attempts: 1 } },
        { name: 'openai', url: openai.url, api_key: 'from_client' },
        { name: 'anthropic', url: `http://127.0.0.1:${anthropic.port}`, type: 'anthropic', api_key: 'from_client' },
      ],
    });
    const stream = claudeCode(proxy).messages.stream({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(await stream.finalText()).toBe('anthropic');
    expect(openai.requests).toHaveLength(0);
    expect(anthropic.requests[0].headers.authorization).toBe(`Bearer ${OAUTH}`);
    const line = await requestLog(proxy);
    expect((line.attempts as Array<Record<string, unknown>>).map((a) => [a.tier, a.outcome])).toEqual([
      ['local', 'server_error'],
      ['openai', 'no_client_credential'],
      ['anthropic', 'ok'],
    ]);
    expect(JSON.stringify(line)).toContain("the client's credential is for Anthropic's API; this api_key: from_client provider is type openai");
  });

  it('without a credential skips the tier (no health cost) and answers 401 in the Anthropic SDK, saying to log in', async () => {
    const { local, cloud, proxy } = await localThenOwn('anthropic');
    const client = new Anthropic({ baseURL: proxy.origin, apiKey: null, authToken: null, maxRetries: 0, defaultHeaders: { authorization: null } });
    const error = await client.messages.create({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    const { status, error: body } = error as InstanceType<typeof Anthropic.AuthenticationError>;
    expect(status).toBe(401);
    expect(body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const message = (body as { error: { message: string } }).error.message;
    expect(message).toContain('route "chat" needs your own key or login');
    expect(message).toContain('plan: the request carries no credential of the client');
    expect(message).toContain('log in to Claude Code (/login), or set ANTHROPIC_API_KEY');
    expect(cloud.requests).toHaveLength(0);
    expect(local.requests).toHaveLength(1);
    const line = await requestLog(proxy);
    expect(line).toMatchObject({ status: 401, outcome: 'failed' });
    expect(line.credential).toBeUndefined();
    const plan = await tierHealth(proxy, 'plan');
    expect(plan).toMatchObject({ state: 'healthy', attempts: 0, failures: 0 });
  });

  it('without a credential answers 401 in the OpenAI SDK naming OPENAI_API_KEY; an empty bearer is none, and no error when a tier answers', async () => {
    const { cloud, proxy } = await localThenOwn('openai');
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'unused', maxRetries: 0, defaultHeaders: { Authorization: null } });
    const error = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((error as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('missing_client_credential');
    expect((error as Error).message).toContain('set OPENAI_API_KEY');
    expect(cloud.requests).toHaveLength(0);

    // VS Code's Copilot sends `Authorization: Bearer ` with nothing after it: no credential, no error of its own.
    const ok = await h.fake();
    ok.always((ctx) => ctx.json(200, completion('local answer')));
    const own = await h.fake();
    const withLocal = await h.proxy({
      tiers: [
        { name: 'local', url: ok.url },
        { name: 'plan', url: own.url, api_key: 'from_client' },
      ],
    });
    const res = await fetch(`${withLocal.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe('local answer');
    const blank = await fetch(`${proxy.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(blank.status).toBe(401);
    expect(cloud.requests).toHaveLength(0);
  });

  it("takes a 401 or 403 from the provider as the credential's fault: the next tier answers and the tier stays healthy", async () => {
    const local = await h.fake();
    local.always((ctx) => ctx.error(500, 'local model crashed'));
    const plan = await h.fake();
    plan.next(
      (ctx) => anthropicError(ctx, 401, 'authentication_error', `invalid bearer token ${OAUTH}`),
      (ctx) => anthropicError(ctx, 403, 'permission_error', 'OAuth token does not meet scope requirement'),
      (ctx) => anthropicError(ctx, 401, 'authentication_error', 'OAuth token has expired'),
    );
    const keyed = await h.fake();
    keyed.always(anthropicTextStream(['own key']));
    const proxy = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, retry: { attempts: 1 } },
        { name: 'plan', url: `http://127.0.0.1:${plan.port}`, type: 'anthropic', api_key: 'from_client', circuit: { failures: 1 } },
        { name: 'keyed', url: `http://127.0.0.1:${keyed.port}`, type: 'anthropic', api_key: 'sk-ant-provider-own' },
      ],
    });
    for (let i = 0; i < 3; i++) {
      const stream = claudeCode(proxy).messages.stream({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
      expect(await stream.finalText()).toBe('own key');
    }
    // One failure would open its circuit; three left it closed: none counted.
    expect(plan.requests).toHaveLength(3);
    expect(await tierHealth(proxy, 'plan')).toMatchObject({ state: 'healthy', consecutive_failures: 0 });
    expect(keyed.requests.every((r) => r.headers['x-api-key'] === 'sk-ant-provider-own' && r.headers.authorization === undefined)).toBe(true);
    const lines = await waitFor(() => (proxy.logs.filter((l) => l.event === 'request').length === 3 ? proxy.logs : null));
    const attempts = lines.filter((l) => l.event === 'request').flatMap((l) => l.attempts as Array<Record<string, unknown>>);
    expect(attempts.filter((a) => a.tier === 'plan').map((a) => [a.outcome, a.status])).toEqual([
      ['credential_rejected', 401],
      ['credential_rejected', 403],
      ['credential_rejected', 401],
    ]);
    // The first one echoed the token: the record says it without it.
    expect(JSON.stringify(lines)).not.toContain('TESTLOGIN');
    expect(JSON.stringify(lines)).toContain('invalid bearer token [redacted]');
  });

  it('answers 401 when the credential was refused and no tier answered (a client renews its login on it); 403 when each refusal was one', async () => {
    const { local, cloud, proxy } = await localThenOwn('anthropic');
    cloud.next(
      (ctx) => anthropicError(ctx, 401, 'authentication_error', `OAuth token has expired: ${OAUTH}`),
      (ctx) => anthropicError(ctx, 403, 'permission_error', 'OAuth token does not meet scope requirement'),
    );
    const ask = () => claudeCode(proxy).messages.create({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    const expired = await ask().catch((e: unknown) => e);
    expect(expired).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((expired as Error).message).toContain("plan refused the client's credential: HTTP 401: OAuth token has expired: [redacted]");
    expect((expired as Error).message).toContain('log in to Claude Code (/login)');
    const scoped = await ask().catch((e: unknown) => e);
    expect(scoped).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((scoped as Error).message).toContain('OAuth token does not meet scope requirement');
    expect(local.requests).toHaveLength(2);
    expect(JSON.stringify(proxy.logs)).not.toContain('TESTLOGIN');
  });

  it('cuts the credential out of a payload error relayed to the client', async () => {
    const cloud = await h.fake();
    cloud.always((ctx) => anthropicError(ctx, 400, 'invalid_request_error', `messages: bad role (request signed with ${OAUTH})`));
    const proxy = await h.proxy({ tiers: [{ name: 'plan', url: `http://127.0.0.1:${cloud.port}`, type: 'anthropic', api_key: 'from_client' }] });
    const error = await claudeCode(proxy)
      .messages.create({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as Error).message).toContain('request signed with [redacted]');
    expect((error as Error).message).not.toContain('TESTLOGIN');
    const line = await requestLog(proxy);
    expect(line.outcome).toBe('upstream_rejected');
    expect(JSON.stringify(line)).not.toContain('TESTLOGIN');
  });

  it("keeps llm-route's auth_token and the client's credential apart", async () => {
    const token = 'llm-route-token-5e6f7a8b';
    const { local, cloud, proxy } = await localThenOwn('anthropic', {}, { auth_token: token });
    cloud.always(anthropicTextStream(['yours']));

    // llm-route's token in x-llm-route-token: Authorization is the client's own, forwarded; the token never is.
    const both = claudeCode(proxy, { 'x-llm-route-token': token });
    expect(await both.messages.stream({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalText()).toBe('yours');
    expect(cloud.requests[0].headers.authorization).toBe(`Bearer ${OAUTH}`);
    expect(cloud.requests[0].headers['x-llm-route-token']).toBeUndefined();
    for (const seen of [...cloud.requests, ...local.requests]) expect(JSON.stringify(seen.headers)).not.toContain(token);

    // The token as the client's Authorization (today's way): no credential of the client's; the 401 says how to send both.
    const tokenOnly = new Anthropic({ baseURL: proxy.origin, apiKey: null, authToken: token, maxRetries: 0 });
    const error = await tokenOnly.messages.create({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((error as Error).message).toContain('x-llm-route-token');
    expect(cloud.requests).toHaveLength(1);

    // x-llm-route-token, when sent, is the gate: a wrong one is refused whatever Authorization holds.
    const wrong = new Anthropic({ baseURL: proxy.origin, apiKey: null, authToken: token, maxRetries: 0, defaultHeaders: { 'x-llm-route-token': 'wrong' } });
    const refused = await wrong.messages.create({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect((refused as { status?: number }).status).toBe(401);
    expect((refused as Error).message).toContain('missing or wrong token');

    // The token in both headers is still never a credential.
    const twice = new Anthropic({ baseURL: proxy.origin, apiKey: null, authToken: token, maxRetries: 0, defaultHeaders: { 'x-llm-route-token': token } });
    const again = await twice.messages.create({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(cloud.requests).toHaveLength(1);
  });

  it('keeps the token in Authorization working for a route without from_client tiers', async () => {
    const token = 'llm-route-token-5e6f7a8b';
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('ok')));
    const proxy = await h.proxy({ tiers: [{ name: 'cloud', url: upstream.url, api_key: 'sk-provider' }], server: { auth_token: token } });
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: token, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0].message.content).toBe('ok');
    expect(upstream.requests[0].headers.authorization).toBe('Bearer sk-provider');
  });

  it('checks such a provider with no credential at all, and an answer that wants one is reachability, not a failure', async () => {
    const cloud = await h.fake();
    cloud.always((ctx) => anthropicError(ctx, 401, 'authentication_error', 'x-api-key header is required'));
    const proxy = await h.proxy({
      tiers: [
        { name: 'plan', url: `http://127.0.0.1:${cloud.port}`, type: 'anthropic', api_key: 'from_client', health: { interval_ms: 50, ttft_check: true } },
      ],
    });
    proxy.server.startActiveChecks();
    await waitFor(() => cloud.requests.length >= 3, 5000, 'three health checks');
    expect(cloud.requests.every((r) => r.url === '/v1/models')).toBe(true);
    noCredentialIn(cloud);
    expect(await tierHealth(proxy, 'plan')).toMatchObject({ state: 'healthy', failures: 0 });

    // `probe`'s check: reachable, no TTFT request (it would need the credential), and it says why.
    const before = cloud.requests.length;
    const tier = proxy.server.app.config.routes.get('chat')?.tiers[0];
    if (!tier) throw new Error('no tier');
    const check = await checkTier(tier, { timeoutMs: 2000, ttft: true });
    expect(check).toMatchObject({ status: 'healthy', reachable: true, ttftMs: null });
    expect(check.note).toContain("reachability only: the provider takes the client's own credential");
    // (the periodic checks go on meanwhile: every request is a model list, none a Messages request)
    expect(cloud.requests.length).toBeGreaterThan(before);
    expect(cloud.requests.every((r) => r.url === '/v1/models')).toBe(true);
    noCredentialIn(cloud);
  });
});

async function tierHealth(proxy: RunningProxy, tier: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${proxy.origin}/healthz`);
  const body = (await res.json()) as { routes: Record<string, { tiers: Array<Record<string, unknown>> }> };
  return body.routes.chat.tiers.find((t) => t.name === tier) as Record<string, unknown>;
}
