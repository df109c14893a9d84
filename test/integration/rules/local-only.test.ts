import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { completion } from '../../helpers/fake-upstream.js';
import { logLine, useHarness } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';
import { connectProxy, httpsJsonServer, saveProxyEnv, selfSignedCert } from '../../helpers/tls-upstream.js';

const h = useHarness();

// The "cloud": a name that is not local by the rules (dotted, not .local, not an address) and
// that DNS never resolves; HTTPS_PROXY's CONNECT proxy ends its tunnels at a loopback HTTPS fake,
// which counts every request. Reachable, so "it got nothing" means llm-route sent it nothing.
const CLOUD_HOST = 'cloud.example.test';
const tls = selfSignedCert([CLOUD_HOST], ['127.0.0.1']);
let cloud: Awaited<ReturnType<typeof httpsJsonServer>>;
let proxy: Awaited<ReturnType<typeof connectProxy>>;
const proxyEnv = saveProxyEnv();

beforeAll(async () => {
  cloud = await httpsJsonServer(tls, completion('from the cloud'));
  proxy = await connectProxy(() => cloud.port);
  for (const k of ['https_proxy', 'http_proxy', 'no_proxy', 'NO_PROXY']) delete process.env[k];
  process.env.HTTPS_PROXY = proxy.url;
});
afterAll(async () => {
  proxyEnv.restore();
  await proxy.close();
  await cloud.close();
  tls.remove();
});
afterEach(() => {
  proxy.connects.length = 0;
  cloud.requests.length = 0;
});

/** Routes over a local fake that fails (500) and the cloud: `mixed`, `private` (local_only), `cloud-only` (local_only, no local tier). */
async function proxyWithLocalDown(): Promise<{ p: RunningProxy; local: Awaited<ReturnType<typeof h.fake>> }> {
  const local = await h.fake();
  local.always((ctx) => ctx.error(500, 'local model crashed'));
  const cloudProvider = `{ type: openai, base_url: "https://${CLOUD_HOST}/v1", api_key: sk-cloud, ca_file: "${tls.certFile}" }`;
  const p = await h.proxy(`version: 1
server: { port: 0 }
providers:
  local: { type: openai, base_url: "${local.url}" }
  cloud: ${cloudProvider}
routes:
  mixed:
    tiers: [{ provider: local, model: small, retry: { attempts: 1 } }, { provider: cloud, model: big, retry: { attempts: 1 } }]
  private:
    local_only: true
    tiers: [{ provider: local, model: small, retry: { attempts: 1 } }, { provider: cloud, model: big, retry: { attempts: 1 } }]
  cloud-only:
    local_only: true
    tiers: [{ provider: cloud, model: big }]
`);
  return { p, local };
}

describe('local only: fails closed, nothing reaches a tier off the local network', () => {
  it('control: without local-only, the local failure fails over to the cloud through the tunnel', async () => {
    const { p } = await proxyWithLocalDown();
    const answer = await new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 }).chat.completions.create({
      model: 'mixed',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0].message.content).toBe('from the cloud');
    expect(cloud.requests).toEqual(['POST /v1/chat/completions']);
  });

  it('a local_only route whose local tier fails: 503 no_local_tier naming the local failure, the cloud gets nothing', async () => {
    const { p, local } = await proxyWithLocalDown();
    const sdk = new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 });
    const failed = await sdk.chat.completions.create({ model: 'private', messages: [{ role: 'user', content: 'secret' }] }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    expect(failed).toMatchObject({ status: 503, code: 'no_local_tier', type: 'service_unavailable' });
    const error = (failed as InstanceType<typeof OpenAI.APIError>).error as { message: string; attempts: Array<{ tier: string; outcome: string }> };
    expect(error.message).toMatch(
      /^no_local_tier: route "private" is local-only for this request and its local tiers could not answer \(local: server_error\)/,
    );
    expect(error.attempts.map((a) => a.tier)).toEqual(['local']);
    // A Messages stream (Claude Code's shape): the same, before any byte of a stream.
    const stream = new Anthropic({ baseURL: p.origin, apiKey: 'x', maxRetries: 0 }).messages.stream({
      model: 'private',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'secret' }],
    });
    const streamError = await stream.finalMessage().catch((e: unknown) => e);
    expect(streamError).toMatchObject({
      status: 503,
      error: { type: 'error', error: { type: 'api_error', message: expect.stringMatching(/^no_local_tier: /) } },
    });
    expect(local.requests).toHaveLength(2);
    expect(cloud.requests).toEqual([]);
    expect(proxy.connects).toEqual([]);
  });

  it('the x-llm-route-local-only: 1 header makes one request local-only; any other value loosens nothing', async () => {
    const { p, local } = await proxyWithLocalDown();
    const pinned = new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0, defaultHeaders: { 'x-llm-route-local-only': '1' } });
    await expect(pinned.responses.create({ model: 'mixed', input: 'secret' })).rejects.toMatchObject({ status: 503, code: 'no_local_tier' });
    const loosen = new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0, defaultHeaders: { 'x-llm-route-local-only': '0' } });
    await expect(loosen.chat.completions.create({ model: 'private', messages: [{ role: 'user', content: 'secret' }] })).rejects.toMatchObject({
      status: 503,
      code: 'no_local_tier',
    });
    expect(local.requests).toHaveLength(2);
    expect(cloud.requests).toEqual([]);
    expect(proxy.connects).toEqual([]);
  });

  it('no local tier at all: 503 no_local_tier in each protocol (a token count: the estimate), and the cloud gets nothing', async () => {
    const { p } = await proxyWithLocalDown();
    const chat = await fetch(`${p.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'cloud-only', messages: [{ role: 'user', content: 'secret' }] }),
    });
    expect(chat.status).toBe(503);
    const chatBody = (await chat.json()) as { error: { type: string; code: string; message: string } };
    expect(chatBody.error).toMatchObject({ type: 'service_unavailable', code: 'no_local_tier' });
    expect(chatBody.error.message).toMatch(/route "cloud-only" is local-only .* none of its tiers is on the local network/);
    expect(await logLine(p, chat.headers.get('x-request-id'))).toMatchObject({ route: 'cloud-only', status: 503, outcome: 'failed', tier: null });

    const sdkError = await new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 }).responses
      .create({ model: 'cloud-only', input: 'secret' })
      .catch((e: unknown) => e);
    expect(sdkError).toMatchObject({ status: 503, code: 'no_local_tier', type: 'service_unavailable' });

    const anthropic = new Anthropic({ baseURL: p.origin, apiKey: 'x', maxRetries: 0 });
    const messagesError = await anthropic.messages
      .create({ model: 'cloud-only', max_tokens: 16, messages: [{ role: 'user', content: 'secret' }] })
      .catch((e: unknown) => e);
    expect(messagesError).toBeInstanceOf(Anthropic.APIError);
    const body = (messagesError as InstanceType<typeof Anthropic.APIError>).error as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('api_error');
    expect(body.error.message).toMatch(/^no_local_tier: /);
    // A token count needs no tier: llm-route's own estimate, and nothing leaves the machine.
    const counted = await anthropic.messages.countTokens({ model: 'cloud-only', messages: [{ role: 'user', content: 'secret' }] }).withResponse();
    expect(counted.data.input_tokens).toBeGreaterThan(0);
    expect(counted.response.headers.get('x-llm-route-estimated')).toBe('true');
    // The header on a route with no local tier: the same.
    await expect(
      new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0, defaultHeaders: { 'x-llm-route-local-only': '1' } }).chat.completions.create({
        model: 'cloud-only',
        messages: [{ role: 'user', content: 'secret' }],
      }),
    ).rejects.toMatchObject({ status: 503 });
    expect(cloud.requests).toEqual([]);
    expect(proxy.connects).toEqual([]);
  });
});
