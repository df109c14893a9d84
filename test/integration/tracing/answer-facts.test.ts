import { describe, expect, it } from 'vitest';
import { anthropicMessage, anthropicTextStream } from '../../helpers/anthropic-upstream.js';
import { completion, healthyStream } from '../../helpers/fake-upstream.js';
import { googlePretty, geminiChunk } from '../../helpers/gemini-upstream.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { ollamaTextStream, ollamaWhole } from '../../helpers/ollama-upstream.js';
import { CLIENT, OtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.js';
import { chat, type ConfigSpec, type RunningProxy } from '../../helpers/proxy.js';

/*
 * What an answer says of itself on its attempt's span (docs/traces.md): `gen_ai.response.model`,
 * the upstream's own name for the model that answered (its stream's first event that names one,
 * or its whole answer), and `gen_ai.response.finish_reasons` for whole answers as for streams —
 * a relayed answer decoded for them only as its spans are made, a translated one from its decoding.
 */

const h = useHarness();

async function answeredSpan(spec: ConfigSpec, ask: (proxy: RunningProxy) => Promise<Response>): Promise<ReceivedSpan> {
  const r = await OtlpReceiver.start();
  h.defer(() => r.close());
  const proxy = await h.proxy(spec, { traceEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_BSP_SCHEDULE_DELAY: '20' } });
  const res = await ask(proxy);
  expect(res.status).toBe(200);
  await res.text();
  return waitFor(() => r.spans.find((s) => s.kind === CLIENT), 5000, 'the attempt span');
}

function messages(proxy: RunningProxy, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${proxy.origin}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'x' },
    body: JSON.stringify({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

describe("an answer's own model and finish on its span", () => {
  it('a relayed whole Chat answer: its model and its first choice\'s finish_reason (a quoted "model" in its text is no key)', async () => {
    const up = await h.fake();
    const body = completion('she said "model":"decoy" and stopped');
    body.model = 'Qwen2.5-7B-Instruct-Q4_K_M.gguf';
    const choices = body.choices as Array<Record<string, unknown>>;
    choices[0].finish_reason = 'length';
    choices.push({ index: 1, message: { role: 'assistant', content: 'another' }, finish_reason: 'content_filter' });
    up.always((ctx) => ctx.json(200, body));
    const span = await answeredSpan({ tiers: [{ name: 'local', url: up.url }] }, (p) => chat(p, {}));
    expect(span.attributes).toMatchObject({ 'gen_ai.response.model': 'Qwen2.5-7B-Instruct-Q4_K_M.gguf', 'gen_ai.response.finish_reasons': ['length'] });
  });

  it('a Chat stream: the model its first chunk names', async () => {
    const up = await h.fake();
    up.always(healthyStream(['Hel', 'lo']));
    const span = await answeredSpan({ tiers: [{ name: 'local', url: up.url }] }, (p) => chat(p, { stream: true }));
    expect(span.attributes).toMatchObject({ 'gen_ai.response.model': 'fake-model', 'gen_ai.response.finish_reasons': ['stop'] });
  });

  it("a relayed whole Messages answer, and a Messages stream (message_start's model)", async () => {
    const up = await h.fake();
    up.next((ctx) => ctx.json(200, anthropicMessage([{ type: 'text', text: 'hi' }], 'max_tokens'))).always(anthropicTextStream(['hi']));
    const tiers: ConfigSpec = { tiers: [{ name: 'cloud', url: up.url, type: 'anthropic', model: 'claude-sonnet-4-5' }] };
    const whole = await answeredSpan(tiers, (p) => messages(p, {}));
    expect(whole.attributes).toMatchObject({ 'gen_ai.response.model': 'claude-sonnet-4-5', 'gen_ai.response.finish_reasons': ['length'] });
    const stream = await answeredSpan(tiers, (p) => messages(p, { stream: true }));
    expect(stream.attributes).toMatchObject({ 'gen_ai.response.model': 'claude-sonnet-4-5', 'gen_ai.response.finish_reasons': ['stop'] });
  });

  it("a relayed Messages answer that called a tool whose input names a model: the answer's own model, and tool_calls", async () => {
    const up = await h.fake();
    up.always((ctx) =>
      ctx.json(200, anthropicMessage([{ type: 'tool_use', id: 'toolu_01', name: 'Task', input: { model: 'haiku', stop_reason: 'x' } }], 'tool_use')),
    );
    const span = await answeredSpan({ tiers: [{ name: 'cloud', url: up.url, type: 'anthropic', model: 'claude-sonnet-4-5' }] }, (p) => messages(p, {}));
    expect(span.attributes).toMatchObject({ 'gen_ai.response.model': 'claude-sonnet-4-5', 'gen_ai.response.finish_reasons': ['tool_calls'] });
  });

  it('a translated whole answer (a Chat client, an Ollama tier) and an Ollama stream', async () => {
    const up = await h.fake();
    up.next((ctx) => ctx.json(200, ollamaWhole({ content: 'hi' }))).always(ollamaTextStream(['hi']));
    const tiers: ConfigSpec = { tiers: [{ name: 'local', url: `http://127.0.0.1:${up.port}`, type: 'ollama', model: 'qwen2.5:7b' }] };
    const whole = await answeredSpan(tiers, (p) => chat(p, {}));
    expect(whole.attributes).toMatchObject({ 'gen_ai.response.model': 'qwen2.5:7b', 'gen_ai.response.finish_reasons': ['stop'] });
    const stream = await answeredSpan(tiers, (p) => chat(p, { stream: true }));
    expect(stream.attributes).toMatchObject({ 'gen_ai.response.model': 'qwen2.5:7b', 'gen_ai.response.finish_reasons': ['stop'] });
  });

  it("a Gemini tier's whole answer as Google pretty-prints it: modelVersion and a finishReason of MAX_TOKENS", async () => {
    const up = await h.fake();
    up.always((ctx) => googlePretty(ctx, 200, geminiChunk([{ text: 'hi' }], { prompt: 3, candidates: 1 }, 'MAX_TOKENS')));
    const span = await answeredSpan({ tiers: [{ name: 'cloud', url: `http://127.0.0.1:${up.port}`, type: 'gemini', model: 'gemini-2.5-flash' }] }, (p) =>
      chat(p, {}),
    );
    expect(span.attributes).toMatchObject({ 'gen_ai.response.model': 'gemini-2.5-flash', 'gen_ai.response.finish_reasons': ['length'] });
  });

  it("a Gemini tier's whole answer that called a function: tool_calls, as its stream would say", async () => {
    const up = await h.fake();
    up.always((ctx) => googlePretty(ctx, 200, geminiChunk([{ functionCall: { name: 'Bash', args: { model: 'x' } } }], { prompt: 3, candidates: 1 }, 'STOP')));
    const span = await answeredSpan({ tiers: [{ name: 'cloud', url: `http://127.0.0.1:${up.port}`, type: 'gemini', model: 'gemini-2.5-flash' }] }, (p) =>
      chat(p, { tools: [{ type: 'function', function: { name: 'Bash', parameters: { type: 'object', properties: {} } } }] }),
    );
    expect(span.attributes).toMatchObject({ 'gen_ai.response.model': 'gemini-2.5-flash', 'gen_ai.response.finish_reasons': ['tool_calls'] });
  });

  it('an answer that names no model has no gen_ai.response.model (never the asked model in its place)', async () => {
    const up = await h.fake();
    const body = completion('hi');
    delete body.model;
    up.always((ctx) => ctx.json(200, body));
    const span = await answeredSpan({ tiers: [{ name: 'local', url: up.url }] }, (p) => chat(p, {}));
    expect(span.attributes['gen_ai.response.model']).toBeUndefined();
    expect(span.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
  });
});
