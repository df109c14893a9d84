import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { tokenCounter } from '../../../src/tokens/count.js';
import { completion } from '../../helpers/fake-upstream.js';
import { logLine, useHarness } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';

const h = useHarness();

// Claude Code 2.1.x as it shows itself: its user-agent, and its billing line as the first system block.
const CLAUDE_CODE_AGENT = 'claude-cli/2.1.328 (external, cli)';
const billing = (subagent: boolean) =>
  `x-anthropic-billing-header: cc_version=2.1.328.a1b; cc_entrypoint=cli; cch=00000;${subagent ? ' cc_is_subagent=true;' : ''}`;
const CODEX_HEADERS = { 'user-agent': 'codex_cli_rs/0.77.0 (Ubuntu 24.4.0; x86_64) xterm-256color', originator: 'codex_cli_rs' };

const RULES = `
rules:
  - name: background
    when: { client: claude-code, class: background }
    route: local
  - name: subagent
    when: { class: subagent }
    route: local
  - name: codex-housekeeping
    when: { client: codex, class: background }
    route: local
  - when: { images: true }
    route: cloud
  - name: long
    when: { prompt_tokens: ">= 3000" }
    route: cloud
  - name: thinking
    when: { thinking: true }
    route: cloud
  - name: infra
    when: { header: { X-Team: infra }, protocol: chat }
    route: cloud
  - name: tools-on-gpt
    when: { model: "gpt-4*", tools: true }
    route: cloud
`;

async function routing(rules = RULES): Promise<{ p: RunningProxy; local: Awaited<ReturnType<typeof h.fake>>; cloud: Awaited<ReturnType<typeof h.fake>> }> {
  const local = await h.fake();
  local.always((ctx) => ctx.json(200, completion('from local')));
  const cloud = await h.fake();
  cloud.always((ctx) => ctx.json(200, completion('from cloud')));
  const p = await h.proxy(`version: 1
server: { port: 0 }
providers:
  p_local: { type: openai, base_url: "${local.url}" }
  p_cloud: { type: openai, base_url: "${cloud.url}" }
routes:
  local:
    aliases: ["gpt-*", "local@*"]
    tiers: [{ provider: p_local, model: small }]
  cloud:
    tiers: [{ provider: p_cloud, model: big }]
${rules}`);
  return { p, local, cloud };
}

function openai(p: RunningProxy, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0, defaultHeaders: headers });
}

function anthropic(p: RunningProxy, headers: Record<string, string> = {}): Anthropic {
  return new Anthropic({ baseURL: p.origin, apiKey: 'x', maxRetries: 0, defaultHeaders: { 'user-agent': CLAUDE_CODE_AGENT, ...headers } });
}

/** One Messages turn; the route that took it and the request's id. */
async function claudeTurn(client: Anthropic, model: string, system: string): Promise<{ route: string | null; id: string | null }> {
  const { response } = await client.messages
    .create({ model, max_tokens: 64, system: [{ type: 'text', text: system }], messages: [{ role: 'user', content: 'hi' }] })
    .withResponse();
  return { route: response.headers.get('x-llm-route-route'), id: response.headers.get('x-request-id') };
}

describe('rules: routing by what a request is (real SDKs)', () => {
  it('Claude Code: its labelled background request goes where the rule says, its main turn by model name; the log line names the rule', async () => {
    const { p, local, cloud } = await routing();
    const labelled = anthropic(p, { 'x-claude-code-request-class': 'auxiliary' });
    const background = await claudeTurn(labelled, 'cloud', billing(false));
    expect(background.route).toBe('local');
    expect((await logLine(p, background.id)).rule).toBe('background');
    const main = await claudeTurn(anthropic(p, { 'x-claude-code-request-class': 'main' }), 'cloud', billing(false));
    expect(main.route).toBe('cloud');
    expect((await logLine(p, main.id)).rule).toBeUndefined(); // no rule chose it: the model name did
    // compaction carries the whole history: it stays with the main loop.
    expect((await claudeTurn(anthropic(p, { 'x-claude-code-request-class': 'compaction' }), 'cloud', billing(false))).route).toBe('cloud');
    expect(local.requests.map((r) => r.body.model)).toEqual(['small']);
    expect(cloud.requests.map((r) => r.body.model)).toEqual(['big', 'big']);
  });

  it("Claude Code without labels: the class model names exec sets, and a subagent's billing block", async () => {
    const { p } = await routing();
    const client = anthropic(p);
    expect((await claudeTurn(client, 'cloud@background', billing(false))).route).toBe('local');
    const subagent = await claudeTurn(client, 'cloud', billing(true));
    expect(subagent.route).toBe('local');
    expect((await logLine(p, subagent.id)).rule).toBe('subagent');
    expect((await claudeTurn(client, 'cloud', billing(false))).route).toBe('cloud');
    // Another client sending the same class model name: its class is read from the name too.
    expect((await claudeTurn(new Anthropic({ baseURL: p.origin, apiKey: 'x', maxRetries: 0 }), 'cloud@subagent', 'be brief')).route).toBe('local');
  });

  it('count_tokens goes by the same rules as the request it counts for', async () => {
    const { p } = await routing();
    const client = anthropic(p, { 'x-claude-code-request-class': 'auxiliary' });
    const { response } = await client.messages.countTokens({ model: 'cloud', messages: [{ role: 'user', content: 'hello there' }] }).withResponse();
    expect(response.headers.get('x-llm-route-route')).toBe('local');
    const main = await anthropic(p)
      .messages.countTokens({ model: 'cloud', messages: [{ role: 'user', content: 'hello there' }] })
      .withResponse();
    expect(main.response.headers.get('x-llm-route-route')).toBe('cloud');
  });

  it('Codex: its user-agent identifies it, and x-openai-subagent: compact is background (Responses API)', async () => {
    const { p, local, cloud } = await routing();
    const compact = await openai(p, { ...CODEX_HEADERS, 'x-openai-subagent': 'compact' })
      .responses.create({ model: 'cloud', input: 'summarise' })
      .withResponse();
    expect(compact.response.headers.get('x-llm-route-route')).toBe('local');
    expect((await logLine(p, compact.response.headers.get('x-request-id'))).rule).toBe('codex-housekeeping');
    const review = await openai(p, { ...CODEX_HEADERS, 'x-openai-subagent': 'review' })
      .responses.create({ model: 'cloud', input: 'review' })
      .withResponse();
    expect(review.response.headers.get('x-llm-route-route')).toBe('local'); // a subagent
    const main = await openai(p, CODEX_HEADERS).responses.create({ model: 'cloud', input: 'write code' }).withResponse();
    expect(main.response.headers.get('x-llm-route-route')).toBe('cloud');
    // A client nothing identifies is other / main: the same compact header means nothing from it.
    const other = await openai(p, { 'x-openai-subagent': 'compact' }).responses.create({ model: 'cloud', input: 'hi' }).withResponse();
    expect(other.response.headers.get('x-llm-route-route')).toBe('cloud');
    expect(local.requests).toHaveLength(2);
    expect(cloud.requests).toHaveLength(2);
  });

  it("images anywhere (a tool result's too), thinking, tools on a model glob and a header each send a request to the cloud", async () => {
    const { p } = await routing();
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const routeOf = async (made: Promise<{ response: Response }>) => (await made).response.headers.get('x-llm-route-route');
    const chatImage = openai(p)
      .chat.completions.create({
        model: 'gpt-4o',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is it' },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
            ],
          },
        ],
      })
      .withResponse();
    expect(await routeOf(chatImage)).toBe('cloud');
    const toolResultImage = anthropic(p)
      .messages.create({
        model: 'local',
        max_tokens: 32,
        messages: [
          { role: 'user', content: 'take a screenshot' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] },
            ],
          },
        ],
        tools: [{ name: 'screenshot', input_schema: { type: 'object', properties: {} } }],
      })
      .withResponse();
    expect(await routeOf(toolResultImage)).toBe('cloud');
    expect(
      await routeOf(
        openai(p)
          .chat.completions.create({ model: 'local', reasoning_effort: 'high', messages: [{ role: 'user', content: 'think' }] })
          .withResponse(),
      ),
    ).toBe('cloud');
    expect(
      await routeOf(
        openai(p)
          .chat.completions.create({ model: 'local', reasoning_effort: 'minimal', messages: [{ role: 'user', content: 'quick' }] })
          .withResponse(),
      ),
    ).toBe('local');
    expect(
      await routeOf(
        anthropic(p)
          .messages.create({
            model: 'local',
            max_tokens: 2048,
            thinking: { type: 'enabled', budget_tokens: 1024 },
            messages: [{ role: 'user', content: 'think' }],
          })
          .withResponse(),
      ),
    ).toBe('cloud');
    const tool = { type: 'function' as const, function: { name: 'f', parameters: { type: 'object', properties: {} } } };
    expect(
      await routeOf(
        openai(p)
          .chat.completions.create({ model: 'gpt-4.1', tools: [tool], messages: [{ role: 'user', content: 'call f' }] })
          .withResponse(),
      ),
    ).toBe('cloud');
    expect(
      await routeOf(
        openai(p)
          .chat.completions.create({ model: 'gpt-5', tools: [tool], messages: [{ role: 'user', content: 'call f' }] })
          .withResponse(),
      ),
    ).toBe('local');
    expect(
      await routeOf(
        openai(p, { 'x-team': 'infra' })
          .chat.completions.create({ model: 'local', messages: [{ role: 'user', content: 'hi' }] })
          .withResponse(),
      ),
    ).toBe('cloud');
    expect(
      await routeOf(
        openai(p, { 'x-team': 'Infra' })
          .chat.completions.create({ model: 'local', messages: [{ role: 'user', content: 'hi' }] })
          .withResponse(),
      ),
    ).toBe('local');
  });

  it('prompt_tokens: a long history goes to the cloud, a short one by its model', async () => {
    const { p } = await routing();
    const long = Array.from({ length: 4000 }, (_, i) => `word${i % 97}`).join(' ');
    const made = await openai(p)
      .chat.completions.create({ model: 'local', messages: [{ role: 'user', content: long }] })
      .withResponse();
    expect(made.response.headers.get('x-llm-route-route')).toBe('cloud');
    expect((await logLine(p, made.response.headers.get('x-request-id'))).rule).toBe('long');
    // Over the bar in bytes, under it in tokens (one token a word): counted, and not long.
    const wordy = Array.from({ length: 1200 }, () => 'the').join(' ');
    expect(Buffer.byteLength(wordy)).toBeGreaterThan(3000);
    expect((await tokenCounter()).count(wordy)).toBeLessThan(2000);
    const counted = await openai(p)
      .chat.completions.create({ model: 'local', messages: [{ role: 'user', content: wordy }] })
      .withResponse();
    expect(counted.response.headers.get('x-llm-route-route')).toBe('local');
  });

  it('no rule matches: the model name decides, as without rules; an unknown one is still a 404', async () => {
    const { p } = await routing();
    const plain = await openai(p)
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(plain.response.headers.get('x-llm-route-route')).toBe('local');
    await expect(openai(p).chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 404 });
  });
});
