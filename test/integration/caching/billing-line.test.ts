import { describe, expect, it } from 'vitest';
import { anthropicMessage } from '../../helpers/anthropic-upstream.js';
import { LOADING_BODY } from '../../helpers/fake-llama-server.js';
import { completion } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { ollamaWhole } from '../../helpers/ollama-upstream.js';
import type { RunningProxy } from '../../helpers/proxy.js';
import { billingLine, CLAUDE_CODE_IDENTITY, claudeCodeTurns } from '../../helpers/agent-conversations.js';

/** Claude Code's billing line (a nonce that changes every request) reaches Anthropic only. */

const h = useHarness();

function messages(proxy: RunningProxy, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${proxy.origin}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ ...body, model: 'chat', stream: false }),
  });
}

const [TURN] = claudeCodeTurns({ turns: 1, nonces: ['36ee5'] });

describe("Claude Code's billing line", () => {
  it('is removed before a Messages request is translated for an openai tier: the system message starts with what follows it', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('ok')));
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    expect((await messages(proxy, TURN)).status).toBe(200);
    const sent = upstream.requests[0].body as { messages: Array<{ role: string; content: string }> };
    expect(sent.messages[0].role).toBe('system');
    expect(sent.messages[0].content.startsWith(`${CLAUDE_CODE_IDENTITY}\n\n`)).toBe(true);
    expect(JSON.stringify(sent)).not.toContain('x-anthropic-billing-header');
    expect(JSON.stringify(sent)).not.toContain('cch=');
  });

  it('is removed for an ollama tier, and from the start of a string system prompt', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, ollamaWhole({ content: 'ok' })));
    const proxy = await h.proxy({ tiers: [{ name: 'ollama', url: upstream.url.replace(/\/v1$/, ''), type: 'ollama' }] });
    const body = { ...TURN, system: `${billingLine('0aaa9')}\n${CLAUDE_CODE_IDENTITY}` };
    expect((await messages(proxy, body)).status).toBe(200);
    expect(upstream.requests[0].url).toBe('/api/chat');
    expect((upstream.requests[0].body.messages as Array<Record<string, unknown>>)[0]).toEqual({ role: 'system', content: CLAUDE_CODE_IDENTITY });
  });

  it('is removed when relayed to a server that imitates Anthropic (passthrough: [messages]); the other system blocks stay as they were', async () => {
    const imitation = await h.fake();
    imitation.always((ctx) => ctx.json(200, anthropicMessage([{ type: 'text', text: 'ok' }])));
    const proxy = await h.proxy({ tiers: [{ name: 'llama', url: imitation.url, provider: { passthrough: ['messages'] } }] });
    expect((await messages(proxy, TURN)).status).toBe(200);
    expect(imitation.requests[0].url).toBe('/v1/messages');
    expect(imitation.requests[0].body.system).toEqual((TURN.system as unknown[]).slice(1));
  });

  it('reaches an anthropic tier untouched, also after an imitation failed first', async () => {
    const imitation = await h.fake();
    imitation.always((ctx) => ctx.json(503, LOADING_BODY));
    const anthropic = await h.fake();
    anthropic.always((ctx) => ctx.json(200, anthropicMessage([{ type: 'text', text: 'ok' }])));
    const proxy = await h.proxy({
      tiers: [
        { name: 'llama', url: imitation.url, provider: { passthrough: ['messages'] }, retry: { attempts: 1 } },
        { name: 'claude', url: anthropic.url.replace(/\/v1$/, ''), type: 'anthropic' },
      ],
    });
    expect((await messages(proxy, TURN)).status).toBe(200);
    expect((imitation.requests[0].body.system as unknown[]).length).toBe(2);
    expect(anthropic.requests[0].url).toBe('/v1/messages');
    expect(anthropic.requests[0].body.system).toEqual(TURN.system);
    expect((anthropic.requests[0].body.system as Array<{ text: string }>)[0].text).toBe(billingLine('36ee5'));
  });

  it('two turns with new nonces reach a translated tier with the same system prompt', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('ok')));
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const [one, two] = claudeCodeTurns({ turns: 2, nonces: ['36ee5', '0aaa9'] });
    await messages(proxy, one);
    await messages(proxy, two);
    const [first, second] = upstream.requests.map((r) => JSON.stringify((r.body.messages as unknown[])[0]));
    expect(second).toBe(first);
  });
});
