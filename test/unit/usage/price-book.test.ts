import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { priceBook, priceRequest } from '../../../src/usage/price-book.js';

// What a request cost and saved: a priced tier costs its price; a local tier saves what the
// route's first priced tier would have cost; an unpriced tier off the local network, or one sent
// the client's own login (the client's plan pays for it), saves nothing.

const YAML = `
version: 1
providers:
  ollama: { type: ollama, base_url: "http://127.0.0.1:11434" }
  plan: { type: anthropic, base_url: "http://127.0.0.1:4202", api_key: from_client }
  free: { type: openai, base_url: "https://free.example.com/v1" }
  api: { type: anthropic, base_url: "https://api.anthropic.com", api_key: "\${ANTHROPIC_API_KEY}" }
routes:
  claude:
    tiers:
      - { name: local, provider: ollama, model: m }
      - { name: plan, provider: plan, model: m }
      - { name: free, provider: free, model: m }
      - { name: api, provider: api, model: m, price: { input_per_mtok: 3, output_per_mtok: 15 } }
`;

describe('priceRequest', () => {
  const book = priceBook(loadConfigText(YAML, '/test/llm-route.yaml', { ANTHROPIC_API_KEY: 'sk-ant-test' }));
  const tokens = { prompt: 1_000_000, completion: 100_000, cached: 0 };

  it('a priced tier costs its price and saves nothing', () => {
    expect(priceRequest(book, 'claude', 'api', tokens)).toEqual({ cost: 4.5, saved: 0 });
  });

  it("a local tier costs nothing and saves the first priced tier's price", () => {
    expect(priceRequest(book, 'claude', 'local', tokens)).toEqual({ cost: 0, saved: 4.5 });
  });

  it("a tier sent the client's own login, on loopback or not, and an unpriced API save nothing", () => {
    expect(priceRequest(book, 'claude', 'plan', tokens)).toEqual({ cost: 0, saved: 0 });
    expect(priceRequest(book, 'claude', 'free', tokens)).toEqual({ cost: 0, saved: 0 });
  });

  it('no tier answered: nothing billed, nothing saved', () => {
    expect(priceRequest(book, 'claude', null, tokens)).toEqual({ cost: 0, saved: 0 });
  });
});
