import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicTextStream } from '../../helpers/anthropic-upstream.js';
import { buildPrivateCli, repoRoot, runCli } from '../../helpers/cli.js';
import type { Script } from '../../helpers/fake-upstream.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { ollamaWhole } from '../../helpers/ollama-upstream.js';
import { MESSAGES_TOOLS, ollamaContent, piecesOf, recordingFetch } from '../../helpers/tool-text-kit.js';
import { HERMES, QWEN3_XML } from '../../helpers/tool-text-forms.js';

// What ships: `llm-route serve` from the bundle, with examples/claude-code-local-qwen.yaml,
// its local tier a fake Ollama and its cloud tier a fake Anthropic; Claude Code's protocol.
// (The bundle loads ajv and jsonrepair from node_modules on first use.)
const h = useHarness();
let cli: ReturnType<typeof buildPrivateCli>;
beforeAll(() => {
  cli = buildPrivateCli();
}, 60_000);
afterAll(() => cli?.remove());

async function serveExample() {
  const ollama = await h.fake();
  const anthropic = await h.fake();
  const proc = runCli(cli.bin, ['serve', '--no-ui', '-c', join(repoRoot, 'examples/claude-code-local-qwen.yaml')], {
    LLM_ROUTE_PORT: '0',
    OLLAMA_URL: `http://127.0.0.1:${ollama.port}`,
    ANTHROPIC_URL: `http://127.0.0.1:${anthropic.port}`,
    ANTHROPIC_API_KEY: 'sk-ant-test',
    LLM_ROUTE_CONFIG: undefined,
  });
  h.defer(() => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
  });
  // Only the chat calls are scripted: discovery (/api/show, /api/ps) gets Ollama's 404.
  const chats: Script[] = [];
  ollama.always((ctx) => (ctx.req.url === '/api/chat' && chats.length > 0 ? (chats.shift() as Script)(ctx) : ctx.json(404, { error: 'not found' })));
  anthropic.always((ctx) => (ctx.req.url === '/v1/messages' ? anthropicTextStream(['Done', ' by the cloud.'])(ctx) : ctx.json(404, { error: 'not found' })));
  const listening = JSON.parse(await proc.waitForLine((l) => l.includes('"listening"'), 15_000)) as { url: string };
  return { chats, anthropic, proc, origin: new URL(listening.url).origin };
}

describe('the bundled serve with examples/claude-code-local-qwen.yaml', () => {
  it("turns Qwen3-Coder's XML into a tool_use, fails an unknown tool over to Anthropic unseen, repairs a whole answer", async () => {
    const { chats, anthropic, proc, origin } = await serveExample();
    const seen = recordingFetch();
    const client = new Anthropic({ baseURL: origin, apiKey: 'x', maxRetries: 0, fetch: seen.fetch });
    const ask = { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'read /tmp/a.txt' }], tools: MESSAGES_TOOLS };

    chats.push(ollamaContent(piecesOf(QWEN3_XML, 6)));
    const first = await client.messages.stream(ask).finalMessage();
    expect(first.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'Read', input: { file_path: '/tmp/a.txt', limit: 20 } }]);

    chats.push(ollamaContent(piecesOf(HERMES.replace('Bash', 'Write'))));
    const second = await client.messages.stream(ask).finalMessage();
    expect(second.content).toMatchObject([{ type: 'text', text: 'Done by the cloud.' }]);
    expect(seen.bodies[1]).not.toContain('Write');
    // (The first /v1/messages is the provider's own one-token check; the answer is the one with tools.)
    const asked = anthropic.requests.filter((r) => r.url === '/v1/messages' && 'tools' in r.body);
    expect(asked).toHaveLength(1);
    const cloudAsked = asked[0].body;
    expect(cloudAsked).toMatchObject({ model: 'claude-sonnet-4-5', tools: MESSAGES_TOOLS });
    expect(JSON.stringify(cloudAsked.messages)).toContain('read /tmp/a.txt');

    chats.push((ctx) =>
      ctx.json(200, ollamaWhole({ content: "<tool_call>\n{'name': 'Bash', 'arguments': {'command': 'ls', 'timeout': '30',}}\n</tool_call>" })),
    );
    const third = await client.messages.create(ask);
    expect(third.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'Bash', input: { command: 'ls', timeout: 30 } }]);
    expect(third.stop_reason).toBe('tool_use');

    const requestLines = () => proc.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'request');
    await waitFor(() => requestLines().length === 3, 5000, 'three request lines');
    const lines = requestLines();
    expect(lines.map((l) => (l.tool_text as { result: string }).result)).toEqual(['recovered', 'failed_over', 'repaired']);
  }, 60_000);
});
