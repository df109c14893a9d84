import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import type { Tier } from '../../../src/config/schema.js';
import { clientCodec, wireCodec } from '../../../src/protocols/registry.js';
import { isUnsupported, type WireProtocol } from '../../../src/protocols/core/types.js';
import type { ClientProtocol } from '../../../src/protocols/core/names.js';
import { chatAgentTurns, claudeCodeTurns, codexTurns, geminiCliTurns } from '../../helpers/agent-conversations.js';

/**
 * A local server reuses its KV cache only for an identical token prefix: a conversation's turn
 * N+1, translated, must start with the bytes turn N was sent as, up to the end of its messages,
 * and carry the same system prompt, tools and settings. Turns 1..N of agent-shaped conversations
 * through every translating pair (the client's protocol → a tier of another protocol).
 */

const config = loadConfigText(
  `
version: 1
providers:
  llama: { type: openai, base_url: "http://127.0.0.1:8080/v1" }
  claude: { type: anthropic, base_url: "https://api.anthropic.com", api_key: k }
  ollama: { type: ollama, base_url: "http://127.0.0.1:11434", ollama: { keep_alive: 30m } }
routes:
  r:
    tiers:
      - { name: llama, provider: llama, model: qwen }
      - { name: claude, provider: claude, model: claude-x }
      - { name: ollama, provider: ollama, model: qwen3, ollama: { num_ctx: 32768 } }
`,
  '/t/llm-route.yaml',
  {},
);
const tiers = Object.fromEntries((config.routes.get('r')?.tiers ?? []).map((t) => [t.name, t])) as Record<string, Tier>;
const WIRE: Record<string, WireProtocol> = { llama: 'chat', claude: 'messages', ollama: 'ollama' };

/** The body a tier is sent for a client's body (the same steps as the request path: parse, neutral, encode). */
function upstreamBody(client: ClientProtocol, body: Record<string, unknown>, tierName: string): string {
  // Gemini's route is in the path: the same target for every protocol (the others ignore it).
  const parsed = clientCodec(client).parse(body, {}, undefined, { model: 'r', query: new URLSearchParams() });
  if (!parsed.ok) throw new Error(parsed.message);
  const neutral = parsed.request.neutral();
  if (isUnsupported(neutral)) throw new Error(neutral.unsupported);
  const tier = tiers[tierName];
  const upstream = wireCodec(WIRE[tierName]).encodeRequest(tier.provider, tier, neutral, body.stream === true, {});
  if (isUnsupported(upstream)) throw new Error(upstream.unsupported);
  return upstream.body;
}

/** The body's text up to the end of its last message: what the next turn's body must start with. */
function throughMessages(body: string): string {
  const parsed = JSON.parse(body) as { messages: unknown[] };
  expect(JSON.stringify(parsed)).toBe(body); // plain JSON.stringify output, so the slice below is exact
  const key = '"messages":[';
  const at = body.indexOf(key);
  const messages = JSON.stringify(parsed.messages);
  expect(body.slice(at + key.length - 1, at + key.length - 1 + messages.length)).toBe(messages);
  return body.slice(0, at + key.length - 1 + messages.length - 1);
}

/** Every field but the messages, each as its bytes: the system prompt, tools and settings must not move. */
function settings(body: string): Record<string, string> {
  const { messages: _messages, ...rest } = JSON.parse(body) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, JSON.stringify(value)]));
}

function expectStablePrefixes(client: ClientProtocol, turns: Record<string, unknown>[], tierName: string): void {
  const bodies = turns.map((turn) => upstreamBody(client, turn, tierName));
  for (let n = 0; n + 1 < bodies.length; n++) {
    const [now, next] = [bodies[n], bodies[n + 1]];
    expect(settings(next), `turn ${n + 2} vs ${n + 1}: system, tools, settings`).toEqual(settings(now));
    const prefix = throughMessages(now);
    expect(next.startsWith(prefix), `turn ${n + 2} starts with turn ${n + 1}'s bytes through its messages`).toBe(true);
    expect(JSON.parse(next).messages.length).toBeGreaterThan(JSON.parse(now).messages.length);
  }
}

const PAIRS: Array<{ client: ClientProtocol; conversation: string; turns: () => Record<string, unknown>[]; tiers: string[] }> = [
  { client: 'messages', conversation: 'Claude Code', turns: () => claudeCodeTurns(), tiers: ['llama', 'ollama'] },
  { client: 'responses', conversation: 'Codex', turns: codexTurns, tiers: ['llama', 'claude', 'ollama'] },
  { client: 'chat', conversation: 'a Chat Completions agent', turns: chatAgentTurns, tiers: ['claude', 'ollama'] },
  { client: 'gemini', conversation: 'Gemini CLI', turns: geminiCliTurns, tiers: ['llama', 'claude', 'ollama'] },
];

describe('a conversation prefix renders to the same bytes turn after turn', () => {
  for (const { client, conversation, turns, tiers: names } of PAIRS) {
    for (const tierName of names) {
      it(`${conversation} (${client}) → ${WIRE[tierName]} tier`, () => {
        expectStablePrefixes(client, turns(), tierName);
      });
    }
  }

  it('fails a turn that changes what came before (so the checks above can fail)', () => {
    const turns = claudeCodeTurns({ turns: 2 });
    const system = turns[1].system as Array<Record<string, unknown>>;
    system[1] = { ...system[1], text: `${system[1].text} ` };
    expect(() => expectStablePrefixes('messages', turns, 'llama')).toThrow(/system, tools, settings|starts with/);
  });

  it('the same turn rendered twice is the same bytes (no ids, times or orders made per request)', () => {
    for (const { client, turns, tiers: names } of PAIRS) {
      const last = turns().at(-1) as Record<string, unknown>;
      for (const tierName of names) expect(upstreamBody(client, last, tierName)).toBe(upstreamBody(client, structuredClone(last), tierName));
    }
  });
});
