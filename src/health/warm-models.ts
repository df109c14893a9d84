import type { Dispatcher } from 'undici';
import type { Config, Tier } from '../config/schema.js';
import { allTiers } from '../config/all-tiers.js';
import { redactSecrets } from '../providers/redact-secrets.js';
import { Deadline } from './deadline.js';
import { readServerWord, recordLoaded, type ServerWord } from './loaded-models.js';
import { besideApiRoot, getJson, isOllama } from './upstream-models.js';

/**
 * `warm: true` (SPEC "Warm models and hedged first tokens"): at serve's and exec's start, the
 * tier's server is asked to load its model, in the way the server documents, so a session's
 * first prompt does not pay the load. Ollama: `POST /api/generate` with the model and no
 * prompt (its documented load request), with the tier's keep_alive as written. A server that
 * says the model is not loaded yet: llama.cpp's router `POST /models/load`, LM Studio (0.4+)
 * `POST /api/v1/models/load` (asked only when not loaded: a second request loads a second
 * instance). llama-swap documents no load request (a model loads on its first request).
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
    const word = await readServerWord(tier, http);
    if (word?.loaded) return { ok: true, message: 'already loaded' };
    const path = word ? LOAD_PATHS[word.server] : undefined;
    if (!path) return { ok: false, message: `${word?.server ?? tier.provider.type} documents no load request` };
    const answer = await getJson(besideApiRoot(base, path), tier.provider, http, { model: tier.model });
    return settle(tier, answer.status, answer.message);
  } catch (error) {
    return { ok: false, message: redactSecrets(deadline.timedOut ? `no answer within ${opts.timeoutMs} ms` : (error as Error).message, tier.provider) };
  } finally {
    deadline.dispose();
  }
}

const LOAD_PATHS: Partial<Record<ServerWord['server'], string>> = { 'llama.cpp router': '/models/load', lmstudio: '/api/v1/models/load' };

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
