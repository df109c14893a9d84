import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCodeTurns } from '../../helpers/agent-conversations.js';
import { logLine, useHarness } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';
import { realLlamaBuilt, startRealLlama } from '../../helpers/real-llama.js';
import { readRequests, useTempDirs } from '../../helpers/usage-kit.js';

/**
 * A local agent turn read from the real llama-server's KV cache (scripts/real-llama/, one
 * slot): two Claude-Code-shaped Messages turns (~3,000 prompt tokens: the system prompt with the billing
 * line first, 8 tools, the second turn adding a tool result) through a translating `openai`
 * tier. Turn 2 carries a new billing nonce, as several Claude Code versions send it: it must
 * still be read from the cache (≥ 95% of its prompt) and cost about what the same turn costs
 * sent straight to llama-server's own /v1/messages. Then sessions A, B, A again on the one slot.
 * Skips when the llama-server build is absent; a server of its own on a free port. About 30 s
 * on an idle 2-core machine (two prompts read whole, at ≈ 300 tokens/s); ten times that on a busy one.
 */
const h = useHarness();
const tempDir = useTempDirs();

interface Turn {
  ms: number;
  usage: { input_tokens: number; cache_read_input_tokens?: number; output_tokens: number };
  id: string | null;
}

async function send(url: string, body: Record<string, unknown>): Promise<Turn> {
  const started = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ ...body, max_tokens: 8, stream: false }),
  });
  const answer = (await res.json()) as { usage: Turn['usage'] };
  expect(res.status, JSON.stringify(answer)).toBe(200);
  return { ms: performance.now() - started, usage: answer.usage, id: res.headers.get('x-request-id') };
}

const cached = (turn: Turn): number => turn.usage.cache_read_input_tokens ?? 0;
const prompt = (turn: Turn): number => turn.usage.input_tokens + cached(turn);

/** The conversation's two turns, its identity line marked so no earlier run's cache can serve turn 1. */
function conversation(mark: string, systemTokens: number, nonces: [string, string]): Record<string, unknown>[] {
  return claudeCodeTurns({ turns: 2, systemTokens, nonces, stream: false }).map((body) => {
    const system = (body.system as Array<Record<string, unknown>>).map((block, i) => (i === 1 ? { ...block, text: `${block.text} (${mark})` } : block));
    return { ...body, system, model: 'chat' };
  });
}

describe.skipIf(!realLlamaBuilt())('a real llama-server keeps an agent conversation in its cache through a translated tier', () => {
  it('turn 2 with a new billing nonce is read from the cache, about as fast as sent directly; its usage row says so', async () => {
    // One slot (a later -np wins over the start script's): every turn meets the same cache.
    const llama = await startRealLlama(['-c', '8192', '-np', '1']);
    h.defer(() => llama.stop());
    const LLAMA = `http://127.0.0.1:${llama.port}`;
    const db = join(tempDir(), 'usage.db');
    const proxy: RunningProxy = await h.proxy({
      tiers: [{ name: 'llama', url: `${LLAMA}/v1`, model: 'tiny', timeouts: { ttft_ms: 120_000, cold_ttft_ms: 120_000 } }],
      deadline_ms: 300_000,
      top: { usage: { path: db } },
    });
    const run = `run ${Date.now().toString(36)}`;

    const [direct1, direct2] = conversation(`${run} direct`, 1700, ['36ee5', '0aaa9']);
    await send(`${LLAMA}/v1/messages`, direct1);
    const direct = await send(`${LLAMA}/v1/messages`, direct2);

    const [relayed1, relayed2] = conversation(`${run} translated`, 1700, ['36ee5', '0aaa9']);
    const first = await send(`${proxy.origin}/v1/messages`, relayed1);
    const second = await send(`${proxy.origin}/v1/messages`, relayed2);
    process.stdout.write(
      `real llama-server, turn 2 with a new nonce: direct ${direct.ms.toFixed(0)} ms, ${cached(direct)} of ${prompt(direct)} cached; ` +
        `translated ${second.ms.toFixed(0)} ms, ${cached(second)} of ${prompt(second)} cached (turn 1: ${first.ms.toFixed(0)} ms)\n`,
    );
    expect(prompt(second)).toBeGreaterThan(2800);
    expect(cached(second) / prompt(second)).toBeGreaterThanOrEqual(0.95);
    // A turn's time is its prefill of the tokens not found in the cache (the answer is 8 tokens either way): the
    // translated turn evaluates at most 1.5× what the direct one does (the chat template's framing may differ by a
    // few tokens). Wall times on a shared machine vary too much for 1.5×; a miss re-reads everything (turn 1's time).
    expect(prompt(second) - cached(second)).toBeLessThanOrEqual(1.5 * (prompt(direct) - cached(direct)) + 16);
    expect(second.ms).toBeLessThan(first.ms / 2);

    expect((await logLine(proxy, second.id)).usage).toMatchObject({ cached_tokens: cached(second) });
    await proxy.server.usage.flush();
    const row = readRequests(db).find((r) => r.id === second.id);
    expect(row).toMatchObject({ cached_tokens: cached(second), cache_reported: 1, prompt_tokens: prompt(second) });

    // Sessions A, B, A again on the one slot: what the server gives back for A (llama.cpp keeps an
    // evicted slot's prompt in host memory, --cache-ram, and restores it).
    const [a1, a2] = conversation(`${run} A`, 300, ['11111', '22222']);
    const [b1] = conversation(`${run} B`, 300, ['33333', '44444']);
    await send(`${proxy.origin}/v1/messages`, a1);
    await send(`${proxy.origin}/v1/messages`, b1);
    const again = await send(`${proxy.origin}/v1/messages`, a2);
    process.stdout.write(
      `real llama-server, session A after B on one slot: ${cached(again)} of ${prompt(again)} cached (${((100 * cached(again)) / prompt(again)).toFixed(1)}%)\n`,
    );
    expect((await logLine(proxy, again.id)).usage).toHaveProperty('cached_tokens', cached(again));
  }, 600_000);
});
