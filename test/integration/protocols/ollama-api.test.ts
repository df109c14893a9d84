import { Ollama } from 'ollama';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { anthropicTextStream } from '../../helpers/anthropic-upstream.js';
import { chunk, completion, type FakeUpstream, healthyStream } from '../../helpers/fake-upstream.js';
import { readAll, requestLog, useHarness, waitFor } from '../../helpers/harness.js';
import { rawRequest } from '../../helpers/raw-client.js';

/**
 * Ollama's API at its edges: the probes and the routes as models (what VS Code's Copilot asks,
 * in its order), the endpoints llm-route does not offer, errors before and after the first line,
 * the browser guard, the token, the limits and rules, all in Ollama's shapes.
 */
const h = useHarness();

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** Routes `chat` (a local tier that knows its window and takes images, then a Claude tier) and `small` (no tools). */
async function catalogProxy(server: Record<string, unknown> = {}, top: Record<string, unknown> = {}) {
  const local = await h.fake();
  const claude = await h.fake();
  const yaml = stringify({
    version: 1,
    server: { port: 0, ...server },
    providers: {
      local: { type: 'openai', base_url: local.url },
      claude: { type: 'anthropic', base_url: `http://127.0.0.1:${claude.port}`, api_key: 'sk-ant-test' },
    },
    routes: {
      chat: {
        aliases: ['gpt-4o', 'claude-*'],
        tiers: [
          { provider: 'local', model: 'qwen', context: 32768, vision: true },
          { provider: 'claude', model: 'claude-sonnet-4-5', context: 200000 },
        ],
      },
      small: { tiers: [{ provider: 'local', model: 'tiny', context: 2048, tools: false, vision: false }] },
    },
    ...top,
  });
  const proxy = await h.proxy(yaml);
  return { local, claude, proxy, port: Number(new URL(proxy.origin).port), ollama: new Ollama({ host: proxy.origin }) };
}

/** VS Code's Copilot: its fetcher's user-agent and library header (microsoft/vscode-copilot-chat, nodeFetcher.ts). */
const COPILOT = { 'User-Agent': 'GitHubCopilotChat/0.42.0', 'X-VSCode-User-Agent-Library-Version': 'node-fetch' };

/** Copilot's own version test (ollamaProvider.ts `_isVersionSupported`, minimum 0.6.4). */
function copilotAccepts(version: string): boolean {
  const current = version.split('.').map((n) => Number.parseInt(n, 10));
  const minimum = [0, 6, 4];
  for (let i = 0; i < Math.max(current.length, minimum.length); i++) {
    if ((current[i] || 0) > minimum[i]) return true;
    if ((current[i] || 0) < (minimum[i] || 0)) return false;
  }
  return true;
}

describe("the probes and the routes as Ollama's models", () => {
  it('GET and HEAD / say "Ollama is running"; /api/version a version Copilot accepts', async () => {
    const { proxy, port } = await catalogProxy();
    const root = await fetch(`${proxy.origin}/`);
    expect([root.status, root.headers.get('content-type'), await root.text()]).toEqual([200, 'text/plain; charset=utf-8', 'Ollama is running']);
    const head = await rawRequest(port, { head: `HEAD / HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nconnection: close`, body: [] });
    expect(head.status).toBe(200);
    expect(head.text.endsWith('\r\n\r\n')).toBe(true);
    const version = (await (await fetch(`${proxy.origin}/api/version`)).json()) as { version: string };
    expect(copilotAccepts(version.version)).toBe(true);
    expect(copilotAccepts('0.6.3')).toBe(false);
  });

  it('list, show and ps (ollama-js): capabilities and the largest window per route, plain aliases listed, globs not', async () => {
    const { local, ollama } = await catalogProxy();
    const listed = await ollama.list();
    expect(listed.models.map((m) => m.name)).toEqual(['chat', 'gpt-4o', 'small']);
    expect(listed.models[0]).toMatchObject({ model: 'chat', size: 0, details: { format: 'llm-route', family: 'llm-route' } });
    expect(listed.models[0].digest).toMatch(/^[0-9a-f]{64}$/);

    const chat = await ollama.show({ model: 'chat' });
    expect(chat.capabilities).toEqual(['completion', 'tools', 'vision', 'thinking']);
    expect(chat.model_info).toEqual({ 'general.architecture': 'llm-route', 'general.basename': 'chat', 'llm-route.context_length': 200000 });
    const small = await ollama.show({ model: 'small' });
    expect(small.capabilities).toEqual(['completion']);
    // ollama-js types model_info as a Map; on the wire it is a plain object.
    expect((small.model_info as unknown as Record<string, unknown>)['llm-route.context_length']).toBe(2048);
    await expect(ollama.show({ model: 'nope' })).rejects.toMatchObject({ status_code: 404, error: "model 'nope' not found" });

    // Nothing has answered yet: no route's first tier is known to be loaded.
    expect((await ollama.ps()).models).toEqual([]);
    local.always((ctx) => ctx.json(200, completion('hi')));
    await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    const running = await ollama.ps();
    expect(running.models.map((m) => [m.name, (m as typeof m & { context_length: number }).context_length])).toEqual([
      ['chat', 200000],
      ['gpt-4o', 200000],
    ]);
  });

  it("VS Code's Copilot probe sequence, replayed as its Ollama provider sends it: version, tags, show per model, then its chat on /v1 with an empty bearer", async () => {
    const { local, proxy } = await catalogProxy();
    local.always(healthyStream(['Hi', ' there']));
    const base = proxy.origin;
    const version = (await (await fetch(`${base}/api/version`, { method: 'GET', headers: COPILOT })).json()) as { version: string };
    expect(copilotAccepts(version.version)).toBe(true);
    const tags = (await (await fetch(`${base}/api/tags`, { method: 'GET', headers: COPILOT })).json()) as { models: Array<{ model: string }> };
    const known: Record<string, { maxInputTokens: number; maxOutputTokens: number; name: string; toolCalling: boolean; vision: boolean }> = {};
    for (const model of tags.models) {
      const res = await fetch(`${base}/api/show`, {
        method: 'POST',
        headers: { ...COPILOT, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: model.model }),
      });
      const info = (await res.json()) as { capabilities: string[]; model_info: Record<string, unknown> };
      // ollamaProvider.ts `_getOllamaModelInfo`, as Copilot computes it.
      const contextWindow = (info.model_info[`${info.model_info['general.architecture']}.context_length`] as number | undefined) ?? 4096;
      const outputTokens = contextWindow < 4096 ? Math.floor(contextWindow / 2) : 4096;
      known[model.model] = {
        name: info.model_info['general.basename'] as string,
        maxOutputTokens: outputTokens,
        maxInputTokens: contextWindow - outputTokens,
        vision: info.capabilities.includes('vision'),
        toolCalling: info.capabilities.includes('tools'),
      };
    }
    expect(known).toEqual({
      chat: { name: 'chat', maxOutputTokens: 4096, maxInputTokens: 195904, vision: true, toolCalling: true },
      'gpt-4o': { name: 'gpt-4o', maxOutputTokens: 4096, maxInputTokens: 195904, vision: true, toolCalling: true },
      small: { name: 'small', maxOutputTokens: 1024, maxInputTokens: 1024, vision: false, toolCalling: false },
    });
    // Agent mode lists only the models with tool calling; its chat goes to /v1/chat/completions on the same base URL.
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...COPILOT, 'Content-Type': 'application/json', Authorization: 'Bearer ' },
      body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hello' }], max_tokens: 4096 }),
    });
    expect(res.status).toBe(200);
    const { text } = await readAll(res);
    expect(text).toContain('"content":" there"');
    expect(await requestLog(proxy)).toMatchObject({ protocol: 'chat', route: 'chat', tier: 'local', outcome: 'ok' });
    // The empty bearer is no credential: nothing of it reaches the tier.
    expect(local.requests.at(-1)!.headers.authorization).toBeUndefined();
  });
});

const WHAT: Record<string, string> = {
  '/api/pull': 'pulling models',
  '/api/push': 'pushing models',
  '/api/create': 'creating models',
  '/api/copy': 'copying models',
  '/api/delete': 'deleting models',
};

describe('what llm-route does not offer of Ollama', () => {
  it('model management answers 501 in its error shape; ollama-js says why (embeddings to a chat route: a 400 naming its kind)', async () => {
    const { proxy, ollama } = await catalogProxy();
    for (const [method, path] of [
      ['POST', '/api/pull'],
      ['POST', '/api/push'],
      ['POST', '/api/create'],
      ['POST', '/api/copy'],
      ['DELETE', '/api/delete'],
    ]) {
      const res = await fetch(`${proxy.origin}${path}`, { method, body: '{"model":"chat"}' });
      expect(res.status, path).toBe(501);
      expect(((await res.json()) as { error: string }).error).toBe(
        `llm-route routes models (/api/chat, /api/generate, /api/embed), not their files; ${path} (${WHAT[path]}) is not supported`,
      );
    }
    await expect(ollama.embed({ model: 'chat', input: 'x' })).rejects.toThrow(/route "chat" is a chat route: embeddings need a route of kind: embeddings/);
    await expect(ollama.pull({ model: 'llama3.2' })).rejects.toThrow(/\/api\/pull \(pulling models\) is not supported/);
    const wrong = await fetch(`${proxy.origin}/api/tags`, { method: 'POST' });
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect(await wrong.json()).toEqual({ error: '/api/tags accepts GET, HEAD, not POST' });
    const unknown = await fetch(`${proxy.origin}/api/blobs/sha256:00`);
    expect(unknown.status).toBe(404);
    // Every protocol's model endpoint is named, Ollama's among them.
    expect(((await unknown.json()) as { error: string }).error).toMatch(
      /^no endpoint GET \/api\/blobs\/sha256:00; try POST .*\/api\/chat\b.*:generateContent$/,
    );
  });
});

describe("errors in Ollama's shape", () => {
  it('before the first line: an unknown route (404), a body Ollama would refuse (400), any content type read as JSON', async () => {
    const { local, proxy, ollama } = await catalogProxy();
    await expect(ollama.chat({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status_code: 404 });
    const bad = await fetch(`${proxy.origin}/api/chat`, { method: 'POST', body: JSON.stringify({ model: 'chat', messages: 'hi' }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: '"messages": "messages" must be an array' });
    const images = await fetch(`${proxy.origin}/api/generate`, { method: 'POST', body: JSON.stringify({ model: 'chat', prompt: 'x', images: [1] }) });
    expect(images.status).toBe(400);
    expect(((await images.json()) as { error: string }).error).toContain('each image must be a base64 string');
    // curl -d sends a form's content type: Ollama reads the body as JSON all the same, and so does llm-route.
    local.always((ctx) => ctx.json(200, completion('ok')));
    const form = await fetch(`${proxy.origin}/api/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: JSON.stringify({ model: 'chat', prompt: 'hi', stream: false }),
    });
    expect(await form.json()).toMatchObject({ response: 'ok', done: true });
  });

  it('every tier failing before the first line: one {"error"} with a 502, nothing streamed', async () => {
    const { local, claude, ollama } = await catalogProxy();
    local.always((ctx) => ctx.error(500, 'local is down'));
    claude.always((ctx) => ctx.json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    const failed = await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream: true }).then(
      () => null,
      (error: { status_code: number; error: string }) => error,
    );
    expect(failed?.status_code).toBeGreaterThanOrEqual(500);
    expect(failed?.error).toMatch(/every tier of route "chat" failed/);
  });

  it('after the first line: a last {"error"} line ends the stream, and ollama-js throws it', async () => {
    const { local, proxy, ollama } = await catalogProxy();
    local.always(async (ctx) => {
      ctx.startStream();
      ctx.event(chunk({ role: 'assistant', content: 'Half' }));
      await ctx.wait(20);
      ctx.destroy();
    });
    const res = await fetch(`${proxy.origin}/api/chat`, {
      method: 'POST',
      body: JSON.stringify({ model: 'small', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const { text } = await readAll(res);
    const sent = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(sent[0]).toMatchObject({ message: { content: 'Half' }, done: false });
    expect(sent.at(-1)).toEqual({ error: expect.stringMatching(/^llm-route: /) });
    expect(sent.some((line) => line.done === true)).toBe(false);
    const stream = await ollama.chat({ model: 'small', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const got: string[] = [];
    await expect(
      (async () => {
        for await (const part of stream) got.push(part.message.content);
      })(),
    ).rejects.toThrow(/^llm-route: /);
    expect(got).toEqual(['Half']);
  });
});

describe('the guards every endpoint has', () => {
  it("a web page is refused (Origin, foreign Host) in Ollama's shape, and nothing reaches a tier", async () => {
    const { local, port } = await catalogProxy();
    const body = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    const page = await rawRequest(port, {
      head: `POST /api/chat HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\norigin: https://evil.example\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\nconnection: close`,
      body: [body],
    });
    expect(page.status).toBe(403);
    expect((page.json as { error: string }).error).toMatch(/requests from web pages are refused/);
    const rebinding = await rawRequest(port, { head: `GET /api/tags HTTP/1.1\r\nhost: evil.example:${port}\r\nconnection: close`, body: [] });
    expect(rebinding.status).toBe(403);
    expect((rebinding.json as { error: string }).error).toMatch(/is not this machine/);
    expect(local.requests.filter((r) => r.url.includes('chat'))).toEqual([]);
  });

  it("with server.auth_token: the token opens every endpoint, an empty bearer (Copilot's) does not; a body over max_body_bytes is 413", async () => {
    const { local, proxy } = await catalogProxy({ auth_token: 'secret-token', max_body_bytes: 4096 });
    local.always((ctx) => ctx.json(200, completion('ok')));
    const empty = await fetch(`${proxy.origin}/api/tags`, { headers: { authorization: 'Bearer ' } });
    expect(empty.status).toBe(401);
    const said = ((await empty.json()) as { error: string }).error;
    expect(said).toMatch(/missing or wrong token/);
    expect(said).not.toContain('secret-token');
    const ollama = new Ollama({ host: proxy.origin, headers: { Authorization: 'Bearer secret-token' } });
    expect((await ollama.list()).models.length).toBe(3);
    expect((await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] })).message.content).toBe('ok');
    await expect(ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'x'.repeat(5000) }] })).rejects.toMatchObject({ status_code: 413 });
  });

  it('without a token an empty bearer is no error', async () => {
    const { local, proxy } = await catalogProxy();
    local.always((ctx) => ctx.json(200, completion('ok')));
    const res = await fetch(`${proxy.origin}/api/chat`, {
      method: 'POST',
      headers: { authorization: 'Bearer ' },
      body: JSON.stringify({ model: 'chat', stream: false, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
  });
});

describe('rules see Ollama requests as the client ollama, their images and thinking', () => {
  async function ruled() {
    const upstreams: Record<string, FakeUpstream> = {};
    for (const name of ['main', 'ollama', 'vision', 'thinker']) {
      upstreams[name] = await h.fake();
      upstreams[name].always((ctx) => ctx.json(200, completion(name)));
    }
    const yaml = stringify({
      version: 1,
      server: { port: 0 },
      providers: Object.fromEntries(Object.entries(upstreams).map(([name, fake]) => [name, { type: 'openai', base_url: fake.url }])),
      routes: Object.fromEntries(Object.keys(upstreams).map((name) => [name, { tiers: [{ provider: name, model: name }] }])),
      rules: [
        { when: { images: true }, route: 'vision' },
        { when: { thinking: true }, route: 'thinker' },
        { when: { client: 'ollama' }, route: 'ollama' },
      ],
    });
    const proxy = await h.proxy(yaml);
    return { proxy, ollama: new Ollama({ host: proxy.origin }) };
  }

  it('ollama-js on /api/chat, Copilot on /v1 (by its user-agent); images in `images`, `think`', async () => {
    const { proxy, ollama } = await ruled();
    const said = async (body: Parameters<Ollama['chat']>[0]) => (await ollama.chat({ ...body, stream: false })).message.content;
    expect(await said({ model: 'main', messages: [{ role: 'user', content: 'hi' }] })).toBe('ollama');
    expect(await said({ model: 'main', messages: [{ role: 'user', content: 'see', images: [PIXEL] }] })).toBe('vision');
    expect(await said({ model: 'main', messages: [{ role: 'user', content: 'think' }], think: true })).toBe('thinker');
    expect(await said({ model: 'main', messages: [{ role: 'user', content: 'no' }], think: false })).toBe('ollama');
    const generated = await ollama.generate({ model: 'main', prompt: 'see', images: [PIXEL], stream: false });
    expect(generated.response).toBe('vision');
    const viaV1 = async (agent: string) => {
      const res = await fetch(`${proxy.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': agent },
        body: JSON.stringify({ model: 'main', messages: [{ role: 'user', content: 'hi' }] }),
      });
      return ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content;
    };
    expect(await viaV1('GitHubCopilotChat/0.42.0')).toBe('ollama');
    expect(await viaV1('curl/8.5.0')).toBe('main');
    await waitFor(() => proxy.logs.filter((l) => l.event === 'request').length === 7 || undefined);
  });
});

describe('an Anthropic tier behind /api/generate', () => {
  it('streams the answer in `response` lines', async () => {
    const claude = await h.fake();
    claude.always(anthropicTextStream(['Blue', ' light.']));
    const proxy = await h.proxy({
      tiers: [{ name: 'claude', url: `http://127.0.0.1:${claude.port}`, type: 'anthropic', model: 'claude-sonnet-4-5', api_key: 'k' }],
    });
    const stream = await new Ollama({ host: proxy.origin }).generate({ model: 'chat', prompt: 'Why is the sky blue?', stream: true });
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(parts.map((p) => p.response).join('')).toBe('Blue light.');
    expect(claude.requests[0].body).toMatchObject({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Why is the sky blue?' }] }],
    });
  });
});
