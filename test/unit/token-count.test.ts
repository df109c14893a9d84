import { describe, expect, it } from 'vitest';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { loadedTokenCounter, tokenCounter } from '../../src/tokens/count.js';

describe('tokenCounter', () => {
  it('counts with the named encoding, o200k_base by default, and is loaded once', async () => {
    const text = 'llm-route routes each request through ordered tiers: 東京, émigré, `code` {"a":1}';
    const counter = await tokenCounter();
    expect(counter.encoding).toBe('o200k_base');
    expect(counter.count(text)).toBe(o200k(text));
    expect(loadedTokenCounter()).toBe(counter);
    expect(await tokenCounter('o200k_base')).toBe(counter);
    const other = await tokenCounter('cl100k_base');
    expect(other.count(text)).toBe(cl100k(text));
    expect(o200k(text)).not.toBe(cl100k(text)); // the two encodings really differ on this text
    expect(counter.count('')).toBe(0);
  });
});
