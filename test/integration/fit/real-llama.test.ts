import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resetTierFacts } from '../../../src/fit/tier-facts.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { type RealLlama, realLlamaBuilt, startRealLlama } from '../../helpers/real-llama.js';

/**
 * Against a real llama.cpp llama-server (scripts/real-llama/) started with `-c 2048`: two slots
 * of 1,024 tokens. Skipped when the build is absent.
 */
const available = realLlamaBuilt();
const h = useHarness();
let llama: RealLlama | undefined;
beforeAll(async () => {
  if (available) llama = await startRealLlama(['-c', '2048']);
}, 200_000);
afterAll(() => llama?.stop(), 30_000);
beforeEach(() => resetTierFacts());

describe.skipIf(!available)('route by fit against a real llama-server', () => {
  async function proxyFor(extra: Record<string, unknown> = {}) {
    const proxy = await h.proxy({ tiers: [{ name: 'llama', url: llama!.url, model: 'tiny', health: { warmup: false }, extra }] });
    proxy.server.startActiveChecks();
    return proxy;
  }
  const long = 'hello world '.repeat(700);

  it("/props gives one slot's window, and a prompt over it is a 400 in each client's protocol; a short one is answered", async () => {
    const proxy = await proxyFor();
    const line = await waitFor(() => proxy.logs.find((l) => l.event === 'fit_discovered'), 5000);
    expect(line).toMatchObject({ context: 1024, context_source: 'llama.cpp /props', vision: false });
    const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'k', maxRetries: 0 });
    const error = await openai.chat.completions.create({ model: 'chat', max_tokens: 5, messages: [{ role: 'user', content: long }] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as { code: string }).code).toBe('context_length_exceeded');
    expect((error as Error).message).toMatch(/prompt is too long: \d+ tokens > 1024 maximum/);
    const anthropic = new Anthropic({ baseURL: proxy.origin, apiKey: 'k', maxRetries: 0 });
    const refused = await anthropic.messages.create({ model: 'chat', max_tokens: 5, messages: [{ role: 'user', content: long }] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((refused as { error: { error: { type: string; message: string } } }).error.error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringMatching(/^prompt is too long: \d+ tokens > 1024 maximum$/),
    });
    const short = await openai.chat.completions.create({ model: 'chat', max_tokens: 3, messages: [{ role: 'user', content: 'hi' }] });
    expect(short.choices).toHaveLength(1);
  });

  it("when llm-route lets it through (a wrong configured context), the server's own 400 becomes the 400 with its numbers", async () => {
    const proxy = await proxyFor({ context: 100_000 });
    const anthropic = new Anthropic({ baseURL: proxy.origin, apiKey: 'k', maxRetries: 0 });
    const refused = await anthropic.messages.create({ model: 'chat', max_tokens: 5, messages: [{ role: 'user', content: long }] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((refused as { status: number }).status).toBe(400);
    expect((refused as { error: { error: { message: string } } }).error.error.message).toMatch(/^prompt is too long: \d+ tokens > 1024 maximum$/);
    const line = await waitFor(() => proxy.logs.find((l) => l.event === 'request'));
    expect((line.attempts as Array<Record<string, unknown>>)[0]).toMatchObject({ outcome: 'context_length', status: 400 });
  });
});
