/** The bench's defaults, apart from the rest so the CLI's help can show them without loading the bench. */
export const BENCH_DEFAULTS = {
  requests: 20,
  concurrency: 2,
  // Long enough that answers run into max_tokens, so every request streams about as much.
  prompt: 'Write a short story about a lighthouse keeper who finds a message in a bottle.',
  maxTokens: 128,
} as const;
