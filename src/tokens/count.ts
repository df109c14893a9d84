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

// ─── remembered counts ──────────────────────────────────────────────────────

const MEMO_MIN_CHARS = 32; // shorter texts count faster than they hash
const MEMO_MAX_CHARS = 8_000_000;
const memos = new WeakMap<TokenCounter, TokenCounter>();

/**
 * `counter`, remembering the counts of the texts it has seen (least recently used first out,
 * up to 8 M characters in all). An agent re-sends its whole history with every request, so
 * counting a request's contents mostly re-counts texts seen a request earlier. One memo per
 * counter, kept across calls.
 */
export function memoizedCounter(counter: TokenCounter): TokenCounter {
  let memoized = memos.get(counter);
  if (!memoized) {
    const counts = new Map<string, number>();
    let chars = 0;
    memoized = {
      encoding: counter.encoding,
      count(text) {
        if (text.length < MEMO_MIN_CHARS) return counter.count(text);
        const known = counts.get(text);
        if (known !== undefined) {
          counts.delete(text); // re-inserted below: the Map's order is its recency
          counts.set(text, known);
          return known;
        }
        const tokens = counter.count(text);
        counts.set(text, tokens);
        chars += text.length;
        for (const [old] of counts) {
          if (chars <= MEMO_MAX_CHARS) break;
          counts.delete(old);
          chars -= old.length;
        }
        return tokens;
      },
    };
    memos.set(counter, memoized);
    memos.set(memoized, memoized);
  }
  return memoized;
}
