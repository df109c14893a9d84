import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';

const h = useHarness();

describe('streaming basics', () => {
  it('relays a healthy stream through the OpenAI SDK', async () => {
    const local = await h.fake();
    local.always(healthyStream(['Hello', ' world']));
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url }] });
    const client = new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello world');
    expect(local.requests[0].body.model).toBe('local-model');
    expect(local.requests[0].body.stream_options).toEqual({ include_usage: true });
  });
});
