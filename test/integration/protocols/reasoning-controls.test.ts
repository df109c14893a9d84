import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { completion, healthyStream } from '../../helpers/fake-upstream.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { anthropicMessage } from '../../helpers/anthropic-upstream.js';
import { ollamaWhole } from '../../helpers/ollama-upstream.js';
import type { RunningProxy } from '../../helpers/proxy.js';

/** Reasoning controls mapped across vendors, and never a 400 from one the client did not aim at the tier (docs/protocols.md, "Reasoning controls"). */

const h = useHarness();

const anthropicClient = (proxy: RunningProxy): Anthropic => new Anthropic({ baseURL: proxy.origin, apiKey: 'k', maxRetries: 0 });
const openaiClient = (proxy: RunningProxy): OpenAI => new OpenAI({ baseURL: `${proxy.origin}/v1`, apiKey: 'k', maxRetries: 0 });

describe('reasoning controls across vendors', () => {
  it('reasoning_effort reaches an Anthropic tier as a thinking budget below max_tokens', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, anthropicMessage([{ type: 'text', text: 'ok' }])));
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: upstream.url, type: 'anthropic' }] });
    const client = openaiClient(proxy);
    await client.chat.completions.create({
      model: 'chat',
      reasoning_effort: 'medium',
      max_completion_tokens: 16000,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(upstream.requests[0].body.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    await client.chat.completions.create({ model: 'chat', reasoning_effort: 'high', max_completion_tokens: 3000, messages: [{ role: 'user', content: 'x' }] });
    expect(upstream.requests[1].body.thinking).toEqual({ type: 'enabled', budget_tokens: 2999 });
    // Where Anthropic allows no thinking (a temperature of its own, too few tokens), none is asked for.
    await client.chat.completions.create({
      model: 'chat',
      reasoning_effort: 'high',
      temperature: 0.2,
      max_completion_tokens: 3000,
      messages: [{ role: 'user', content: 'x' }],
    });
    await client.chat.completions.create({ model: 'chat', reasoning_effort: 'low', max_completion_tokens: 1000, messages: [{ role: 'user', content: 'x' }] });
    expect(upstream.requests[2].body.thinking).toBeUndefined();
    expect(upstream.requests[3].body.thinking).toBeUndefined();
    // Each drop is said in the log, once per tier and reason (a third request like the second says nothing more).
    await client.chat.completions.create({
      model: 'chat',
      reasoning_effort: 'high',
      temperature: 0.2,
      max_completion_tokens: 3000,
      messages: [{ role: 'user', content: 'x' }],
    });
    await waitFor(() => proxy.logs.filter((l) => l.event === 'request').length === 5);
    const drops = proxy.logs.filter((l) => l.event === 'control_dropped');
    expect(drops.map((l) => [l.tier, l.message])).toEqual([
      ['claude', expect.stringContaining('reasoning effort "high": Anthropic allows no thinking')],
      ['claude', expect.stringContaining('reasoning effort "low": Anthropic allows no thinking')],
    ]);
  });

  it('Anthropic thinking reaches a chat tier as reasoning_effort; a model that refuses it is asked again without', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => {
      // OpenAI's answer to reasoning_effort for a model that does not reason.
      if (ctx.body.reasoning_effort !== undefined)
        return ctx.error(400, "Unsupported parameter: 'reasoning_effort' is not supported with this model.", { type: 'invalid_request_error' });
      return healthyStream(['plain'])(ctx);
    });
    const proxy = await h.proxy({ tiers: [{ name: 'gpt', url: upstream.url }] });
    const message = await anthropicClient(proxy)
      .messages.stream({
        model: 'chat',
        max_tokens: 32000,
        thinking: { type: 'enabled', budget_tokens: 31999 },
        messages: [{ role: 'user', content: 'x' }],
      })
      .finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'plain' }]);
    expect(upstream.requests.map((r) => r.body.reasoning_effort)).toEqual(['high', undefined]);
    const drop = await waitFor(() => proxy.logs.find((l) => l.event === 'control_dropped'));
    expect(drop).toMatchObject({ route: 'chat', tier: 'gpt', message: 'reasoning effort "high": the tier refused it (HTTP 400), sent again without it' });
  });

  it("a client's own control, relayed to its own kind of tier, is not asked again without it", async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.error(400, "Unsupported parameter: 'reasoning_effort' is not supported with this model.", { type: 'invalid_request_error' }));
    const proxy = await h.proxy({ tiers: [{ name: 'gpt', url: upstream.url }] });
    const error = await openaiClient(proxy)
      .chat.completions.create({ model: 'chat', reasoning_effort: 'low', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(upstream.requests).toHaveLength(1);
  });

  it('reaches an Ollama tier as think; Ollama\'s "does not support thinking" is answered by asking again without', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => {
      if (ctx.body.think !== undefined) return ctx.json(400, { error: '"llama3.2:1b" does not support thinking' });
      ctx.json(200, ollamaWhole({ role: 'assistant', content: 'no thoughts' }));
    });
    const proxy = await h.proxy({ tiers: [{ name: 'ollama', url: upstream.url, type: 'ollama' }] });
    const response = await openaiClient(proxy).responses.create({ model: 'chat', input: 'x', reasoning: { effort: 'low' }, stream: false });
    expect(response.output_text).toBe('no thoughts');
    expect(upstream.requests.map((r) => r.body.think)).toEqual(['low', undefined]);
  });

  it('a whole chat answer from a thinking request onto a chat tier that accepts the effort keeps it', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('fine')));
    const proxy = await h.proxy({ tiers: [{ name: 'gpt', url: upstream.url }] });
    await anthropicClient(proxy).messages.create({
      model: 'chat',
      max_tokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 1500 },
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(upstream.requests[0].body.reasoning_effort).toBe('low');
  });
});
