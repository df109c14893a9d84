import type { Tier } from '../config/schema.js';
import type { Usage } from '../protocols/usage.js';
import type { PromptCount } from './prompt-count.js';
import { learnWindow } from './tier-facts.js';

/** A tier that reports reading under this share of the prompt counted before sending cut it (Ollama does so silently). */
const TRUNCATED_BELOW = 0.7;

/**
 * SPEC "Route by fit": a local tier's reported prompt tokens against the count made before
 * sending (made only near a limit, so only then compared). A truncation teaches the tier's
 * window — what it read — until discovery says otherwise.
 */
export function detectTruncation(tier: Tier, usage: Usage | undefined, prompt: PromptCount): { sent: number; read: number } | undefined {
  // Local servers cut silently; a cloud API refuses instead, and its usage (cache accounting,
  // gateways that report 0) must never teach it a tiny window it would keep.
  if (!tier.provider.local && tier.provider.type !== 'ollama') return undefined;
  const sent = prompt.made;
  if (sent === undefined || !usage || usage.prompt_tokens <= 0) return undefined;
  // Cached tokens are read too, whatever the protocol calls them.
  const read = usage.prompt_tokens;
  if (read >= sent * TRUNCATED_BELOW) return undefined;
  learnWindow(tier, read);
  return { sent, read };
}
