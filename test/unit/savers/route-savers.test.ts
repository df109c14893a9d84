import { countTokens as p50k } from 'gpt-tokenizer/encoding/p50k_base';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { applyRouteSavers, preloadSaverTokenizers } from '../../../src/savers/route-savers.js';
import { contentTokens } from '../../../src/savers/view.js';
import { loadedTokenCounter } from '../../../src/tokens/count.js';

const config = (plainTokenizer: string, agentTokenizer: string) =>
  loadConfigText(
    `version: 1
providers:
  p: { type: openai, base_url: "http://127.0.0.1:1/v1" }
routes:
  plain:
    tiers: [{ provider: p, model: m, tokenizer: ${plainTokenizer} }]
  agent:
    savers: [whitespace]
    tiers: [{ provider: p, model: m, tokenizer: ${agentTokenizer} }, { provider: p, model: m2, name: second, tokenizer: r50k_base }]
`,
    '/t/llm-route.yaml',
    {},
  );

const body = () => ({ model: 'agent', messages: [{ role: 'user', content: 'Tidy   this   up,   please.\n\n\n\nThanks.' }] });

describe('applyRouteSavers', () => {
  it('a route without savers: the same body back, and no tokenizer loaded', async () => {
    const original = body();
    const result = await applyRouteSavers(config('cl100k_base', 'p50k_base').routes.get('plain')!, 'chat', original);
    expect(result).toEqual({ body: original, changed: false, measures: [], failures: [] });
    expect(result.body).toBe(original);
    expect(loadedTokenCounter('cl100k_base')).toBeUndefined();
  });

  it("a route with savers: measured with its first tier's encoding, loaded on first use", async () => {
    const original = body();
    const result = await applyRouteSavers(config('o200k_base', 'p50k_base').routes.get('agent')!, 'chat', original);
    expect(result.measures).toEqual([{ saver: 'whitespace', before: contentTokens('chat', original, p50k), after: contentTokens('chat', result.body, p50k) }]);
    expect(result.changed).toBe(true);
    expect(loadedTokenCounter('p50k_base')).toBeDefined();
    expect(loadedTokenCounter('r50k_base')).toBeUndefined(); // the second tier's encoding is not used
  });

  it('never rejects: when the pipeline cannot run, the body goes out as it came, every saver counted as failed', async () => {
    const hostile = {
      model: 'agent',
      messages: [
        {
          role: 'user',
          get content(): string {
            throw new Error('unreadable body');
          },
        },
      ],
    };
    const result = await applyRouteSavers(config('o200k_base', 'p50k_base').routes.get('agent')!, 'chat', hostile);
    expect(result.body).toBe(hostile);
    expect(result.changed).toBe(false);
    expect(result.measures).toEqual([{ saver: 'whitespace', before: 0, after: 0, failed: true }]);
    expect(result.failures).toEqual([{ saver: 'whitespace', reason: 'threw', message: 'unreadable body' }]);
  });

  it('preloadSaverTokenizers loads the encodings of routes with savers only', async () => {
    await preloadSaverTokenizers(config('o200k_harmony', 'r50k_base'));
    expect(loadedTokenCounter('r50k_base')).toBeDefined();
    expect(loadedTokenCounter('o200k_harmony')).toBeUndefined();
  });
});
