import { beforeEach, describe, expect, it } from 'vitest';
import type { PromptCount } from '../../../src/protocols/core/prompt-tokens.js';
import { resetTierFacts, tierFit } from '../../../src/fit/tier-facts.js';
import { type Truncation, watchTruncation } from '../../../src/fit/truncation.js';
import { tier } from '../../helpers/config.js';

beforeEach(() => resetTierFacts());

/** A prompt count that says `tokens` and remembers how often it was asked. */
function counting(tokens: number): { prompt: PromptCount; asked: () => number } {
  let asked = 0;
  const prompt = {
    made: undefined,
    tokens: async () => {
      asked++;
      return tokens;
    },
  } as unknown as PromptCount;
  return { prompt, asked: () => asked };
}

const usage = (prompt: number) => ({ prompt_tokens: prompt, completion_tokens: 3, total_tokens: prompt + 3 });
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('watchTruncation: the late check on a tier of unknown window', () => {
  it("counts only when the reported prompt is far below what the body's size allows, and never on the request's turn", async () => {
    const local = tier('local');
    const found: Truncation[] = [];
    const plausible = counting(8000);
    watchTruncation(local, usage(7000), plausible.prompt, 40_000, (t) => found.push(t)); // 5.7 bytes a token: plausible
    const small = counting(10);
    watchTruncation(local, usage(5), small.prompt, 3000, (t) => found.push(t)); // too small a body to matter
    const suspicious = counting(8000);
    watchTruncation(local, usage(2048), suspicious.prompt, 40_000, (t) => found.push(t));
    expect(suspicious.asked()).toBe(0); // deferred: nothing on the request path
    await turn();
    await turn();
    expect([plausible.asked(), small.asked(), suspicious.asked()]).toEqual([0, 0, 1]);
    expect(found).toEqual([{ sent: 8000, read: 2048 }]);
    expect(tierFit(local).context).toBe(2048);
  });

  it('a suspicious count that shows the whole prompt was read (images, base64) reports nothing', async () => {
    const local = tier('local');
    const found: Truncation[] = [];
    const images = counting(1500);
    watchTruncation(local, usage(1450), images.prompt, 300_000, (t) => found.push(t));
    await turn();
    await turn();
    expect(images.asked()).toBe(1);
    expect(found).toEqual([]);
    expect(tierFit(local).context).toBeUndefined();
  });

  it('a cloud tier, an Anthropic gateway on loopback, a figure too small to be a window, no usage, or a count made before sending: nothing to do', async () => {
    const cloud = tier('cloud', { provider: { ...tier('x').provider, local: false, type: 'openai' } });
    // As in Claude Code's real run: an anthropic-type tier on 127.0.0.1 reported 10 input tokens for a tool call.
    const gateway = tier('gateway', { provider: { ...tier('x').provider, local: true, type: 'anthropic' } });
    const none = counting(8000);
    watchTruncation(cloud, usage(2048), none.prompt, 40_000, () => undefined);
    watchTruncation(gateway, usage(10), none.prompt, 50_000, () => undefined);
    // An Ollama that counts only what its KV cache did not hold: an agent's new turn, not a window.
    watchTruncation(tier('local'), usage(300), none.prompt, 120_000, () => undefined);
    watchTruncation(tier('local'), undefined, none.prompt, 40_000, () => undefined);
    const made = { made: 8000, tokens: async () => 8000 } as unknown as PromptCount;
    watchTruncation(tier('local'), usage(2048), made, 40_000, () => {
      throw new Error('counted before: detectTruncation reports it');
    });
    await turn();
    expect(none.asked()).toBe(0);
  });
});
