import type { Tier } from '../../config/schema.js';
import { isRecord } from '../../util/is-record.js';
import { besideApiRoot, type Discovered, type DiscoveryReader, positiveInt, type ServerAsk, type ServerWord, underBase } from '../core/provider-profile.js';

/**
 * The servers behind an openai-type provider, each asked in its own documented endpoints
 * (docs/fit.md, docs/hedging.md): vLLM's model list, llama.cpp's `/props` and its router mode's
 * `/models`, llama-swap's `/running`, LM Studio's `/api/v0/models`.
 */

/** vLLM: `max_model_len` on the model's entry in `GET /v1/models`. */
const vllm: DiscoveryReader = {
  name: 'vllm',
  async read(tier, ask) {
    const answer = await ask(underBase(tier.provider.base_url, '/models'));
    if (answer.status !== 200 || !isRecord(answer.json) || !Array.isArray(answer.json.data)) return null;
    const entry = answer.json.data.find((m: unknown) => isRecord(m) && m.id === tier.model);
    const context = isRecord(entry) ? positiveInt(entry.max_model_len) : undefined;
    return context ? { context, source: 'vllm /v1/models' } : null;
  },
};

/** llama.cpp: `default_generation_settings.n_ctx` of `GET /props` (one slot's window) and `modalities.vision`. */
const llamaCpp: DiscoveryReader = {
  name: 'llamaCpp',
  async read(tier, ask) {
    const answer = await ask(besideApiRoot(tier.provider.base_url, '/props'));
    if (answer.status === 200 && answer.json === undefined) throw new Error('/props answered HTTP 200 without JSON');
    if (answer.status !== 200 || !isRecord(answer.json)) return null;
    const settings = isRecord(answer.json.default_generation_settings) ? answer.json.default_generation_settings : {};
    const context = positiveInt(settings.n_ctx);
    if (!context) return null;
    const facts: Discovered = { context, source: 'llama.cpp /props' };
    const modalities = answer.json.modalities;
    if (isRecord(modalities) && typeof modalities.vision === 'boolean') facts.vision = modalities.vision;
    return facts;
  },
};

/** LM Studio: `loaded_context_length` (else `max_context_length`) and `type: "vlm"` on the model's entry in `GET /api/v0/models`. */
const lmStudio: DiscoveryReader = {
  name: 'lmStudio',
  async read(tier, ask) {
    const entry = await lmStudioEntry(tier, ask);
    if (!entry) return null;
    const context = positiveInt(entry.loaded_context_length) ?? positiveInt(entry.max_context_length);
    if (!context) return null;
    const facts: Discovered = { context, source: 'lmstudio /api/v0/models' };
    if (entry.type === 'vlm') facts.vision = true;
    else if (entry.type === 'llm') facts.vision = false;
    return facts;
  },
};

/** A cloud API documents none of llama.cpp's or LM Studio's endpoints: it gets only the model list its health check reads anyway. */
export const CLOUD_DISCOVERY: readonly DiscoveryReader[] = [vllm];
export const LOCAL_DISCOVERY: readonly DiscoveryReader[] = [vllm, llamaCpp, lmStudio];

type LoadedReader = (tier: Tier, ask: ServerAsk) => Promise<boolean | undefined>;

/** `{"running":[{"model":"qwen","state":"ready"}]}`: listed and ready is loaded; starting, or not listed, is not. */
const llamaSwap: LoadedReader = async (tier, ask) => {
  const answer = await ask(besideApiRoot(tier.provider.base_url, '/running'));
  if (answer.status !== 200 || !isRecord(answer.json) || !Array.isArray(answer.json.running)) return undefined;
  const entry = answer.json.running.find((m: unknown) => isRecord(m) && m.model === tier.model);
  return isRecord(entry) && entry.state === 'ready';
};

/** Router mode: `{"data":[{"id":"m","status":{"value":"loaded"|"loading"|"unloaded"}}]}`; a single-model server has no status. */
const llamaCppRouter: LoadedReader = async (tier, ask) => {
  const answer = await ask(besideApiRoot(tier.provider.base_url, '/models'));
  if (answer.status !== 200 || !isRecord(answer.json) || !Array.isArray(answer.json.data)) return undefined;
  const entry = answer.json.data.find((m: unknown) => isRecord(m) && m.id === tier.model);
  if (!isRecord(entry) || !isRecord(entry.status) || typeof entry.status.value !== 'string') return undefined;
  return entry.status.value === 'loaded';
};

/** `{"data":[{"id":"m","state":"loaded"|"not-loaded"}]}`. */
const lmStudioLoaded: LoadedReader = async (tier, ask) => {
  const entry = await lmStudioEntry(tier, ask);
  if (!entry || typeof entry.state !== 'string') return undefined;
  return entry.state === 'loaded';
};

const LOADED_READERS: ReadonlyArray<[ServerWord['server'], LoadedReader]> = [
  ['llama-swap', llamaSwap],
  ['llama.cpp router', llamaCppRouter],
  ['lmstudio', lmStudioLoaded],
];

/** The first of these servers that says whether the tier's model is loaded. */
export async function localServerWord(tier: Tier, ask: ServerAsk): Promise<ServerWord | undefined> {
  for (const [server, reader] of LOADED_READERS) {
    const loaded = await reader(tier, ask);
    if (loaded !== undefined) return { server, loaded };
  }
  return undefined;
}

/**
 * Their load requests, asked only when the server says the model is not loaded (LM Studio loads
 * a second instance on a second request): llama.cpp's router `POST /models/load`, LM Studio (0.4+)
 * `POST /api/v1/models/load`. llama-swap documents none (a model loads on its first request).
 */
export const LOAD_PATHS: Partial<Record<ServerWord['server'], string>> = { 'llama.cpp router': '/models/load', lmstudio: '/api/v1/models/load' };

async function lmStudioEntry(tier: Tier, ask: ServerAsk): Promise<Record<string, unknown> | undefined> {
  const answer = await ask(besideApiRoot(tier.provider.base_url, '/api/v0/models'));
  if (answer.status !== 200 || !isRecord(answer.json) || !Array.isArray(answer.json.data)) return undefined;
  const entry = answer.json.data.find((m: unknown) => isRecord(m) && m.id === tier.model);
  return isRecord(entry) ? entry : undefined;
}
