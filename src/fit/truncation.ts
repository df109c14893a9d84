import type { Tier } from '../config/schema.js';
import type { Usage } from '../protocols/core/usage.js';
import type { PromptCount } from '../protocols/core/prompt-tokens.js';
import { learnWindow } from './tier-facts.js';
import { profileOf } from '../protocols/profiles.js';

/** A tier that reports reading under this share of the prompt counted before sending cut it (Ollama does so silently). */
const TRUNCATED_BELOW = 0.7;

/**
 * Text runs at 3–5 bytes of JSON body per token; a tier that says it read fewer tokens than
 * one per this many bytes read suspiciously little: only then is the prompt counted to see.
 */
const SUSPICIOUS_BYTES_PER_TOKEN = 6;
/** Bodies this small are never checked late: no local server's window is that small. */
const SMALLEST_CHECKED_BYTES = 4096;
/**
 * A late check never learns a window under this: a truncation reads about a whole window (Ollama's
 * smallest default is 2,048), while an Ollama that counts only the tokens its KV cache did not
 * hold (versions before its fix, ollama#16414) reports an agent's new turn — tens or hundreds.
 */
const SMALLEST_WINDOW = 1024;

export interface Truncation {
  sent: number;
  read: number;
}

/**
 * docs/fit.md: a local tier's reported prompt tokens against the count made before
 * sending (made only near a limit, so only then compared). A truncation teaches the tier's
 * window — what it read — until discovery says otherwise.
 */
export function detectTruncation(tier: Tier, usage: Usage | undefined, prompt: PromptCount): Truncation | undefined {
  if (!cutsSilently(tier)) return undefined;
  const sent = prompt.made;
  if (sent === undefined || !usage || usage.prompt_tokens <= 0) return undefined;
  // Cached tokens are read too, whatever the protocol calls them.
  return judge(tier, sent, usage.prompt_tokens);
}

/**
 * Silent truncation on a tier whose window is unknown (no count was made before sending): after
 * the answer, off the request path. The body's size bounds what the tier should have read; only
 * a reported prompt far below it is counted, and a truncation found goes to `found` (its own log
 * line: the request's has been written).
 */
export function watchTruncation(tier: Tier, usage: Usage | undefined, prompt: PromptCount, bodyBytes: number, found: (truncation: Truncation) => void): void {
  if (!servesOpenModels(tier) || prompt.made !== undefined || !usage || usage.prompt_tokens <= 0) return;
  const read = usage.prompt_tokens;
  if (read < SMALLEST_WINDOW || bodyBytes < SMALLEST_CHECKED_BYTES || read * SUSPICIOUS_BYTES_PER_TOKEN >= bodyBytes) return;
  setImmediate(() => {
    prompt.tokens(tier.tokenizer).then(
      (sent) => {
        const truncation = judge(tier, sent, read);
        if (truncation) found(truncation);
      },
      () => undefined,
    ); // a count that fails tells nothing: the request was answered either way
  });
}

// Local servers cut silently; a cloud API refuses instead, and its usage (cache accounting,
// gateways that report 0) must never teach it a tiny window it would keep.
function cutsSilently(tier: Tier): boolean {
  return tier.provider.local || profileOf(tier.provider).truncatesSilently(tier.provider);
}

/**
 * Stricter for the late check, which needs no count made near a limit: only the servers that cut
 * (Ollama, and Chat Completions servers on this machine: llama.cpp, vLLM, LM Studio, Ollama's /v1).
 * An Anthropic or Responses endpoint on loopback is a gateway to a cloud API, which refuses
 * instead — and seen in Claude Code's real run: a low usage figure there must not teach a window.
 */
function servesOpenModels(tier: Tier): boolean {
  return profileOf(tier.provider).truncatesSilently(tier.provider);
}

function judge(tier: Tier, sent: number, read: number): Truncation | undefined {
  if (read >= sent * TRUNCATED_BELOW) return undefined;
  learnWindow(tier, read);
  return { sent, read };
}
