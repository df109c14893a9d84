import type { Dispatcher } from 'undici';
import type { Config, Tier } from '../config/schema.js';
import { allTiers } from '../config/all-tiers.js';
import { redactSecrets } from '../providers/redact-secrets.js';
import { Deadline } from './deadline.js';
import { profileOf } from '../protocols/profiles.js';
import { recordLoaded } from './loaded-models.js';
import { askServer } from './upstream-models.js';

/**
 * `warm: true` (docs/hedging.md): at serve's and exec's start, the
 * tier's server is asked to load its model, in the way the server documents, so a session's
 * first prompt does not pay the load. Ollama: `POST /api/generate` with the model and no
 * prompt (its documented load request), with the tier's keep_alive as written. A server that
 * says the model is not loaded yet: llama.cpp's router `POST /models/load`, LM Studio (0.4+)
 * `POST /api/v1/models/load` (asked only when not loaded: a second request loads a second
 * instance). llama-swap documents no load request (a model loads on its first request).
 */
export async function warmModel(tier: Tier, opts: { timeoutMs: number; dispatcher?: Dispatcher }): Promise<{ ok: boolean; message: string }> {
  const deadline = new Deadline(opts.timeoutMs, undefined);
  const http = { signal: deadline.signal, dispatcher: opts.dispatcher };
  try {
    const answer = await profileOf(tier.provider).warm(tier, askServer(tier.provider, http));
    if ('noLoad' in answer) return { ok: false, message: `${answer.noLoad} documents no load request` };
    if (answer.already) return { ok: true, message: 'already loaded' };
    const ok = answer.status >= 200 && answer.status < 300;
    // Ollama answers once the model is in memory; llama.cpp's router once it started loading it.
    if (ok && answer.loadedNow) recordLoaded(tier, true);
    return { ok, message: ok ? 'load requested' : `HTTP ${answer.status}: ${redactSecrets(answer.message, tier.provider)}` };
  } catch (error) {
    return { ok: false, message: redactSecrets(deadline.timedOut ? `no answer within ${opts.timeoutMs} ms` : (error as Error).message, tier.provider) };
  } finally {
    deadline.dispose();
  }
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
