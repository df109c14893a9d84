import type { Tier } from '../config/schema.js';
import type { UpstreamCall } from '../protocols/call.js';
import type { EmbeddingInput } from '../protocols/core/embedding-codec.js';
import { isUnsupported } from '../protocols/core/types.js';
import { memoizedCounter, prefixEnd, type TokenCounter, tokenCounter } from '../tokens/count.js';
import type { FitVerdict } from './fit-check.js';
import { type TierFit, tierFit } from './tier-facts.js';

/** The batch's call for the tier (its inputs cut to fit, where they were), or why it is skipped. */
export type FittedBatch = { fits: true; call: UpstreamCall } | Extract<FitVerdict, { outcome: 'too_long' }>;

/**
 * docs/embeddings.md: may `tier` be sent this batch? Each input is a prompt of its own: one
 * longer than the tier's window (or its max_prompt_tokens) is cut to fit when the client allows
 * it (Ollama's `truncate`, default true), else the tier is skipped as too long — nothing is
 * sent, and when every tier is, the client gets a 400 before any was tried. Counted with the
 * tier's tokenizer, as every prompt is; no known window, no count.
 */
export function fitEmbeddings(tier: Tier, call: UpstreamCall): FittedBatch | Promise<FittedBatch> {
  const embedding = call.embedding;
  if (!embedding) return { fits: true, call };
  const fit = tierFit(tier);
  const room = Math.min(fit.context ?? Infinity, fit.maxPromptTokens ?? Infinity);
  const { inputs } = embedding.job;
  // A UTF-16 unit is at most 3 UTF-8 bytes, a token at least one: such an input fits without a count.
  if (room === Infinity || inputs.every((input) => surelyFits(input, room))) return { fits: true, call };
  return tokenCounter(tier.tokenizer).then((counter) => fitted(tier, call, fit, room, memoizedCounter(counter)));
}

function surelyFits(input: EmbeddingInput, room: number): boolean {
  return typeof input === 'string' ? input.length * 3 <= room : input.length <= room;
}

function fitted(tier: Tier, call: UpstreamCall, fit: TierFit, room: number, counter: TokenCounter): FittedBatch {
  const { inputs } = call.embedding?.job ?? { inputs: [] };
  const truncate = call.embedding?.job.truncates ?? false;
  let cut: EmbeddingInput[] | null = null;
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i];
    if (surelyFits(input, room)) continue;
    const tokens = typeof input === 'string' ? counter.count(input) : input.length;
    if (tokens <= room) continue;
    if (!truncate) {
      const why = fit.maxPromptTokens === room ? `max_prompt_tokens (${room})` : `${room}-token window (${fit.contextSource})`;
      const message = `input ${i} of ${tokens} tokens does not fit tier "${tier.name}"'s ${why}, and the client did not allow cutting it`;
      return { fits: false, outcome: 'too_long', message, prompt: tokens, need: tokens, limit: room, fit };
    }
    cut ??= inputs.slice();
    cut[i] =
      typeof input === 'string'
        ? input.slice(
            0,
            prefixEnd(input, room, tokens, (text) => counter.count(text)),
          )
        : input.slice(0, room);
  }
  if (!cut) return { fits: true, call };
  const again = call.withInputs(cut);
  return isUnsupported(again) ? { fits: true, call } : { fits: true, call: again };
}
