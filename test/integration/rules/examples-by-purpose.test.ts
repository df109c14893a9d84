import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import { resetTierFacts } from '../../../src/fit/tier-facts.js';
import { anthropicMessage } from '../../helpers/anthropic-upstream.js';
import { pathOf } from '../../helpers/fit-servers.js';
import { useHarness } from '../../helpers/harness.js';
import { ollamaWhole } from '../../helpers/ollama-upstream.js';

const h = useHarness();
beforeEach(() => resetTierFacts());

const examples = join(import.meta.dirname, '../../../examples');
const CLAUDE_CODE = { 'user-agent': 'claude-cli/2.1.328 (external, cli)' };

/** An Ollama fake that answers /api/chat and documents nothing else (window unknown). */
async function ollama() {
  const fake = await h.fake();
  fake.always((ctx) =>
    pathOf(ctx) === '/api/chat' ? ctx.json(200, ollamaWhole({ role: 'assistant', content: 'from ollama' })) : ctx.json(404, { error: 'not found' }),
  );
  return fake;
}

// The README's recipes, as written, with each provider's address pointed at a fake.
describe('examples/ for routing by purpose, run against fakes', () => {
  it("claude-code-by-purpose.yaml: background and short subagents on the local model; the main loop, images and a subagent's long history on Anthropic", async () => {
    const local = await ollama();
    const anthropic = await h.fake();
    // It reports the prompt it read, whole (a fake on loopback counts as local: a low figure would teach it a window).
    const read = (body: Record<string, unknown>): number => JSON.stringify(body.messages).split('word').length + 10;
    anthropic.always((ctx) =>
      ctx.json(200, anthropicMessage([{ type: 'text', text: 'from anthropic' }], 'end_turn', { input_tokens: read(ctx.body), output_tokens: 5 })),
    );
    const yaml = readFileSync(join(examples, 'claude-code-by-purpose.yaml'), 'utf8')
      .replace('http://127.0.0.1:11434', `http://127.0.0.1:${local.port}`)
      .replace('https://api.anthropic.com', anthropic.url);
    const p = await h.proxy(yaml, { env: { ANTHROPIC_API_KEY: 'sk-ant-test' } });
    const tierOf = async (headers: Record<string, string>, model: string, content: Anthropic.MessageParam['content']) => {
      const client = new Anthropic({ baseURL: p.origin, apiKey: 'x', maxRetries: 0, defaultHeaders: { ...CLAUDE_CODE, ...headers } });
      const { response } = await client.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content }] }).withResponse();
      return response.headers.get('x-llm-route-tier');
    };
    // As `exec` sets Claude Code up: claude (main), claude@background, claude@subagent, and the labels.
    expect(await tierOf({ 'x-claude-code-request-class': 'auxiliary' }, 'claude@background', 'a title for this chat')).toBe('local');
    expect(await tierOf({ 'x-claude-code-request-class': 'main' }, 'claude', 'fix the bug')).toBe('anthropic');
    expect(await tierOf({ 'x-claude-code-request-class': 'subagent' }, 'claude@subagent', 'find the file')).toBe('local');
    expect(await tierOf({ 'x-claude-code-request-class': 'subagent' }, 'claude@subagent', 'word '.repeat(30_000))).toBe('anthropic');
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    expect(
      await tierOf({ 'x-claude-code-request-class': 'auxiliary' }, 'claude@background', [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
      ]),
    ).toBe('anthropic');
    expect(local.requests.filter((r) => r.url === '/api/chat').map((r) => r.body.model)).toEqual(['qwen3:8b', 'qwen3:8b']);
    expect(anthropic.requests.map((r) => r.body.model)).toEqual(['claude-sonnet-4-5', 'claude-sonnet-4-5', 'claude-sonnet-4-5']);
  });

  it("local-only.yaml: the private route and the legal team's requests stay local; the cloud provider is never sent one", async () => {
    const local = await ollama();
    const cloud = await h.fake();
    cloud.always((ctx) => ctx.json(500, { error: { message: 'must never be reached' } }));
    const yaml = readFileSync(join(examples, 'local-only.yaml'), 'utf8')
      .replace('http://127.0.0.1:11434', `http://127.0.0.1:${local.port}`)
      .replace('https://api.openai.com/v1', `http://cloud-api.example:${cloud.port}/v1`);
    const p = await h.proxy(yaml, { env: { OPENAI_API_KEY: 'sk-test' } });
    const openai = (headers: Record<string, string> = {}) => new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0, defaultHeaders: headers });
    const made = await openai()
      .chat.completions.create({ model: 'private', messages: [{ role: 'user', content: 'the contract' }] })
      .withResponse();
    expect(made.response.headers.get('x-llm-route-tier')).toBe('ollama');
    const legal = await openai({ 'x-team': 'legal' })
      .chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'the contract' }] })
      .withResponse();
    expect(legal.response.headers.get('x-llm-route-route')).toBe('private');
    expect(cloud.requests).toEqual([]);
  });
});
