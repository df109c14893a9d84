import type { Route, Tier } from '../config/schema.js';
import { UpstreamCall } from '../protocols/call.js';
import { type ClientRequest, isUnsupported } from '../protocols/core/types.js';
import type { ClientCodec } from '../protocols/core/client-codec.js';
import { missingCredential } from '../protocols/core/credential.js';
import { askedMaxTokens, PromptCount } from '../protocols/core/prompt-tokens.js';
import { fitEmbeddings } from './embedding-fit.js';
import { checkFit, OUTPUT_RESERVE_CAP } from './fit-check.js';
import type { EmbeddingInput } from '../protocols/core/embedding-codec.js';
import { tokenCounter } from '../tokens/count.js';
import { tierFit } from './tier-facts.js';

export interface ExplainedTier {
  tier: string;
  decision: 'try' | 'skip';
  /** Why skipped (`too_long`, `unsupported:vision`, `weight`, …), or what to know of a tier tried (`unreachable`); null: nothing. */
  reason: string | null;
  /** The tier's window in tokens; null: unknown. */
  context: number | null;
  /** The prompt's tokens plus the output reserve. */
  need: number;
  /** The details in words. */
  message?: string;
}

export interface Explained {
  route: string;
  /** The rule of `rules:` that chose the route (its name or index); null: the model name (or --route) did. */
  rule?: string | number | null;
  protocol: string;
  prompt_tokens: number;
  tiers: ExplainedTier[];
}

/**
 * The plan the routing loop would make for `request` (docs/fit.md), with the
 * same fit check, without sending anything. `unreachable`: tiers discovery could not reach
 * (still tried, as serve would: reason `unreachable`). A tier's weight and circuit are the
 * running server's; here a weight of 0 skips.
 * `notLocal`: tiers a local-only route or request never reaches (said `not_local`).
 */
export async function explainPlan(
  route: Route,
  codec: ClientCodec,
  request: ClientRequest,
  unreachable: ReadonlySet<Tier>,
  notLocal: ReadonlySet<Tier> = new Set(),
): Promise<Explained> {
  const prompt = new PromptCount(request);
  const promptTokens = await prompt.tokens(route.tiers[0].tokenizer);
  const reserve = Math.min(askedMaxTokens(request) ?? OUTPUT_RESERVE_CAP, OUTPUT_RESERVE_CAP);
  const tiers: ExplainedTier[] = [];
  for (const tier of route.tiers) {
    const context = tierFit(tier).context ?? null;
    // An embeddings batch: each input is a prompt of its own, the longest is what must fit.
    const need = request.embedding ? await longestInput(request.embedding.inputs, tier) : (await prompt.tokens(tier.tokenizer)) + reserve;
    const row = (decision: ExplainedTier['decision'], reason: string | null, message?: string): ExplainedTier => ({
      tier: tier.name,
      decision,
      reason,
      context,
      need,
      ...(message ? { message } : {}),
    });
    if (notLocal.has(tier)) {
      tiers.push(row('skip', 'not_local', `local only: ${new URL(tier.provider.base_url).host} is not on the local network`));
      continue;
    }
    if (tier.weight <= 0) {
      tiers.push(row('skip', 'weight', 'weight 0: switched off'));
      continue;
    }
    const missing = missingCredential(tier.provider, request.headers.credential);
    if (missing !== null) {
      tiers.push(row('skip', 'no_client_credential', `${missing} (explain takes it from --header)`));
      continue;
    }
    const call = UpstreamCall.prepare(tier, codec, request, null);
    if (isUnsupported(call)) {
      tiers.push(row('skip', 'unsupported', call.unsupported));
      continue;
    }
    const verdict = call.embedding ? await fitEmbeddings(tier, call) : await checkFit(tier, request, call.request.body, prompt);
    if (!verdict.fits) {
      tiers.push(row('skip', verdict.outcome === 'unsupported' ? `unsupported:${verdict.input}` : 'too_long', verdict.message));
      continue;
    }
    const cut = verdict.fits && 'call' in verdict ? (verdict.call.embedding?.job.cut ?? 0) : 0;
    // Not skipped: serve has no reason to think it down before trying it (its circuit opens
    // only on failures it sees), so it tries it and a refused connection fails over at once.
    if (unreachable.has(tier)) {
      tiers.push(row('try', 'unreachable', 'its server did not answer discovery: serve still tries it, and fails over to the next tier if it does not answer'));
      continue;
    }
    const weighted = tier.weight < 100 ? `weight ${tier.weight}%: tried on that share of requests` : undefined;
    const fits = weighted ?? (cut > 0 ? `${cut} input(s) cut to its ${context}-token window (the client allows it)` : fitWords(context, need));
    tiers.push(row('try', null, tier.provider.from_client ? `${fits}; sent the client's own key or login (api_key: from_client)` : fits));
  }
  return { route: route.name, protocol: request.protocol, prompt_tokens: promptTokens, tiers };
}

function fitWords(context: number | null, need: number): string {
  return context === null ? 'window unknown: sent without a pre-check' : `fits: ${need} of ${context} tokens`;
}

async function longestInput(inputs: readonly EmbeddingInput[], tier: Tier): Promise<number> {
  const counter = await tokenCounter(tier.tokenizer);
  return inputs.reduce((longest, input) => Math.max(longest, typeof input === 'string' ? counter.count(input) : input.length), 0);
}
