import { beforeEach, describe, expect, it } from 'vitest';
import { windowFor } from '../../../src/fit/ollama-window.js';
import { payloadFailure } from '../../../src/fit/payload-failure.js';
import { PromptCount } from '../../../src/protocols/core/prompt-tokens.js';
import { resetTierFacts, tierFit } from '../../../src/fit/tier-facts.js';
import { detectTruncation } from '../../../src/fit/truncation.js';
import { clientCodec } from '../../../src/protocols/registry.js';
import { AttemptError } from '../../../src/proxy/attempt-error.js';
import { tier } from '../../helpers/config.js';

beforeEach(() => resetTierFacts());

const request = (content: string) => {
  const parsed = clientCodec('chat').parse({ model: 'chat', messages: [{ role: 'user', content }] }, {});
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.request;
};

describe('Ollama window steps', () => {
  it('the loaded window when the need fits it, else the smallest 4096·2^k, capped by the model', () => {
    expect(windowFor(3000, 8192, 40960)).toBe(8192);
    expect(windowFor(3000, undefined, 40960)).toBe(4096);
    expect(windowFor(9000, 8192, 40960)).toBe(16384);
    expect(windowFor(39000, undefined, 40960)).toBe(40960);
    expect(windowFor(50000, undefined, 40960)).toBe(40960);
    expect(windowFor(3000, undefined, 2048)).toBe(2048);
  });
});

describe('silent truncation', () => {
  it('a local tier reading under 70% of the count is flagged and learns the window; a cloud tier never', async () => {
    const prompt = new PromptCount(request('word '.repeat(1000)));
    await prompt.tokens('o200k_base');
    const local = tier('local');
    expect(detectTruncation(local, { prompt_tokens: 800, completion_tokens: 1 }, prompt)).toBeUndefined();
    expect(detectTruncation(local, { prompt_tokens: 500, completion_tokens: 1 }, prompt)).toEqual({ sent: prompt.made, read: 500 });
    expect(tierFit(local)).toMatchObject({ context: 500, contextSource: 'learned' });
    const cloud = tier('cloud', { provider: { ...local.provider, name: 'cloud', base_url: 'https://api.example.com/v1', local: false } });
    expect(detectTruncation(cloud, { prompt_tokens: 5, completion_tokens: 1 }, prompt)).toBeUndefined();
    expect(tierFit(cloud).context).toBeUndefined();
  });

  it('nothing to compare when no count was made', () => {
    expect(detectTruncation(tier('local'), { prompt_tokens: 1, completion_tokens: 1 }, new PromptCount(request('hi')))).toBeUndefined();
  });
});

describe("a context-length rejection's numbers", () => {
  const rejection = (body: unknown) =>
    new AttemptError('context_length', 'HTTP 400', {
      phase: 'headers',
      failover: true,
      retryable: false,
      status: 400,
      upstream: { status: 400, headers: {}, body: Buffer.from(JSON.stringify(body)) },
    });
  it('llama.cpp n_prompt_tokens/n_ctx, vLLM/OpenAI words, nothing from anything else', () => {
    expect(
      payloadFailure.numbersOf(rejection({ error: { code: 400, type: 'exceed_context_size_error', n_prompt_tokens: 870, n_ctx: 256, message: 'x' } })),
    ).toEqual({ prompt: 870, limit: 256 });
    expect(
      payloadFailure.numbersOf(
        rejection({
          error: {
            message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            type: 'invalid_request_error',
            code: 'context_length_exceeded',
          },
        }),
      ),
    ).toEqual({ prompt: 9000, limit: 8192 });
    expect(payloadFailure.numbersOf(rejection({ error: 'the prompt is longer than the context length' }))).toEqual({});
    expect(payloadFailure.numbersOf(rejection({ error: 'the prompt is longer than the context length' }), 4096)).toEqual({ limit: 4096 });
    expect(payloadFailure.numbersOf(rejection('not an object'))).toEqual({});
  });
});
