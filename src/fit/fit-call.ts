import type { Tier } from '../config/schema.js';
import { UpstreamCall } from '../protocols/call.js';
import type { ClientRequest } from '../protocols/core/types.js';
import { fitEmbeddings } from './embedding-fit.js';
import { checkFit, type FitVerdict } from './fit-check.js';
import { ollamaNumCtx } from './ollama-window.js';
import type { PromptCount } from '../protocols/core/prompt-tokens.js';

export type FittedCall = { fits: true; call: UpstreamCall } | Exclude<FitVerdict, { fits: true }>;

/**
 * The routing loop's one step for fit: skip the tier when the request cannot fit it, else the
 * call to send — for an Ollama tier with the window it needs. Synchronous unless a count is
 * needed (a prompt near a limit), so a route with no known window pays no await. `prepare`
 * writes the call again for the tier with the window it needs.
 */
export function fitCall(tier: Tier, request: ClientRequest, call: UpstreamCall, prompt: PromptCount, prepare: Prepare): FittedCall | Promise<FittedCall> {
  // An embeddings batch: each input fits on its own (docs/embeddings.md).
  if (call.embedding) return fitEmbeddings(tier, call);
  const verdict = checkFit(tier, request, call.request.body, prompt);
  if (verdict instanceof Promise) return verdict.then((v) => withWindow(v, tier, request, call, prompt, prepare));
  return withWindow(verdict, tier, request, call, prompt, prepare);
}

/** Writes the request for a tier (a resume's continuation writes it its own way). */
export type Prepare = (tier: Tier) => UpstreamCall | { unsupported: string };

function withWindow(
  verdict: FitVerdict,
  tier: Tier,
  request: ClientRequest,
  call: UpstreamCall,
  prompt: PromptCount,
  prepare: Prepare,
): FittedCall | Promise<FittedCall> {
  if (!verdict.fits) return verdict;
  const window = ollamaNumCtx(tier, request, call.request.body, prompt);
  if (window === undefined) return { fits: true, call };
  if (window instanceof Promise) return window.then((numCtx) => ({ fits: true, call: windowed(tier, call, numCtx, prepare) }));
  return { fits: true, call: windowed(tier, call, window, prepare) };
}

/** The window is set, not hoped for: Ollama cuts a longer prompt silently. */
function windowed(tier: Tier, call: UpstreamCall, numCtx: number | undefined, prepare: Prepare): UpstreamCall {
  if (numCtx === undefined) return call;
  const prepared = prepare({ ...tier, ollama: { ...tier.ollama, num_ctx: numCtx } });
  return prepared instanceof UpstreamCall ? prepared : call;
}
