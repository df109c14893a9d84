/**
 * Token counting with a real tokenizer (gpt-tokenizer), for the two places llm-route must
 * count tokens itself: usage an upstream did not report (marked estimated), and what token
 * savers saved. An encoding's tables take ~200 ms to load, so each is loaded once, on first
 * use, never at start-up.
 */
export const ENCODINGS = ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base', 'o200k_harmony'] as const;
export type Encoding = (typeof ENCODINGS)[number];
export const DEFAULT_ENCODING: Encoding = 'o200k_base';

export interface TokenCounter {
  readonly encoding: Encoding;
  count(text: string): number;
}

const loading = new Map<Encoding, Promise<TokenCounter>>();
const loaded = new Map<Encoding, TokenCounter>();

/** The counter for `encoding`, loading its tables the first time. */
export function tokenCounter(encoding: Encoding = DEFAULT_ENCODING): Promise<TokenCounter> {
  let counter = loading.get(encoding);
  if (!counter) {
    counter = importEncoding(encoding).then((module) => {
      const ready: TokenCounter = { encoding, count: (text) => (text === '' ? 0 : module.countTokens(text)) };
      loaded.set(encoding, ready);
      return ready;
    });
    loading.set(encoding, counter);
  }
  return counter;
}

/** The counter for `encoding` if it is already loaded (no waiting), else undefined. */
export function loadedTokenCounter(encoding: Encoding = DEFAULT_ENCODING): TokenCounter | undefined {
  return loaded.get(encoding);
}

type EncodingModule = { countTokens(text: string): number };

// A switch of literal paths, so that each import is visible to the compiler and to bundlers.
function importEncoding(encoding: Encoding): Promise<EncodingModule> {
  switch (encoding) {
    case 'o200k_base':
      return import('gpt-tokenizer/encoding/o200k_base');
    case 'cl100k_base':
      return import('gpt-tokenizer/encoding/cl100k_base');
    case 'p50k_base':
      return import('gpt-tokenizer/encoding/p50k_base');
    case 'r50k_base':
      return import('gpt-tokenizer/encoding/r50k_base');
    case 'o200k_harmony':
      return import('gpt-tokenizer/encoding/o200k_harmony');
  }
}
