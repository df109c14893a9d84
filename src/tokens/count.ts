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
      const ready: TokenCounter = { encoding, count: (text) => countBounded(module, text) };
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

/**
 * Token estimates for the holds on budgets and tpm, made on the request path, so cheap: the real
 * tokenizer when it is already loaded in this thread, else a third of the UTF-8 bytes (a
 * generous count for English and code). What is billed is settled later from the upstream's usage.
 */
export function estimateTokens(text: string): number {
  if (text === '') return 0;
  const counter = loadedTokenCounter();
  return counter ? counter.count(text) : Math.ceil(Buffer.byteLength(text) / 3);
}

type EncodingModule = { countTokens(text: string): number };

/**
 * BPE merges within a run of characters without a space in time quadratic in its length
 * (64k of "x" take 3.5 s, a megabyte never ends): a longer run is counted in pieces of this
 * size, which costs at most a token at each cut and keeps counting linear.
 */
const MAX_RUN = 1024;
const LONG_RUN = new RegExp(`\\S{${MAX_RUN + 1},}`, 'g');

function countBounded(module: EncodingModule, text: string): number {
  if (text.length <= MAX_RUN) return text === '' ? 0 : module.countTokens(text);
  let total = 0;
  let from = 0;
  LONG_RUN.lastIndex = 0;
  for (let match = LONG_RUN.exec(text); match !== null; match = LONG_RUN.exec(text)) {
    if (match.index > from) total += module.countTokens(text.slice(from, match.index));
    const run = match[0];
    for (let i = 0; i < run.length; i += MAX_RUN) total += module.countTokens(run.slice(i, i + MAX_RUN));
    from = match.index + run.length;
  }
  if (from < text.length) total += module.countTokens(from === 0 ? text : text.slice(from));
  return total;
}

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

// ─── cutting a text to a budget ─────────────────────────────────────────────

/**
 * The end of a prefix of `text` of at most `budget` tokens (`total`: the whole text's count),
 * found from its characters per token and checked by counting (a few counts, not one per cut),
 * never splitting a surrogate pair. What cuts a text to a token budget: a tool output a saver
 * shortens, an embedding input cut to a tier's window.
 */
export function prefixEnd(text: string, budget: number, total: number, count: (text: string) => number): number {
  if (budget <= 0) return 0;
  let end = Math.floor((text.length * budget) / total);
  for (let i = 0; i < 8 && end > 0; i++) {
    const tokens = count(text.slice(0, end));
    if (tokens <= budget) break;
    end = Math.floor(((end * budget) / tokens) * 0.97);
  }
  return isLowSurrogate(text.charCodeAt(end)) ? end - 1 : end;
}

export function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
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
