import type { Tier } from '../config/schema.js';
import { askedMaxTokens, type PromptCount } from '../protocols/core/prompt-tokens.js';
import type { ClientRequest } from '../protocols/core/types.js';
import { OUTPUT_RESERVE_CAP } from './fit-check.js';
import { type Discovered, discoveredOf } from './tier-facts.js';
import { profileOf } from '../protocols/profiles.js';

/** Ollama's windows grow in these steps: 4096·2^k. */
const STEP = 4096;
/** Room for the difference between llm-route's tokenizer and the model's: Ollama truncates silently when it is short. */
const MARGIN = 1.2;

/**
 * docs/fit.md: the `options.num_ctx` an ollama-type tier gets for this request when its
 * tier file sets none — the loaded runner's window when the request fits it (no reload), else
 * the smallest 4096·2^k that fits, at most the model's `context_length`. Undefined: nothing
 * known (the server's own default applies) or the tier sets num_ctx itself.
 */
export function ollamaNumCtx(tier: Tier, request: ClientRequest, body: string, prompt: PromptCount): number | undefined | Promise<number | undefined> {
  if (!profileOf(tier.provider).windowPerRequest || tier.ollama.num_ctx !== undefined) return undefined;
  const found = discoveredOf(tier);
  // A configured `context` caps the window too (the user's choice of memory), else the model's own.
  const configured = tier.fit.context === 'auto' ? undefined : tier.fit.context;
  const modelContext =
    configured !== undefined && found?.modelContext !== undefined ? Math.min(configured, found.modelContext) : (configured ?? found?.modelContext);
  if (found === undefined || modelContext === undefined) return undefined;
  const reserve = Math.min(askedMaxTokens(request) ?? OUTPUT_RESERVE_CAP, OUTPUT_RESERVE_CAP);
  const loaded = found.loadedContext;
  // A token is at least a byte: a body this small fits without a count.
  const bytesNeed = (Buffer.byteLength(body) + reserve) * MARGIN;
  if (loaded !== undefined ? bytesNeed <= loaded : bytesNeed <= STEP) return remember(found, windowFor(bytesNeed, loaded, modelContext));
  return prompt.tokens(tier.tokenizer).then((tokens) => remember(found, windowFor((tokens + reserve) * MARGIN, loaded, modelContext)));
}

/** The runner now has this window (Ollama loads the model with it): the next request that fits reuses it, no reload. */
function remember(found: Discovered, window: number): number {
  found.loadedContext = window;
  return window;
}

export function windowFor(need: number, loaded: number | undefined, modelContext: number): number {
  if (loaded !== undefined && need <= loaded) return loaded;
  let window = STEP;
  while (window < need && window < modelContext) window *= 2;
  return Math.min(window, modelContext);
}
