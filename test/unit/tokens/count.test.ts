import { describe, expect, it } from 'vitest';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { loadedTokenCounter, tokenCounter } from '../../../src/tokens/count.js';

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

describe('counting pathological text', () => {
  it('counts a long run without spaces in linear time, within a token per cut of the exact count', async () => {
    const counter = await tokenCounter();
    const exact = o200k('x'.repeat(8000));
    const started = performance.now();
    const bounded = counter.count('x'.repeat(8000));
    expect(Math.abs(bounded - exact)).toBeLessThanOrEqual(8);
    // A megabyte of one character would never finish unbounded; here it is a generous few seconds at most.
    const huge = counter.count('y'.repeat(1_000_000));
    expect(huge).toBeGreaterThan(100_000);
    expect(performance.now() - started).toBeLessThan(15_000);
    // Ordinary text is counted exactly, pieces or not.
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(200);
    expect(counter.count(prose)).toBe(o200k(prose));
  });
});
