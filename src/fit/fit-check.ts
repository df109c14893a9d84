import type { Tier } from '../config/schema.js';
import { askedMaxTokens, type PromptCount } from '../protocols/core/prompt-tokens.js';
import { type ClientRequest, isUnsupported } from '../protocols/core/types.js';
import { type TierFit, tierFit } from './tier-facts.js';

/** The output a prompt must leave room for: the request's max_tokens, at most this. */
export const OUTPUT_RESERVE_CAP = 1024;

export type FitVerdict =
  | { fits: true; fit: TierFit | null; prompt?: number }
  | { fits: false; outcome: 'too_long'; message: string; prompt: number; need: number; limit: number; fit: TierFit }
  | { fits: false; outcome: 'unsupported'; input: 'vision' | 'tools'; message: string; fit: TierFit };

const FITS: FitVerdict = { fits: true, fit: null };

/** Whether the tier has any limit that could make it skip a request (else the check costs nothing). */
function hasLimits(fit: TierFit): boolean {
  return fit.context !== undefined || fit.maxPromptTokens !== undefined || fit.vision === false || fit.tools === false;
}

/**
 * docs/fit.md: may `tier` be sent this request? `body` is the tier's request body as
 * it will be sent. Cheap by construction: no known limit, no work; a body whose UTF-8 bytes
 * are fewer than the room left fits without a count (a token is at least one byte); only a
 * prompt near a limit is counted. A prompt whose count plus the output reserve exceeds the
 * window is skipped, so one at ≤ 80% is always sent and one at ≥ 120% never is.
 */
export function checkFit(tier: Tier, request: ClientRequest, body: string, prompt: PromptCount): FitVerdict | Promise<FitVerdict> {
  const fit = tierFit(tier);
  if (!hasLimits(fit)) return FITS;
  if (fit.vision === false || fit.tools === false) {
    const input = unsupportedInput(request, body, fit);
    if (input)
      return {
        fits: false,
        outcome: 'unsupported',
        input,
        message: `tier "${tier.name}" takes no ${input === 'vision' ? 'images' : 'tools'} (${input}: false)`,
        fit,
      };
  }
  if (fit.context === undefined && fit.maxPromptTokens === undefined) return { fits: true, fit };
  const reserve = Math.min(askedMaxTokens(request) ?? OUTPUT_RESERVE_CAP, OUTPUT_RESERVE_CAP);
  const room = Math.min(fit.context === undefined ? Infinity : fit.context - reserve, fit.maxPromptTokens ?? Infinity);
  // A UTF-16 unit is at most 3 UTF-8 bytes: this bound costs nothing; the exact byte length little.
  if (body.length * 3 <= room || Buffer.byteLength(body) <= room) return { fits: true, fit };
  return prompt.tokens(tier.tokenizer).then((tokens) => judge(tier, fit, tokens, reserve));
}

function judge(tier: Tier, fit: TierFit, tokens: number, reserve: number): FitVerdict {
  if (fit.maxPromptTokens !== undefined && tokens > fit.maxPromptTokens) {
    return {
      fits: false,
      outcome: 'too_long',
      prompt: tokens,
      need: tokens,
      limit: fit.maxPromptTokens,
      fit,
      message: `prompt of ${tokens} tokens is over tier "${tier.name}"'s max_prompt_tokens (${fit.maxPromptTokens})`,
    };
  }
  if (fit.context !== undefined && tokens + reserve > fit.context) {
    return {
      fits: false,
      outcome: 'too_long',
      prompt: tokens,
      need: tokens + reserve,
      limit: fit.context,
      fit,
      message: `prompt of ${tokens} tokens + ${reserve} for the answer does not fit tier "${tier.name}"'s ${fit.context}-token window (${fit.contextSource})`,
    };
  }
  return { fits: true, fit, prompt: tokens };
}

function unsupportedInput(request: ClientRequest, body: string, fit: TierFit): 'vision' | 'tools' | null {
  // Every protocol's body names its images and tools so: without the word, none (no neutral form made).
  const maybeTools = fit.tools === false && body.includes('"tools"');
  const maybeImages = fit.vision === false && body.includes('image');
  if (!maybeTools && !maybeImages) return null;
  const neutral = request.neutral();
  if (isUnsupported(neutral)) return null;
  if (maybeTools && neutral.tools.length > 0) return 'tools';
  if (maybeImages && neutral.messages.some((m) => m.role !== 'assistant' && m.content.some((p) => p.type === 'image'))) return 'vision';
  return null;
}
