import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import { resetTierFacts } from '../../../src/fit/tier-facts.js';
import { parseMockOptions } from '../../../src/mock/options.js';
import { type MockServer, startMock } from '../../../src/mock/server.js';
import { repoRoot } from '../../helpers/build.js';
import { requestLog, useHarness, waitFor } from '../../helpers/harness.js';

/**
 * `llm-route mock --protocol ollama|anthropic`: the wire as Ollama and api.anthropic.com write
 * it, read by the real SDKs and by llm-route itself (an `ollama`-type and an `anthropic`-type
 * tier pointed at the mocks), with the same fault flags as the OpenAI mock.
 */

const h = useHarness();
beforeEach(() => resetTierFacts());
const messages = [{ role: 'user' as const, content: 'say something nice please' }];

async function mock(raw: Record<string, unknown>): Promise<MockServer> {
  const server = await startMock(parseMockOptions({ port: 0, ...raw }));
  h.defer(() => server.close());
  return server;
}

const post = (url: string, body: unknown): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** An SSE body's events as [name, data] pairs. */
function sseEvents(text: string): Array<[string, Record<string, unknown>]> {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const name = /^event: (.*)$/m.exec(block)?.[1] ?? '';
      return [name, JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>];
    });
}

describe('mock --protocol ollama: the wire', () => {
  it('streams /api/chat as NDJSON lines, the last one done with its counts; stream: false is one object', async () => {
    const { url } = await mock({ protocol: 'ollama', name: 'qwen2.5-coder:14b', tokens: 4 });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/); // a type: ollama base_url has no /v1
    const res = await post(`${url}/api/chat`, { model: 'qwen2.5-coder:14b', messages });
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await res.text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(5);
    for (const line of lines.slice(0, 4)) {
      expect(line).toEqual({
        model: 'qwen2.5-coder:14b',
        created_at: expect.any(String),
        message: { role: 'assistant', content: expect.any(String) },
        done: false,
      });
    }
    expect(
      lines
        .slice(0, 4)
        .map((l) => (l.message as { content: string }).content)
        .join(''),
    ).toBe('[qwen2.5-coder:14b] hello from a');
    expect(lines[4]).toMatchObject({ message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', prompt_eval_count: 4, eval_count: 4 });
    for (const key of ['total_duration', 'load_duration', 'prompt_eval_duration', 'eval_duration']) expect(lines[4][key]).toEqual(expect.any(Number));

    const whole = (await (await post(`${url}/api/chat`, { model: 'x', stream: false, messages })).json()) as Record<string, unknown>;
    expect(whole).toMatchObject({ model: 'x', message: { role: 'assistant', content: '[qwen2.5-coder:14b] hello from a' }, done: true, done_reason: 'stop' });
    const bad = await post(`${url}/api/chat`, { messages });
    expect([bad.status, await bad.json()]).toEqual([400, { error: 'model is required' }]);
  });

  it("streams /api/generate's answer in `response` (the done line with `context`), and stream: false is one object: an editor that generates can be rehearsed", async () => {
    const { url } = await mock({ protocol: 'ollama', name: 'qwen2.5-coder:1.5b', tokens: 3 });
    const res = await post(`${url}/api/generate`, { model: 'qwen2.5-coder:1.5b', prompt: 'def fib(n):', system: 'complete code' });
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await res.text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(4);
    expect(Object.keys(lines[0])).toEqual(['model', 'created_at', 'response', 'done']);
    expect(lines.map((l) => l.response).join('')).toBe('[qwen2.5-coder:1.5b] hello from');
    const last = lines[3];
    expect(Object.keys(last).slice(0, 6)).toEqual(['model', 'created_at', 'response', 'done', 'done_reason', 'context']);
    expect(last).toMatchObject({ response: '', done: true, done_reason: 'stop', prompt_eval_count: 4, eval_count: 3 });
    expect(last.context).toHaveLength(7);
    const whole = (await (await post(`${url}/api/generate`, { model: 'm', prompt: 'hi', stream: false })).json()) as Record<string, unknown>;
    expect(whole).toMatchObject({ model: 'm', response: '[qwen2.5-coder:1.5b] hello from', done: true, done_reason: 'stop' });
    expect(whole.message).toBeUndefined();
    const bad = await post(`${url}/api/generate`, { model: 'm', prompt: 3 });
    expect([bad.status, await bad.json()]).toEqual([400, { error: 'prompt: expected a string' }]);
  });

  it('answers /api/tags, /api/ps, /api/show, /api/version and the load requests of /api/generate and /api/chat as Ollama does', async () => {
    const { url } = await mock({ protocol: 'ollama', name: 'llama3.2' });
    const tags = (await (await fetch(`${url}/api/tags`)).json()) as { models: Array<Record<string, unknown>> };
    expect(tags.models).toEqual([
      expect.objectContaining({ name: 'llama3.2:latest', model: 'llama3.2:latest', details: expect.objectContaining({ format: 'gguf' }) }),
    ]);
    const ps = (await (await fetch(`${url}/api/ps`)).json()) as { models: Array<Record<string, unknown>> };
    expect(ps.models).toEqual([expect.objectContaining({ name: 'llama3.2:latest', context_length: 4096, expires_at: expect.any(String) })]);
    const show = (await (await post(`${url}/api/show`, { model: 'llama3.2' })).json()) as Record<string, Record<string, unknown>>;
    expect(show.model_info).toMatchObject({ 'general.architecture': 'llama', 'llama.context_length': 32768 });
    expect(show.capabilities).toEqual(['completion', 'tools']);
    expect(await (await fetch(`${url}/api/version`)).json()).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    const load = await post(`${url}/api/generate`, { model: 'llama3.2', keep_alive: '30m' });
    expect(Object.keys((await load.json()) as object)).toEqual(['model', 'created_at', 'response', 'done', 'done_reason']);
    // Whatever `stream` says, one object; no messages loads too, keep_alive 0 unloads.
    expect(await (await post(`${url}/api/chat`, { model: 'llama3.2', stream: true })).json()).toMatchObject({
      message: { role: 'assistant', content: '' },
      done: true,
      done_reason: 'load',
    });
    expect(await (await post(`${url}/api/chat`, { model: 'llama3.2', messages: [], keep_alive: 0 })).json()).toMatchObject({ done_reason: 'unload' });
    const wrongMethod = await post(`${url}/api/tags`, {});
    expect([wrongMethod.status, await wrongMethod.json()]).toEqual([405, { error: 'POST not allowed here: use GET' }]);
  });

  it("serves Ollama's OpenAI-compatible /v1 too (the openai SDK)", async () => {
    const { url } = await mock({ protocol: 'ollama', name: 'llama3.2', tokens: 3 });
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'ollama', maxRetries: 0 });
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(['llama3.2:latest']);
    let text = '';
    for await (const chunk of await client.chat.completions.create({ model: 'llama3.2', messages, stream: true }))
      text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('[llama3.2] hello from');
  });

  it("fails with --fail-status in Ollama's error shape, 429 with retry-after", async () => {
    const { url } = await mock({ protocol: 'ollama', failRate: 1, failStatus: 429 });
    const res = await post(`${url}/api/chat`, { model: 'm', messages });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toEqual({ error: 'mock mock: injected failure (HTTP 429)' });
  });
});

describe('mock --protocol anthropic: the wire', () => {
  it("streams Messages with api.anthropic.com's event sequence, and the SDK reads it whole", async () => {
    const { url } = await mock({ protocol: 'anthropic', name: 'claude-mock', tokens: 3 });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await post(`${url}/v1/messages`, { model: 'claude-sonnet-4-5', max_tokens: 64, stream: true, messages });
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = sseEvents(await res.text());
    expect(events.map(([name]) => name)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const [name, data] of events) expect(data.type).toBe(name);
    expect(events[0][1].message).toMatchObject({
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [],
      stop_reason: null,
      usage: { input_tokens: 4, output_tokens: 1 },
    });
    expect(events[7][1]).toMatchObject({ delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } });

    const client = new Anthropic({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const streamed = await client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 64, messages }).finalMessage();
    expect(streamed).toMatchObject({ role: 'assistant', stop_reason: 'end_turn', content: [{ type: 'text', text: '[claude-mock] hello from' }] });
    const whole = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages });
    expect(whole).toMatchObject({
      type: 'message',
      content: [{ type: 'text', text: '[claude-mock] hello from' }],
      usage: { input_tokens: 4, output_tokens: 3 },
    });
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(['claude-mock']);
    expect(await client.messages.countTokens({ model: 'claude-sonnet-4-5', messages })).toEqual({ input_tokens: 4 });
  });

  it("fails in Anthropic's error shape (529 overloaded_error, a missing max_tokens a 400), read by the SDK", async () => {
    const { url } = await mock({ protocol: 'anthropic', failRate: 1, failStatus: 529 });
    const client = new Anthropic({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const error = await client.messages.create({ model: 'm', max_tokens: 8, messages }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((error as { error: unknown }).error).toMatchObject({
      type: 'error',
      error: { type: 'overloaded_error', message: 'mock mock: injected failure (HTTP 529)' },
    });
    const { url: strict } = await mock({ protocol: 'anthropic' });
    const res = await post(`${strict}/v1/messages`, { model: 'm', messages });
    expect([res.status, await res.json()]).toEqual([
      400,
      expect.objectContaining({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } }),
    ]);
  });

  it('breaks a stream after --die-after content events: the SDK sees it end unfinished', async () => {
    const { url } = await mock({ protocol: 'anthropic', tokens: 6, dieAfter: 2 });
    const client = new Anthropic({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    let text = '';
    const stream = client.messages.stream({ model: 'm', max_tokens: 64, messages });
    stream.on('text', (delta) => (text += delta));
    await expect(stream.finalMessage()).rejects.toThrow();
    expect(text).toBe('[mock] hello');
  });
});

describe('llm-route in front of the mocks: an ollama-type and an anthropic-type tier', () => {
  it("an OpenAI client and an Anthropic client get the Ollama mock's answer, translated; discovery reads /api/show and /api/ps", async () => {
    const ollama = await mock({ protocol: 'ollama', name: 'qwen2.5-coder:14b', tokens: 5 });
    const proxy = await h.proxy({ tiers: [{ name: 'local', type: 'ollama', url: ollama.url, model: 'qwen2.5-coder:14b', health: { warmup: false } }] });
    proxy.server.startActiveChecks();
    const discovered = await waitFor(() => proxy.logs.find((l) => l.event === 'fit_discovered'), 5000, 'fit_discovered');
    expect(discovered).toMatchObject({ tier: 'local', context_source: 'ollama /api/show', tools: true });

    const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
    let text = '';
    for await (const chunk of await openai.chat.completions.create({ model: 'chat', messages, stream: true })) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('[qwen2.5-coder:14b] hello from a simulated');
    expect(await requestLog(proxy)).toMatchObject({ tier: 'local', status: 200, usage: expect.objectContaining({ prompt_tokens: 4, completion_tokens: 5 }) });

    const anthropic = new Anthropic({ baseURL: proxy.origin, apiKey: 'x', maxRetries: 0 });
    const message = await anthropic.messages.stream({ model: 'chat', max_tokens: 64, messages }).finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: '[qwen2.5-coder:14b] hello from a simulated' }]);
  });

  it('a failing Ollama mock fails over to the Anthropic mock before the client sees a byte; a stalled one too', async () => {
    const failing = await mock({ protocol: 'ollama', name: 'local', failRate: 1, failStatus: 503 });
    const stalled = await mock({ protocol: 'ollama', name: 'local', stallRate: 1 });
    const cloud = await mock({ protocol: 'anthropic', name: 'claude', tokens: 4 });
    for (const [local, outcome] of [
      [failing, 'server_error'],
      [stalled, 'ttft_timeout'],
    ] as const) {
      const proxy = await h.proxy({
        tiers: [
          { name: 'local', type: 'ollama', url: local.url, model: 'local', retry: { attempts: 1 }, timeouts: { ttft_ms: 500 }, health: { warmup: false } },
          { name: 'cloud', type: 'anthropic', url: cloud.url, model: 'claude-sonnet-4-5', api_key: 'sk-ant-mock' },
        ],
      });
      const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
      let text = '';
      for await (const chunk of await openai.chat.completions.create({ model: 'chat', messages, stream: true })) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toBe('[claude] hello from a');
      const line = await requestLog(proxy);
      expect(line.tier).toBe('cloud');
      expect(line.attempts).toEqual([expect.objectContaining({ tier: 'local', outcome }), expect.objectContaining({ tier: 'cloud', outcome: 'ok' })]);
    }
  });
});

describe('the command', () => {
  it('`llm-route mock --protocol ollama` prints the base URL of an ollama provider; a bad protocol exits 2 naming the choices', async () => {
    const child = spawn(process.execPath, ['bin/llm-route.js', 'mock', '--protocol', 'ollama', '--name', 'qwen3:8b'], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
    expect(line).toMatch(/^llm-route mock qwen3:8b \(ollama\) listening on http:\/\/127\.0\.0\.1:\d+$/);
    const url = line.slice(line.lastIndexOf(' ') + 1);
    expect(await (await fetch(`${url}/api/tags`)).json()).toMatchObject({ models: [{ name: 'qwen3:8b' }] });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const bad = spawn(process.execPath, ['bin/llm-route.js', 'mock', '--protocol', 'gemini'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    bad.stderr.on('data', (d) => (err += String(d)));
    expect(await new Promise((resolve) => bad.once('exit', resolve))).toBe(2);
    expect(err).toBe('llm-route mock: --protocol "gemini": expected openai, ollama, anthropic\n');
  });
});
