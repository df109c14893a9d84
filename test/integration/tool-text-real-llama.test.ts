import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestLog, useHarness } from '../helpers/harness.js';
import { anthropicClient, CHAT_TOOLS, MESSAGES_TOOLS, openaiClient, recordingFetch } from '../helpers/tool-text-kit.js';
import { HERMES } from '../helpers/tool-text-forms.js';
import { type RealLlama, realLlamaBuilt, startRealLlama } from '../helpers/real-llama.js';

/**
 * A real llama.cpp llama-server (scripts/real-llama/) whose random-weight model is forced by
 * a GBNF grammar to write exactly a Hermes <tool_call>; with --skip-chat-parsing its own
 * tool-call parser is off, so it streams the form as content, token by token, as a server with
 * no tool template does. Skipped when the build is absent.
 */
const available = realLlamaBuilt();
const h = useHarness();
let grammarDir = '';
let llama: RealLlama | undefined;

beforeAll(async () => {
  if (!available) return;
  grammarDir = mkdtempSync(join(tmpdir(), 'tool-text-'));
  const grammar = join(grammarDir, 'hermes.gbnf');
  writeFileSync(grammar, `root ::= ${JSON.stringify(HERMES)}\n`);
  llama = await startRealLlama(['--skip-chat-parsing', '--grammar-file', grammar]);
}, 200_000);

afterAll(async () => {
  await llama?.stop();
  if (grammarDir) rmSync(grammarDir, { recursive: true, force: true });
}, 30_000);

async function proxyToLlama() {
  return h.proxy({ tiers: [{ name: 'llama', url: llama!.url, model: 'tiny', timeouts: { ttft_ms: 120_000, idle_ms: 60_000 } }] });
}

describe.skipIf(!available)('a real llama-server writing a Hermes <tool_call> as text', () => {
  it('reaches a Chat client as a native tool call, streamed (a relay, rendered) and whole', async () => {
    const proxy = await proxyToLlama();
    const seen = recordingFetch();
    const client = openaiClient(proxy, seen.fetch);
    const stream = await client.chat.completions.create({
      model: 'chat',
      stream: true,
      max_tokens: 60,
      messages: [{ role: 'user', content: 'list files' }],
      tools: CHAT_TOOLS,
    });
    let args = '';
    let name = '';
    let finish: string | null = null;
    for await (const c of stream) {
      for (const call of c.choices[0]?.delta.tool_calls ?? []) {
        name += call.function?.name ?? '';
        args += call.function?.arguments ?? '';
      }
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect([name, JSON.parse(args), finish]).toEqual(['Bash', { command: 'ls -la' }, 'tool_calls']);
    expect(seen.bodies[0]).not.toContain('tool_call>');
    const whole = await client.chat.completions.create({
      model: 'chat',
      max_tokens: 60,
      messages: [{ role: 'user', content: 'list files' }],
      tools: CHAT_TOOLS,
    });
    expect(whole.choices[0].message.tool_calls?.[0]).toMatchObject({
      id: expect.stringMatching(/^call_/),
      function: { name: 'Bash', arguments: '{"command":"ls -la"}' },
    });
    expect((await requestLog(proxy)).tool_text).toEqual({ format: 'hermes', calls: 1, repaired: false, result: 'recovered' });
  }, 120_000);

  it("reaches a Messages client (Claude Code's protocol) as a tool_use block", async () => {
    const proxy = await proxyToLlama();
    const message = await anthropicClient(proxy, fetch)
      .messages.stream({ model: 'chat', max_tokens: 60, messages: [{ role: 'user', content: 'list files' }], tools: MESSAGES_TOOLS })
      .finalMessage();
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'Bash', input: { command: 'ls -la' } }]);
  }, 120_000);
});
