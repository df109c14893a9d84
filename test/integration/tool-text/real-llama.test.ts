import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestLog, useHarness } from '../../helpers/harness.js';
import { nativeBashCall, WRITE_CHAT_TOOLS, anthropicClient, CHAT_TOOLS, MESSAGES_TOOLS, openaiClient, recordingFetch } from '../../helpers/tool-text-kit.js';
import { HERMES } from '../../helpers/tool-text-forms.js';
import { type RealLlama, realLlamaBuilt, startRealLlama } from '../../helpers/real-llama.js';

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

/**
 * A long Write call at the model's own CPU speed: a grammar makes the random model write a Hermes
 * <tool_call> of the Write tool whose content is a few thousand characters of its own choosing
 * (printable ASCII a JSON string holds unescaped: most tokens a random model draws are of it,
 * and they are whole characters, where a CJK character takes three byte-tokens),
 * token by token, far longer than ttft_ms. The grammar is the server's own (--grammar-file):
 * llama-server refuses a request's `grammar` field beside `tools` ("Cannot use custom grammar
 * constraints with tools"), and a relay passes the client's body on as it came.
 */
const LONG_CONTENT_CHARS = Number(process.env.REAL_LLAMA_WRITE_CHARS ?? 2000);
const HEAD = '<tool_call>\n{"name": "Write", "arguments": {"file_path": "/tmp/app.py", "content": "';
const TAIL = '"}}\n</tool_call>';
// Runs of 50: one repetition of 2000 ran on far past its bound in llama.cpp's grammar here.
const WRITE_GRAMMAR = `root ::= ${JSON.stringify(HEAD)} body ${JSON.stringify(TAIL)}\nbody ::= run{${Math.ceil(LONG_CONTENT_CHARS / 50)}}\nrun ::= [ !#-\\[\\]-~]{50}\n`;
const TTFT_MS = 3_000;

describe.skipIf(!available)('a real llama-server writing a long Write call as text, slowly', () => {
  let writer: RealLlama | undefined;
  beforeAll(async () => {
    const grammar = join(grammarDir, 'write.gbnf');
    writeFileSync(grammar, WRITE_GRAMMAR);
    writer = await startRealLlama(['--skip-chat-parsing', '--grammar-file', grammar]);
    // The prompt read once beforehand (the server keeps it cached), so its first token comes well inside ttft_ms on a busy machine too.
    const res = await fetch(`${writer.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', max_tokens: 1, messages: [{ role: 'user', content: 'write app.py' }], tools: WRITE_CHAT_TOOLS }),
    });
    await res.text();
  }, 280_000);

  afterAll(async () => {
    await writer?.stop();
  }, 30_000);

  it('reaches a Chat client as one native call, long after ttft_ms, and nothing fails over', async () => {
    const cloud = await h.fake();
    cloud.always(nativeBashCall);
    const proxy = await h.proxy({
      tiers: [
        { name: 'llama', url: writer!.url, model: 'tiny', timeouts: { ttft_ms: TTFT_MS, idle_ms: 60_000 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    // Node's fetch gives up on a response whose headers take 300 s; a stream's come at its commit, with the whole call.
    const patient = new Agent({ headersTimeout: 0, bodyTimeout: 0 });
    h.defer(() => patient.close());
    const patientFetch = ((input: string, init: Record<string, unknown>) => undiciFetch(input, { ...init, dispatcher: patient })) as unknown as typeof fetch;
    const started = performance.now();
    const stream = await openaiClient(proxy, patientFetch).chat.completions.create({
      model: 'chat',
      stream: true,
      max_tokens: 4 * LONG_CONTENT_CHARS,
      messages: [{ role: 'user', content: 'write app.py' }],
      tools: WRITE_CHAT_TOOLS,
    });
    const calls: Array<{ name?: string; args: string }> = [];
    let content = '';
    let finish: string | null = null;
    for await (const c of stream) {
      content += c.choices[0]?.delta.content ?? '';
      for (const call of c.choices[0]?.delta.tool_calls ?? []) {
        if (call.id) calls[call.index] = { name: call.function?.name, args: '' };
        calls[call.index].args += call.function?.arguments ?? '';
      }
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    const seconds = (performance.now() - started) / 1000;
    expect(content).toBe('');
    expect(calls).toHaveLength(1);
    expect(calls[0].name).toBe('Write');
    const args = JSON.parse(calls[0].args) as { file_path: string; content: string };
    expect(args.file_path).toBe('/tmp/app.py');
    expect(args.content.length).toBeGreaterThanOrEqual(LONG_CONTENT_CHARS);
    expect(finish).toBe('tool_calls');
    expect(cloud.requests).toHaveLength(0);
    const line = await requestLog(proxy);
    expect(line.attempts).toMatchObject([{ tier: 'llama', outcome: 'ok' }]);
    expect(line.tool_text).toEqual({ format: 'hermes', calls: 1, repaired: false, result: 'recovered' });
    // The tier's first bytes came inside ttft_ms; the whole call took far longer: it was held on progress, not on time.
    expect((line.attempts as Array<{ ms: number }>)[0].ms).toBeLessThan(TTFT_MS);
    expect(line.ttft_ms as number).toBeGreaterThan(2 * TTFT_MS);
    if (process.env.REAL_LLAMA_VERBOSE)
      console.log(
        `real llama-server Write call: ${args.content.length} characters of content (${calls[0].args.length} of arguments) in ${seconds.toFixed(1)} s; ttft_ms ${TTFT_MS}, the tier's first bytes after ${(line.attempts as Array<{ ms: number }>)[0].ms} ms, committed after ${line.ttft_ms} ms`,
      );
  }, 900_000);
});
