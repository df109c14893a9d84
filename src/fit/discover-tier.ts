import type { Tier } from '../config/schema.js';
import { Deadline, type Http } from '../health/deadline.js';
import { besideApiRoot, getJson, isOllama, servesModel } from '../health/upstream-models.js';
import { modelListUrl } from '../health/provider-http.js';
import { redactSecrets } from '../providers/redact-secrets.js';
import { isRecord } from '../util/is-record.js';
import { isLocalNetworkHost } from '../util/loopback.js';
import type { Discovered } from './tier-facts.js';
import type { Dispatcher } from 'undici';

/** What discovery learned, or why it learned nothing (a slow, failing or malformed answer: unknown). */
export interface Discovery {
  facts: Discovered;
  /** Set when an endpoint failed to answer or answered garbage (not when a server simply documents none). */
  error?: string;
  /** Every endpoint tried failed: the server is probably down. */
  unreachable?: true;
}

/**
 * A tier's context window, vision and tools, from what its server itself documents (SPEC
 * "Route by fit"): Ollama `POST /api/show` + `GET /api/ps`; for an openai-type server, vLLM's
 * `max_model_len` in `/v1/models`, llama.cpp's `/props`, LM Studio's `/api/v0/models`, first
 * that answers. Bounded by `timeoutMs`; never throws.
 */
export async function discoverTier(tier: Tier, opts: { timeoutMs: number; signal?: AbortSignal; dispatcher?: Dispatcher }): Promise<Discovery> {
  if (tier.provider.type === 'anthropic') return { facts: {} };
  const deadline = new Deadline(opts.timeoutMs, opts.signal);
  const http: Http = { signal: deadline.signal, dispatcher: opts.dispatcher };
  const errors: string[] = [];
  const attempt = async <T>(what: string, read: () => Promise<T | null>): Promise<T | null> => {
    try {
      return await read();
    } catch (error) {
      errors.push(`${what}: ${deadline.timedOut ? `no answer within ${opts.timeoutMs} ms` : (error as Error).message}`);
      return null;
    }
  };
  try {
    // A cloud API documents none of llama.cpp's or LM Studio's endpoints: it gets only the model list its health check reads anyway.
    const local = isLocalNetworkHost(new URL(tier.provider.base_url).hostname);
    const readers = isOllama(tier.provider) ? [ollama] : local ? [vllm, llamaCpp, lmStudio] : [vllm];
    let tried = 0;
    for (const reader of readers) {
      tried++;
      const facts = await attempt(reader.name, () => reader(tier, http));
      if (facts) return { facts };
      if (deadline.timedOut || deadline.cancelled) break;
    }
    // A server that documents none answers 404s (no error); one that failed or was too slow says why.
    if (errors.length === 0) return { facts: {} };
    return { facts: {}, error: redactSecrets(errors.join('; '), tier.provider), ...(errors.length === tried ? { unreachable: true } : {}) };
  } finally {
    deadline.dispose();
  }
}

const positive = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined);

/** Ollama: `model_info["<arch>.context_length"]` and `capabilities` from /api/show; the loaded runner's `context_length` from /api/ps. */
async function ollama(tier: Tier, http: Http): Promise<Discovered | null> {
  const base = new URL(tier.provider.base_url);
  const show = await getJson(besideApiRoot(base, '/api/show'), tier.provider, http, { model: tier.model });
  if (show.status !== 200 || !isRecord(show.json)) throw new Error(`/api/show answered HTTP ${show.status}${isRecord(show.json) ? '' : ' without JSON'}`);
  const info = isRecord(show.json.model_info) ? show.json.model_info : {};
  const arch = typeof info['general.architecture'] === 'string' ? info['general.architecture'] : null;
  const modelContext = positive(arch ? info[`${arch}.context_length`] : undefined);
  const capabilities = Array.isArray(show.json.capabilities) ? show.json.capabilities.filter((c): c is string => typeof c === 'string') : null;
  const facts: Discovered = { source: 'ollama /api/show' };
  if (modelContext) [facts.context, facts.modelContext] = [modelContext, modelContext];
  if (capabilities) [facts.vision, facts.tools] = [capabilities.includes('vision'), capabilities.includes('tools')];
  if (capabilities?.includes('thinking')) facts.thinking = true;
  const ps = await getJson(besideApiRoot(base, '/api/ps'), tier.provider, http).catch(() => null);
  if (ps && isRecord(ps.json) && Array.isArray(ps.json.models)) {
    const runner = ps.json.models.find((m: unknown) => isRecord(m) && typeof m.name === 'string' && servesModel([m.name], tier.model));
    const loaded = isRecord(runner) ? positive(runner.context_length) : undefined;
    if (loaded) facts.loadedContext = loaded;
  }
  return facts;
}

/** vLLM: `max_model_len` on the model's entry in `GET /v1/models`. */
async function vllm(tier: Tier, http: Http): Promise<Discovered | null> {
  const answer = await getJson(modelListUrl(tier.provider), tier.provider, http);
  if (answer.status !== 200 || !isRecord(answer.json) || !Array.isArray(answer.json.data)) return null;
  const entry = answer.json.data.find((m: unknown) => isRecord(m) && m.id === tier.model);
  const context = isRecord(entry) ? positive(entry.max_model_len) : undefined;
  return context ? { context, source: 'vllm /v1/models' } : null;
}

/** llama.cpp: `default_generation_settings.n_ctx` of `GET /props` (one slot's window) and `modalities.vision`. */
async function llamaCpp(tier: Tier, http: Http): Promise<Discovered | null> {
  const answer = await getJson(besideApiRoot(new URL(tier.provider.base_url), '/props'), tier.provider, http);
  if (answer.status === 200 && answer.json === undefined) throw new Error('/props answered HTTP 200 without JSON');
  if (answer.status !== 200 || !isRecord(answer.json)) return null;
  const settings = isRecord(answer.json.default_generation_settings) ? answer.json.default_generation_settings : {};
  const context = positive(settings.n_ctx);
  if (!context) return null;
  const facts: Discovered = { context, source: 'llama.cpp /props' };
  const modalities = answer.json.modalities;
  if (isRecord(modalities) && typeof modalities.vision === 'boolean') facts.vision = modalities.vision;
  return facts;
}

/** LM Studio: `loaded_context_length` (else `max_context_length`) and `type: "vlm"` on the model's entry in `GET /api/v0/models`. */
async function lmStudio(tier: Tier, http: Http): Promise<Discovered | null> {
  const answer = await getJson(besideApiRoot(new URL(tier.provider.base_url), '/api/v0/models'), tier.provider, http);
  if (answer.status !== 200 || !isRecord(answer.json) || !Array.isArray(answer.json.data)) return null;
  const entry = answer.json.data.find((m: unknown) => isRecord(m) && m.id === tier.model);
  if (!isRecord(entry)) return null;
  const context = positive(entry.loaded_context_length) ?? positive(entry.max_context_length);
  if (!context) return null;
  const facts: Discovered = { context, source: 'lmstudio /api/v0/models' };
  if (entry.type === 'vlm') facts.vision = true;
  else if (entry.type === 'llm') facts.vision = false;
  return facts;
}
