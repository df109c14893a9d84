import { describe, expect, it } from 'vitest';
import { completion } from '../../helpers/fake-upstream.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { chat, type RunningProxy } from '../../helpers/proxy.js';

/**
 * A path llm-route does not serve: 404 in the shape of the protocol the path belongs to, and one
 * log line per method and path naming the client (its user-agent), never the query (a Gemini
 * client's key rides there). The server goes on serving.
 */

const h = useHarness();

async function ask(p: RunningProxy, method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${p.origin}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: method === 'GET' ? undefined : '{}',
  });
  return { status: res.status, body: await res.json() };
}

function unknownLines(p: RunningProxy): Array<Record<string, unknown>> {
  return p.logs.filter((line) => line.event === 'unknown_endpoint');
}

describe('a path llm-route does not serve', () => {
  it("is a 404 in its protocol's shape: Gemini's under /v1beta, Ollama's under /api, Anthropic's under /v1/messages, OpenAI's elsewhere", async () => {
    const fake = await h.fake();
    const p = await h.proxy({ tiers: [{ name: 'local', url: fake.url }] });

    const gemini = await ask(p, 'POST', '/v1beta/files');
    expect(gemini.status).toBe(404);
    expect(gemini.body).toMatchObject({ error: { code: 404, status: 'NOT_FOUND', message: expect.stringContaining('/v1beta/files') } });

    const ollama = await ask(p, 'POST', '/api/nothing');
    expect(ollama.status).toBe(404);
    expect(ollama.body).toEqual({ error: expect.stringContaining('/api/nothing') });

    const anthropic = await ask(p, 'POST', '/v1/messages/batches', { 'anthropic-version': '2023-06-01' });
    expect(anthropic.status).toBe(404);
    expect(anthropic.body).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });

    const openai = await ask(p, 'POST', '/v1/audio/speech');
    expect(openai.status).toBe(404);
    expect(openai.body).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringContaining('/v1/audio/speech') } });
  });

  it('is said in the log once per method and path, with the user-agent and the protocol, never the query; the server goes on serving', async () => {
    const fake = await h.fake();
    fake.always((ctx) => ctx.json(200, completion('still here')));
    const p = await h.proxy({ tiers: [{ name: 'local', url: fake.url }] });
    const agent = { 'user-agent': 'GeminiCLI/0.61.0/gemini-2.5-pro (linux; x64)' };

    for (let i = 0; i < 3; i++) expect((await ask(p, 'POST', '/v1beta/cachedContents?key=secret-gemini-key-1', agent)).status).toBe(404);
    expect((await ask(p, 'GET', '/v1beta/cachedContents?key=secret-gemini-key-1', agent)).status).toBe(404);
    expect((await ask(p, 'DELETE', '/api/nothing-here')).status).toBe(404);

    const lines = await waitFor(() => (unknownLines(p).length >= 3 ? unknownLines(p) : undefined), 3000, 'three unknown_endpoint lines');
    const res = await chat(p, {});
    expect(res.status).toBe(200);
    await res.arrayBuffer();

    expect(lines.map(({ method, path, protocol, user_agent }) => ({ method, path, protocol, user_agent }))).toEqual([
      { method: 'POST', path: '/v1beta/cachedContents', protocol: 'gemini', user_agent: agent['user-agent'] },
      { method: 'GET', path: '/v1beta/cachedContents', protocol: 'gemini', user_agent: agent['user-agent'] },
      { method: 'DELETE', path: '/api/nothing-here', protocol: 'ollama', user_agent: expect.any(String) },
    ]);
    for (const line of lines)
      expect(line.message).toBe(`${line.method} ${line.path} is no endpoint of llm-route: answered 404 (said once per method and path)`);
    expect(unknownLines(p)).toHaveLength(3);
    expect(JSON.stringify(p.logs)).not.toContain('secret-gemini-key-1');
  });

  it('a client that names thousands of paths is said for the first thousand only (the log stays bounded)', async () => {
    const fake = await h.fake();
    const p = await h.proxy({ tiers: [{ name: 'local', url: fake.url }] });
    const batch = 50;
    for (let start = 0; start < 1_050; start += batch) {
      await Promise.all(Array.from({ length: batch }, (_, i) => ask(p, 'GET', `/v1/nothing-${start + i}`)));
    }
    // A request's line after them: every line the 1,050 paths made has been read by then.
    const res = await chat(p, { model: 'nope' });
    await res.arrayBuffer();
    await waitFor(() => p.logs.find((line) => line.id === res.headers.get('x-request-id')), 5000, 'the last request line');
    expect(unknownLines(p)).toHaveLength(1_000);
  });
});
