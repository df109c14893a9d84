import Anthropic from '@anthropic-ai/sdk';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { costUsd } from '../../../src/usage/cost.js';
import { anthropicTextStream } from '../../helpers/anthropic-upstream.js';
import { admin } from '../../helpers/control-kit.js';
import { fetchMetrics, useHarness } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';
import { MESSAGES_TOOLS, sseContent } from '../../helpers/tool-text-kit.js';
import { useTempDirs } from '../../helpers/usage-kit.js';
import { HERMES } from '../../helpers/tool-text-forms.js';

/**
 * `GET /admin/sessions/<id>`: what a server saw of one agent session (Claude Code names it in
 * `x-claude-code-session-id`), the source of `llm-route statusline`. Real SDK clients, a local
 * tier that writes a tool call as text or fails, a priced Anthropic tier behind it.
 */

const h = useHarness();
const tempDir = useTempDirs();
const CLOUD_PRICE = { input_per_mtok: 3, output_per_mtok: 15 };

async function twoTiers(server: Record<string, unknown> = {}) {
  const local = await h.fake();
  const cloud = await h.fake();
  const p = await h.proxy({
    tiers: [
      { name: 'local', url: local.url, retry: { attempts: 1 } },
      { name: 'cloud', url: cloud.url.replace(/\/v1$/, ''), type: 'anthropic', api_key: 'sk-ant-upstream', model: 'claude-sonnet-4-5', price: CLOUD_PRICE },
    ],
    server,
    top: { usage: { path: join(tempDir(), 'usage.db') } }, // a database of its own: "today" is this test's
  });
  return { local, cloud, p };
}

/** Claude Code as the server sees it: the Anthropic SDK with Claude Code's session header. */
function claude(p: RunningProxy, session: string, key = 'x'): Anthropic {
  return new Anthropic({ baseURL: p.origin, apiKey: key, maxRetries: 0, defaultHeaders: { 'x-claude-code-session-id': session } });
}

/** One streamed turn, as Claude Code sends them. */
function turn(client: Anthropic, extra: Partial<Anthropic.MessageCreateParams> = {}): Promise<Anthropic.Message> {
  return client.messages
    .stream({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], ...extra } as Anthropic.MessageStreamParams)
    .finalMessage();
}

async function summary(p: RunningProxy, session: string, headers: Record<string, string> = {}) {
  return admin(p, 'GET', `/admin/sessions/${session}`, undefined, headers);
}

describe('GET /admin/sessions/<id>', () => {
  it("sums one session's requests: the last tier, the split, fallbacks and why, recovered tool calls, cost; today's cost from the usage log", async () => {
    const { local, cloud, p } = await twoTiers();
    // 1: the local model writes its tool call as text; it reaches the client as a tool call.
    local.next(sseContent([HERMES]));
    // 2: the local tier fails; the cloud answers (its usage priced).
    local.next((ctx) => ctx.error(500, 'local is broken'));
    cloud.always(anthropicTextStream(['Hello', ' there'], { usage: { input_tokens: 1200, output_tokens: 1 }, outputTokens: 30 }));

    const a = claude(p, '1f2e3d4c-aaaa-4bbb-8ccc-000000000001');
    const first = await turn(a, { tools: MESSAGES_TOOLS, messages: [{ role: 'user', content: 'list files' }] });
    expect(first.content.some((block) => block.type === 'tool_use')).toBe(true);
    const second = await turn(a);
    expect(second.content[0]).toMatchObject({ type: 'text', text: 'Hello there' });
    // Another session's request is not this one's.
    await turn(claude(p, 'other-session'));

    await p.server.usage.flush();
    const { status, json } = await summary(p, '1f2e3d4c-aaaa-4bbb-8ccc-000000000001');
    expect(status).toBe(200);
    const cloudCost = costUsd({ ...CLOUD_PRICE }, { prompt: 1200, completion: 30, cached: 0 });
    expect(json).toMatchObject({
      session: '1f2e3d4c-aaaa-4bbb-8ccc-000000000001',
      requests: 2,
      last: { route: 'chat', tier: 'cloud', kind: 'cloud', model: 'claude-sonnet-4-5', status: 200, outcome: 'ok' },
      local_requests: 1,
      cloud_requests: 1,
      failed_requests: 0,
      fallbacks: 1,
      fallback_reasons: [{ tier: 'local', outcome: 'server_error', count: 1 }],
      tool_calls_recovered: 1,
    });
    expect(json.cost_usd).toBeCloseTo(cloudCost, 12);
    expect(json.tiers).toEqual([
      expect.objectContaining({ tier: 'local', kind: 'local', requests: 1, cost_usd: 0 }),
      expect.objectContaining({ tier: 'cloud', kind: 'cloud', requests: 1, prompt_tokens: 1200, completion_tokens: 30 }),
    ]);
    // Today: every request in the usage log (both sessions' cloud answers, at the same price).
    expect(json.today.requests).toBe(3);
    expect(json.today.cost_usd).toBeCloseTo(2 * cloudCost, 12);

    // Session ids are no metric label, and no line of the request log.
    const metrics = await fetchMetrics(p);
    expect(metrics.text).not.toContain('1f2e3d4c');
    expect(JSON.stringify(p.logs)).not.toContain('1f2e3d4c');
  });

  it('answers a session it never saw (or a client without the header) with no requests, and today', async () => {
    const { cloud, p } = await twoTiers();
    cloud.always(anthropicTextStream(['ok']));
    // No session header: counted today, in no session.
    await turn(new Anthropic({ baseURL: p.origin, apiKey: 'x', maxRetries: 0 }));
    await p.server.usage.flush();
    const { status, json } = await summary(p, 'never-seen');
    expect(status).toBe(200);
    expect(json).toMatchObject({ session: 'never-seen', requests: 0, last: null, fallbacks: 0, tool_calls_recovered: 0, cost_usd: 0 });
    expect(json.today.requests).toBe(1);
    expect(p.server.app.sessions.size).toBe(0);
  });

  it('keeps a session id only when it is a sane token', async () => {
    const { cloud, p } = await twoTiers();
    cloud.always(anthropicTextStream(['ok']));
    await turn(claude(p, `${'x'.repeat(201)}`));
    await turn(claude(p, 'a b'));
    expect(p.server.app.sessions.size).toBe(0);
  });

  it('is read with the client token or the admin token; only GET', async () => {
    const { cloud, p } = await twoTiers({ auth_token: 'client-token', admin_token: 'admin-token' });
    cloud.always(anthropicTextStream(['ok']));
    await turn(claude(p, 'sess-1', 'client-token'));

    expect((await summary(p, 'sess-1', { authorization: 'Bearer client-token' })).json.requests).toBe(1);
    expect((await summary(p, 'sess-1', { 'x-api-key': 'client-token' })).json.requests).toBe(1);
    expect((await summary(p, 'sess-1', { authorization: 'Bearer admin-token' })).json.requests).toBe(1);
    const none = await summary(p, 'sess-1');
    expect(none.status).toBe(401);
    expect(JSON.stringify(none.json)).not.toContain('sess');
    expect((await summary(p, 'sess-1', { authorization: 'Bearer wrong' })).status).toBe(401);
    // The client token reads; it changes nothing, and it opens no other admin endpoint.
    expect((await admin(p, 'DELETE', '/admin/sessions/sess-1', undefined, { authorization: 'Bearer client-token' })).status).toBe(401);
    expect((await admin(p, 'GET', '/admin/routes', undefined, { authorization: 'Bearer client-token' })).status).toBe(401);
    expect((await admin(p, 'DELETE', '/admin/sessions/sess-1', undefined, { authorization: 'Bearer admin-token' })).status).toBe(405);
  });

  it('without auth_token, reads from loopback like the model endpoints, even with an admin_token set', async () => {
    const { cloud, p } = await twoTiers({ admin_token: 'admin-token' });
    cloud.always(anthropicTextStream(['ok']));
    await turn(claude(p, 'sess-2'));
    expect((await summary(p, 'sess-2')).json.requests).toBe(1);
    expect((await admin(p, 'GET', '/admin/routes')).status).toBe(401);
  });
});
