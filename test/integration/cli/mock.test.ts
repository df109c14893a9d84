import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import OpenAI, { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { MockOptionsError, parseMockOptions } from '../../../src/mock/options.js';
import { startMock, type MockServer } from '../../../src/mock/server.js';
import { repoRoot } from '../../helpers/build.js';
import { useHarness } from '../../helpers/harness.js';

const messages = [{ role: 'user' as const, content: 'say something nice please' }];

const h = useHarness();

async function mock(raw: Record<string, unknown> = {}): Promise<MockServer> {
  const server = await startMock(parseMockOptions({ port: 0, ...raw }));
  h.defer(() => server.close());
  return server;
}

function client(url: string): OpenAI {
  return new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
}

function post(url: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'any-model', messages, ...body }),
    signal,
  });
}

/** The `data:` payloads of a complete SSE body. */
async function sseData(response: Response): Promise<string[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
}

/** Reads the stream until `predicate` holds for the text so far; returns the time it took. */
async function readUntil(response: Response, predicate: (text: string) => boolean): Promise<number> {
  const started = performance.now();
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!predicate(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before the condition held: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return performance.now() - started;
}

describe('parseMockOptions', () => {
  it('applies the CLI defaults and parses ranges', () => {
    const opts = parseMockOptions({ ttftMs: '200:1500', failRate: '0.1', dieAfter: '2' });
    expect(opts).toMatchObject({ ttftMs: { min: 200, max: 1500 }, failRate: 0.1, dieAfter: 2, tokens: 20, name: 'mock' });
    expect(parseMockOptions({ ttftMs: 50 }).ttftMs).toEqual({ min: 50, max: 50 });
  });

  it('names every bad flag and what it expected', () => {
    const attempt = () => parseMockOptions({ ttftMs: '9:1', failRate: '1.5', failStatus: '99', tokens: '-1', name: '', bogus: 1 });
    expect(attempt).toThrow(MockOptionsError);
    const problems = (() => {
      try {
        attempt();
        return [];
      } catch (err) {
        return (err as MockOptionsError).problems;
      }
    })();
    expect(problems.join('\n')).toMatch(/--ttft-ms "9:1".*min <= max/);
    expect(problems.join('\n')).toMatch(/--fail-rate "1.5": expected a share from 0 to 1/);
    expect(problems.join('\n')).toMatch(/--fail-status "99"/);
    expect(problems.join('\n')).toMatch(/--tokens "-1"/);
    expect(problems.join('\n')).toMatch(/--name/);
    expect(problems.join('\n')).toMatch(/unknown mock option "bogus"/);
  });
});

describe('llm-route mock server', () => {
  it('lists one model', async () => {
    const { url } = await mock({ name: 'local' });
    const models = await client(url).models.list();
    expect(models.data.map((m) => m.id)).toEqual(['local']);
  });

  it('streams the full text with the name, echoing the model (openai SDK)', async () => {
    const { url } = await mock({ name: 'alpha', tokens: 7 });
    const stream = await client(url).chat.completions.create({ model: 'qwen2.5:7b', messages, stream: true });
    let text = '';
    const finishes: (string | null)[] = [];
    for await (const chunk of stream) {
      expect(chunk.model).toBe('qwen2.5:7b');
      expect(chunk.system_fingerprint).toBe('alpha');
      text += chunk.choices[0]?.delta.content ?? '';
      finishes.push(chunk.choices[0]?.finish_reason ?? null);
    }
    expect(text.startsWith('[alpha] ')).toBe(true);
    expect(text.split(' ')).toHaveLength(7);
    expect(finishes.at(-1)).toBe('stop');
  });

  it('sends OpenAI-shaped SSE: role chunk first, [DONE] last, usage when asked', async () => {
    const { url } = await mock({ tokens: 3 });
    const response = await post(url, { stream: true, stream_options: { include_usage: true } });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const events = await sseData(response);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks).toHaveLength(1 + 3 + 1 + 1);
    expect(chunks[4].choices[0].finish_reason).toBe('stop');
    expect(chunks[5]).toMatchObject({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 } });
  });

  it('gives usage through the SDK with include_usage', async () => {
    const { url } = await mock({ tokens: 5 });
    const stream = await client(url).chat.completions.create({
      model: 'm',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage).toEqual({ prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 });
  });

  it('answers non-streaming requests with one chat.completion', async () => {
    const { url } = await mock({ name: 'beta', tokens: 4 });
    const completion = await client(url).chat.completions.create({ model: 'gpt-x', messages });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('gpt-x');
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.choices[0].message.content).toMatch(/^\[beta\] /);
    expect(completion.usage).toEqual({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });
  });

  it("counts the request's tool definitions in prompt_tokens, as a real server's template does (~4 characters a token)", async () => {
    const { url } = await mock({ tokens: 2 });
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'shell',
          description: 'Runs a shell command and returns its output. '.repeat(20),
          parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
        },
      },
    ];
    const completion = await client(url).chat.completions.create({ model: 'm', messages, tools });
    const toolTokens = Math.ceil(JSON.stringify(tools).length / 4);
    expect(toolTokens).toBeGreaterThan(200);
    expect(completion.usage?.prompt_tokens).toBe(4 + toolTokens);
  });

  it('rejects invalid JSON with an OpenAI-shaped 400', async () => {
    const { url } = await mock();
    const response = await fetch(`${url}/chat/completions`, { method: 'POST', body: '{"model":' });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string; type: string; code: string } };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    expect(body.error.message).toMatch(/invalid JSON/);
  });

  it('fails with --fail-status 503 at fail-rate 1', async () => {
    const { url } = await mock({ failRate: 1, failStatus: 503 });
    const error = await client(url)
      .chat.completions.create({ model: 'm', messages, stream: true })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(503);
    expect((error as APIError).type).toBe('server_error');
  });

  it('fails with 429 and retry-after: 1', async () => {
    const { url } = await mock({ failRate: 1, failStatus: 429 });
    const response = await post(url, { stream: true });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('1');
    const body = (await response.json()) as { error: { message: string; code: string } };
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.error.message).toMatch(/mock/);
  });

  it('stalls a stream: 200 and SSE headers, then nothing', async () => {
    const { url, ...server } = await mock({ stallRate: 1 });
    const abort = new AbortController();
    const response = await post(url, { stream: true }, abort.signal);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.getReader();
    const outcome = await Promise.race([reader.read().then(() => 'data'), new Promise((resolve) => setTimeout(resolve, 400, 'silence'))]);
    expect(outcome).toBe('silence');
    abort.abort();
    await server.close();
  });

  it('stalls a non-stream request: headers, then no body', async () => {
    const { url } = await mock({ stallRate: 1 });
    const abort = new AbortController();
    const response = await post(url, {}, abort.signal);
    expect(response.status).toBe(200);
    const outcome = await Promise.race([response.text().then(() => 'body'), new Promise((resolve) => setTimeout(resolve, 400, 'silence'))]);
    expect(outcome).toBe('silence');
    abort.abort();
  });

  it('breaks the stream after --die-after chunks (SDK errors)', async () => {
    const { url } = await mock({ dieAfter: 2, tokens: 10 });
    const stream = await client(url).chat.completions.create({ model: 'm', messages, stream: true });
    let text = '';
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Error);
    expect(text.split(' ')).toHaveLength(2);
  });

  it('--die-rate breaks that share of answers, each after --die-after chunks (or a random one); the rest complete', async () => {
    expect(parseMockOptions({}).dieRate).toBe(0);
    expect(parseMockOptions({ dieAfter: '3' }).dieRate).toBe(1);
    expect(() => parseMockOptions({ dieRate: '2' })).toThrow(/--die-rate "2": expected a share from 0 to 1/);
    const { url } = await mock({ dieRate: 0.5, dieAfter: 2, tokens: 6, seed: 7 });
    const { url: randomUrl } = await mock({ dieRate: 0.5, tokens: 6, seed: 7 });
    const broken: number[] = [];
    let complete = 0;
    for (const target of [url, url, url, url, url, url, url, url, url, url, randomUrl, randomUrl, randomUrl, randomUrl, randomUrl, randomUrl]) {
      const stream = await client(target).chat.completions.create({ model: 'm', messages, stream: true });
      let text = '';
      const error = await (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })().catch((err: unknown) => err);
      if (error) broken.push(text === '' ? 0 : text.split(' ').length);
      else complete++;
    }
    expect(complete).toBeGreaterThan(0);
    expect(broken.length).toBeGreaterThan(0);
    expect(broken.every((words) => words < 6)).toBe(true);
  });

  it('breaks a non-stream body with --die-after', async () => {
    const { url } = await mock({ dieAfter: 0 });
    const error = await client(url)
      .chat.completions.create({ model: 'm', messages })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Error);
  });

  it('sends invalid JSON events at malformed-rate 1 and goes on', async () => {
    const { url } = await mock({ malformedRate: 1, tokens: 3 });
    const events = await sseData(await post(url, { stream: true }));
    const parses = events.map((e) => {
      try {
        JSON.parse(e);
        return true;
      } catch {
        return false;
      }
    });
    // role chunk, three broken content chunks, finish, [DONE] (not JSON either)
    expect(parses).toEqual([true, false, false, false, true, false]);
    expect(events.at(-1)).toBe('[DONE]');
  });

  it('sends the role chunk at once, before the TTFT delay', async () => {
    const { url } = await mock({ ttftMs: 5000 });
    const abort = new AbortController();
    const response = await post(url, { stream: true }, abort.signal);
    const roleMs = await readUntil(response, (text) => text.includes('"role":"assistant"'));
    expect(roleMs).toBeLessThan(4000);
    abort.abort();
  });

  it('holds the first content chunk for a TTFT drawn from the range', async () => {
    const { url } = await mock({ ttftMs: '300:500', tokens: 2 });
    const started = performance.now();
    await readUntil(await post(url, { stream: true }), (text) => text.includes('"content":"['));
    const firstContentMs = performance.now() - started;
    expect(firstContentMs).toBeGreaterThanOrEqual(290);
    expect(firstContentMs).toBeLessThan(5000);
  });

  it('paces tokens with --tokens-per-s', async () => {
    const { url } = await mock({ tokensPerS: 50, tokens: 6 });
    const started = performance.now();
    await sseData(await post(url, { stream: true }));
    // 5 gaps of 20 ms after the first token
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
  });

  it('repeats the same fault sequence for the same seed', async () => {
    const faults = async () => {
      const { url } = await mock({ seed: 42, failRate: 0.4, malformedRate: 0.3, tokens: 4 });
      const seen: string[] = [];
      for (let i = 0; i < 12; i++) {
        const response = await post(url, { stream: true });
        if (response.status !== 200) {
          seen.push(String(response.status));
          await response.text();
          continue;
        }
        const events = await sseData(response);
        seen.push(events.map((e) => (e.endsWith('}') ? 'ok' : 'bad')).join(','));
      }
      return seen;
    };
    const first = await faults();
    expect(await faults()).toEqual(first);
    expect(first).toContain('503');
    expect(first.some((s) => s.includes('bad'))).toBe(true);
    expect(first.some((s) => s !== '503')).toBe(true);
  });

  it('stops its timers and sockets when the client disconnects or close() is called', async () => {
    const server = await mock({ tokensPerS: 5, tokens: 1000 });
    const abort = new AbortController();
    const response = await post(server.url, { stream: true }, abort.signal);
    await readUntil(response, (text) => text.includes('"content":"['));
    abort.abort();
    const slow = await post(server.url, { stream: true });
    expect(slow.status).toBe(200);
    const started = performance.now();
    await server.close();
    expect(performance.now() - started).toBeLessThan(2000);
    await expect(slow.text()).rejects.toThrow();
  });
});

describe('llm-route mock CLI', () => {
  const bin = `${repoRoot}bin/llm-route.js`;

  it('prints its URL, serves, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [bin, 'mock', '--port', '0', '--name', 'x'], { cwd: repoRoot });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        child.once('exit', () => reject(new Error('mock exited before printing its URL')));
      });
      const url = /^llm-route mock x listening on (http:\/\/\S+\/v1)$/.exec(line)?.[1];
      expect(url, line).toBeDefined();
      const completion = await client(url!).chat.completions.create({ model: 'm', messages });
      expect(completion.choices[0].message.content).toMatch(/^\[x\] /);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('exits 2 with a clear message on a bad flag', async () => {
    const child = spawn(process.execPath, [bin, 'mock', '--fail-rate', '2'], { cwd: repoRoot });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(2);
    expect(stderr).toMatch(/--fail-rate "2": expected a share from 0 to 1/);
  });
});
