import { describe, expect, it } from 'vitest';
import { completion } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, requestLog, useHarness } from '../../helpers/harness.js';
import { ollamaWhole } from '../../helpers/ollama-upstream.js';
import {
  anthropicClient,
  CHAT_TOOLS,
  MESSAGES_TOOLS,
  ollamaContent,
  openaiClient,
  piecesOf,
  recordingFetch,
  RESPONSES_TOOLS,
  sseContent,
} from '../../helpers/tool-text-kit.js';
import { HERMES, MISTRAL, PYTHON_TAG, QWEN3_XML } from '../../helpers/tool-text-forms.js';

// docs/tool-text.md: a local model's call written as text reaches each client
// as a native call of its own protocol, streamed and whole; the raw form never reaches it.
const h = useHarness();

async function localAndCloud(type: 'openai' | 'ollama') {
  const local = await h.fake();
  const cloud = await h.fake();
  const proxy = await h.proxy({
    tiers: [
      { name: 'local', url: type === 'ollama' ? `http://127.0.0.1:${local.port}` : local.url, type, model: 'qwen2.5-coder:7b' },
      { name: 'cloud', url: cloud.url },
    ],
  });
  return { local, cloud, proxy };
}

describe('tool calls written as text become native calls', () => {
  it('Chat client, OpenAI-compatible local server (a relay): Hermes <tool_call> split across chunks → tool_calls, call_ id, finish tool_calls', async () => {
    const { local, cloud, proxy } = await localAndCloud('openai');
    local.always(sseContent(piecesOf(`\n${HERMES}`)));
    const seen = recordingFetch();
    const stream = await openaiClient(proxy, seen.fetch).chat.completions.create({
      model: 'chat',
      stream: true,
      messages: [{ role: 'user', content: 'list files' }],
      tools: CHAT_TOOLS,
    });
    const calls: Array<{ id?: string; name?: string; args: string }> = [];
    let finish: string | null = null;
    for await (const c of stream) {
      for (const call of c.choices[0]?.delta.tool_calls ?? []) {
        if (call.id) calls[call.index] = { id: call.id, name: call.function?.name, args: '' };
        calls[call.index].args += call.function?.arguments ?? '';
      }
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(calls).toHaveLength(1);
    expect(calls[0].id).toMatch(/^call_/);
    expect(calls[0].name).toBe('Bash');
    expect(JSON.parse(calls[0].args)).toEqual({ command: 'ls -la' });
    expect(finish).toBe('tool_calls');
    expect(seen.bodies[0]).not.toContain('tool_call>');
    expect(seen.bodies[0]).not.toContain('ls -la\\"}}');
    expect(cloud.requests).toHaveLength(0);
    const line = await requestLog(proxy);
    expect(line.tool_text).toEqual({ format: 'hermes', calls: 1, repaired: false, result: 'recovered' });
    const { samples } = await fetchMetrics(proxy);
    expect(metric(samples, 'llm_tool_text_total', { route: 'chat', tier: 'local', format: 'hermes', result: 'recovered' })).toBe(1);
  });

  it('Messages client (Anthropic SDK), Ollama /api/chat: Qwen3-Coder XML → a tool_use block, toolu_ id, stop_reason tool_use', async () => {
    const { local, proxy } = await localAndCloud('ollama');
    local.always(ollamaContent(piecesOf(QWEN3_XML, 5)));
    const seen = recordingFetch();
    const message = await anthropicClient(proxy, seen.fetch)
      .messages.stream({ model: 'chat', max_tokens: 512, messages: [{ role: 'user', content: 'read it' }], tools: MESSAGES_TOOLS })
      .finalMessage();
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'Read', input: { file_path: '/tmp/a.txt', limit: 20 } }]);
    expect(seen.bodies[0]).not.toContain('<function=');
    expect(seen.bodies[0]).not.toContain('parameter');
  });

  it("reasoning before the form is held with it and kept: a thinking block, then the tool_use (Ollama's thinking field)", async () => {
    const { local, proxy } = await localAndCloud('ollama');
    local.always(ollamaContent(piecesOf(`\n\n${HERMES}`), { thinking: ['The user wants ', 'a listing.'] }));
    const message = await anthropicClient(proxy, fetch)
      .messages.stream({ model: 'chat', max_tokens: 512, messages: [{ role: 'user', content: 'ls' }], tools: MESSAGES_TOOLS })
      .finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'tool_use']);
    expect(message.content[0]).toMatchObject({ thinking: 'The user wants a listing.' });
    expect(message.content[1]).toMatchObject({ name: 'Bash', input: { command: 'ls -la' } });
  });

  it('Responses client: Mistral [TOOL_CALLS] from Ollama → a function_call item', async () => {
    const { local, proxy } = await localAndCloud('ollama');
    local.always(ollamaContent(piecesOf(MISTRAL, 4)));
    const seen = recordingFetch();
    const response = await openaiClient(proxy, seen.fetch).responses.stream({ model: 'chat', input: 'list files', tools: RESPONSES_TOOLS }).finalResponse();
    const calls = response.output.filter((item) => item.type === 'function_call');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ type: 'function_call', name: 'Bash', call_id: expect.stringMatching(/^call_/) });
    expect(JSON.parse((calls[0] as { arguments: string }).arguments)).toEqual({ command: 'ls -la' });
    expect(response.output.some((item) => item.type === 'message')).toBe(false);
    expect(seen.bodies[0]).not.toContain('TOOL_CALLS');
  });

  it("whole answers too: a fenced JSON call (Chat relay), Llama's <|python_tag|> (Messages from Ollama), repaired where needed", async () => {
    const { local, proxy } = await localAndCloud('openai');
    local.next((ctx) => ctx.json(200, completion('```json\n{"name": "Bash", "arguments": {"command": "ls", "timeout": "30",}}\n```')));
    const seen = recordingFetch();
    const chat = await openaiClient(proxy, seen.fetch).chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'x' }],
      tools: CHAT_TOOLS,
    });
    expect(chat.choices[0].finish_reason).toBe('tool_calls');
    expect(chat.choices[0].message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'Bash', arguments: '{"command":"ls","timeout":30}' } },
    ]);
    expect(seen.bodies[0]).not.toContain('```');
    const line = await requestLog(proxy);
    expect(line.tool_text).toEqual({ format: 'json', calls: 1, repaired: true, result: 'repaired' });

    const ollama = await localAndCloud('ollama');
    ollama.local.next((ctx) => ctx.json(200, ollamaWhole({ content: PYTHON_TAG })));
    const message = await anthropicClient(ollama.proxy, seen.fetch).messages.create({
      model: 'chat',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'x' }],
      tools: MESSAGES_TOOLS,
    });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'Bash', input: { command: 'ls -la' } }]);
    expect(seen.bodies[1]).not.toContain('python_tag');
  });

  it('several Hermes calls in one answer: every one, in order', async () => {
    const { local, proxy } = await localAndCloud('ollama');
    const second = HERMES.replace('Bash', 'Read').replace('"command": "ls -la"', '"file_path": "README.md"');
    local.always(ollamaContent(piecesOf(`${HERMES}\n${second}`, 9)));
    const message = await anthropicClient(proxy, fetch)
      .messages.stream({ model: 'chat', max_tokens: 512, messages: [{ role: 'user', content: 'x' }], tools: MESSAGES_TOOLS })
      .finalMessage();
    expect(message.content.map((block) => (block.type === 'tool_use' ? [block.name, block.input] : block.type))).toEqual([
      ['Bash', { command: 'ls -la' }],
      ['Read', { file_path: 'README.md' }],
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });
});
