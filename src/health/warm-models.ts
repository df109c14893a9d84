import type { Dispatcher } from 'undici';
import type { Config, Tier } from '../config/schema.js';
import { allTiers } from '../config/all-tiers.js';
import { redactSecrets } from '../providers/redact-secrets.js';
import { Deadline } from './deadline.js';
import { recordLoaded } from './loaded-models.js';
import { besideApiRoot, getJson, isOllama } from './model-list.js';

/**
 * `warm: true` (SPEC "Warm models and hedged first tokens"): at serve's and exec's start, the
 * tier's server is asked to load its model, in the way the server documents, so a session's
 * first prompt does not pay the load. Ollama: `POST /api/generate` with the model and no
 * prompt (its documented load request), with the tier's keep_alive as written; llama.cpp's
 * router mode: `POST /models/load`. Other servers document no load request: nothing is sent.
 */
export async function warmModel(tier: Tier, opts: { timeoutMs: number; dispatcher?: Dispatcher }): Promise<{ ok: boolean; message: string }> {
  const base = new URL(tier.provider.base_url);
  const deadline = new Deadline(opts.timeoutMs, undefined);
  const http = { signal: deadline.signal, dispatcher: opts.dispatcher };
  try {
    if (isOllama(tier.provider)) {
      const body: Record<string, unknown> = { model: tier.model };
      if (tier.ollama.keep_alive !== undefined) body.keep_alive = tier.ollama.keep_alive;
      const answer = await getJson(besideApiRoot(base, '/api/generate'), tier.provider, http, body);
      return settle(tier, answer.status, answer.message);
    }
    if (tier.provider.type === 'openai') {
      const answer = await getJson(besideApiRoot(base, '/models/load'), tier.provider, http, { model: tier.model });
      return settle(tier, answer.status, answer.message);
    }
    return { ok: false, message: `${tier.provider.type} documents no load request` };
  } catch (error) {
    return { ok: false, message: redactSecrets(deadline.timedOut ? `no answer within ${opts.timeoutMs} ms` : (error as Error).message, tier.provider) };
  } finally {
    deadline.dispose();
  }
}

function settle(tier: Tier, status: number, message: string): { ok: boolean; message: string } {
  const ok = status >= 200 && status < 300;
  // Ollama answers once the model is in memory; llama.cpp's router once it started loading it.
  if (ok && isOllama(tier.provider)) recordLoaded(tier, true);
  return { ok, message: ok ? 'load requested' : `HTTP ${status}: ${redactSecrets(message, tier.provider)}` };
}

/** Every `warm: true` tier of the config (each server and model once), in the background; never throws. */
export function warmTiers(config: Config, dispatcher?: Dispatcher): Promise<void> {
  const seen = new Set<string>();
  const asks: Promise<unknown>[] = [];
  for (const tier of allTiers(config)) {
    const key = `${tier.provider.base_url}\u0000${tier.model}`;
    if (!tier.warm || seen.has(key)) continue;
    seen.add(key);
    // A load can take a while: the tier's cold TTFT budget bounds it.
    asks.push(warmModel(tier, { timeoutMs: tier.timeouts.cold_ttft_ms + tier.timeouts.connect_ms, dispatcher }));
  }
  return Promise.all(asks).then(() => undefined);
}
