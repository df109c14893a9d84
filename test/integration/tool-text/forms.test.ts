import { describe, expect, it } from 'vitest';
import { requestLog, useHarness } from '../../helpers/harness.js';
import { anthropicClient, CHAT_TOOLS, MESSAGES_TOOLS, ollamaContent, openaiClient, piecesOf, recordingFetch, sseContent } from '../../helpers/tool-text-kit.js';
import { HERMES, MISTRAL, MISTRAL_ARGS, PYTHON_TAG, QWEN3_XML } from '../../helpers/tool-text-forms.js';

// docs/tool-text.md: every form a local model writes a call in, streamed token by
// token at a model's pace through a real proxy, reaches the agent as native calls — on a relayed
// stream (an OpenAI-compatible server to a Chat client) and a rendered one (Ollama to Claude
// Code's Messages) — and the log says which form and how many calls.
const h = useHarness();

const LS = { name: 'Bash', input: { command: 'ls -la' } };
const READ = { name: 'Read', input: { file_path: '/tmp/a.txt', limit: 20 } };
const PWD = { name: 'Bash', input: { command: 'pwd' } };

/** Each form as the model writes it, the calls it holds, the text around them, and what the log says. */
const FORMS: Array<{ name: string; text: string; calls: Array<{ name: string; input: unknown }>; before?: string; format: string; repaired?: boolean }> = [
  { name: 'hermes', text: HERMES, calls: [LS], format: 'hermes' },
  { name: 'qwen3_xml', text: QWEN3_XML, calls: [READ], format: 'qwen3_xml' },
  { name: 'mistral', text: MISTRAL, calls: [LS], format: 'mistral' },
  { name: 'mistral_args', text: MISTRAL_ARGS, calls: [LS], format: 'mistral_args' },
  { name: 'python_tag', text: PYTHON_TAG, calls: [LS], format: 'python_tag' },
  { name: 'json', text: '{"name": "Bash", "arguments": {"command": "ls -la"}}', calls: [LS], format: 'json' },
  {
    name: 'fenced json',
    text: '```json\n[{"name": "Bash", "parameters": {"command": "ls -la"}}, {"name": "Bash", "arguments": {"command": "pwd"}}]\n```',
    calls: [LS, PWD],
    format: 'json',
    repaired: true,
  }, // the fence is read by the repair
  { name: 'several in a row', text: `${HERMES}\n${HERMES.replace('ls -la', 'pwd')}\n${QWEN3_XML}`, calls: [LS, PWD, READ], format: 'hermes' },
  { name: 'text then call', text: `I will list the files.\n${HERMES}`, before: 'I will list the files.\n', calls: [LS], format: 'hermes' },
  { name: 'unclosed at the end', text: '<tool_call>\n{"name": "Bash", "arguments": {"command": "ls -la"}}', calls: [LS], format: 'hermes', repaired: true },
];

async function oneTier(type: 'openai' | 'ollama') {
  const fake = await h.fake();
  const proxy = await h.proxy({
    tiers: [{ name: 'local', url: type === 'ollama' ? `http://127.0.0.1:${fake.port}` : fake.url, type, model: 'qwen2.5-coder:7b' }],
  });
  return { fake, proxy };
}

describe('every form, token by token, through a real proxy', () => {
  it('a relayed stream: OpenAI-compatible server → Chat client (native tool_calls, indexes in order, finish tool_calls)', async () => {
    for (const form of FORMS) {
      const { fake, proxy } = await oneTier('openai');
      fake.always(sseContent(piecesOf(form.text, 3), { paceMs: 1 }));
      const seen = recordingFetch();
      const stream = await openaiClient(proxy, seen.fetch).chat.completions.create({
        model: 'chat',
        stream: true,
        messages: [{ role: 'user', content: 'x' }],
        tools: CHAT_TOOLS,
      });
      let text = '';
      const calls: Array<{ index: number; name?: string; args: string }> = [];
      let finish: string | null = null;
      for await (const c of stream) {
        text += c.choices[0]?.delta.content ?? '';
        for (const call of c.choices[0]?.delta.tool_calls ?? []) {
          if (call.id) calls[call.index] = { index: call.index, name: call.function?.name, args: '' };
          calls[call.index].args += call.function?.arguments ?? '';
        }
        finish = c.choices[0]?.finish_reason ?? finish;
      }
      expect(text, form.name).toBe(form.before ?? '');
      expect(
        calls.map((call) => ({ name: call.name, input: JSON.parse(call.args) })),
        form.name,
      ).toEqual(form.calls);
      expect(calls.map((call) => call.index)).toEqual(form.calls.map((_, i) => i));
      expect(finish, form.name).toBe('tool_calls');
      for (const marker of ['tool_call>', 'TOOL_CALLS', 'python_tag', '<function=', '```']) expect(seen.bodies[0], form.name).not.toContain(marker);
      const line = await requestLog(proxy);
      expect(line.tool_text, form.name).toEqual({
        format: form.format,
        calls: form.calls.length,
        repaired: form.repaired ?? false,
        result: form.repaired ? 'repaired' : 'recovered',
      });
    }
  });

  it('a rendered stream: Ollama → Messages client (tool_use blocks, stop_reason tool_use)', async () => {
    for (const form of FORMS) {
      const { fake, proxy } = await oneTier('ollama');
      fake.always(ollamaContent(piecesOf(form.text, 3), { paceMs: 1 }));
      const message = await anthropicClient(proxy, fetch)
        .messages.stream({ model: 'chat', max_tokens: 512, messages: [{ role: 'user', content: 'x' }], tools: MESSAGES_TOOLS })
        .finalMessage();
      const blocks = message.content.map((block) =>
        block.type === 'tool_use' ? { name: block.name, input: block.input } : block.type === 'text' ? block.text : block.type,
      );
      expect(blocks, form.name).toEqual([...(form.before ? [form.before] : []), ...form.calls]);
      expect(message.stop_reason, form.name).toBe('tool_use');
      expect((await requestLog(proxy)).tool_text, form.name).toMatchObject({ format: form.format, calls: form.calls.length });
    }
  });
});
