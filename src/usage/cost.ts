import type { Price } from '../config/schema.js';

/** The token counts a cost is computed from (OpenAI's convention: `prompt` includes `cached`). */
export interface TokenCounts {
  prompt: number;
  completion: number;
  cached: number;
}

/**
 * USD for these tokens at this price (docs/usage.md): (prompt − cached) × input + cached × cached input
 * (default: the input price) + completion × output, per million tokens.
 */
export function costUsd(price: Price, tokens: TokenCounts): number {
  const cached = Math.min(tokens.cached, tokens.prompt);
  const cachedPrice = price.cached_input_per_mtok ?? price.input_per_mtok;
  return ((tokens.prompt - cached) * price.input_per_mtok + cached * cachedPrice + tokens.completion * price.output_per_mtok) / 1_000_000;
}
