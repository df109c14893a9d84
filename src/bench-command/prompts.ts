import { randomBytes } from 'node:crypto';

/**
 * The prompt of each bench request. By default every one differs from its first character
 * on (a random nonce, then the prompt), so a server's prompt cache (llama.cpp, vLLM prefix
 * caching) cannot answer from a prefix it already computed: the bench measures what a new
 * conversation waits. Only what the chat template puts before the user's text (a default
 * system prompt) can still come from the cache. `samePrompt` sends the prompt as given every
 * time, to measure the cached path.
 */
export function benchPrompts(prompt: string, samePrompt: boolean, nonce = (): string => randomBytes(4).toString('hex')): () => string {
  if (samePrompt) return () => prompt;
  return () => `[${nonce()}] ${prompt}`;
}
