import type { Tier } from '../config/schema.js';
import { isRecord } from '../util/is-record.js';
import { isLocalNetworkHost } from '../util/loopback.js';
import type { Http } from './deadline.js';
import { besideApiRoot, getJson, isOllama, ollamaLoaded, servesModel } from './upstream-models.js';

/**
 * Whether a tier's model is in its server's memory, in the server's own words (SPEC "Warm
 * models and hedged first tokens"): Ollama `GET /api/ps`, llama-swap `GET /running`
 * (`ready` loaded, `starting` still loading), llama.cpp's router mode `GET /models`
 * (`status.value`), LM Studio `GET /api/v0/models` (`state`). Kept per server and model, read
 * only off the request path (discovery, health checks, the refresh while requests arrive).
 */
const said = new Map<string, boolean>();

function keyOf(tier: Tier): string {
  return `${tier.provider.base_url}\u0000${tier.model}`;
}

/** undefined: the server said nothing (the cold_after_ms guess stands). */
export function loadedOf(tier: Tier): boolean | undefined {
  return said.get(keyOf(tier));
}

export function recordLoaded(tier: Tier, loaded: boolean | undefined): void {
  if (loaded === undefined) said.delete(keyOf(tier));
  else said.set(keyOf(tier), loaded);
}

/** For tests: forget everything. */
export function resetLoadedModels(): void {
  said.clear();
}

type Reader = (tier: Tier, http: Http) => Promise<boolean | undefined>;

/** Which server said it, and what: whether the tier's model is loaded. */
export interface ServerWord {
  server: 'ollama' | 'llama-swap' | 'llama.cpp router' | 'lmstudio';
  loaded: boolean;
}

/**
 * Asks the tier's server whether its model is loaded; undefined when it documents none of
 * these (a cloud API is not asked). Throws what the request threw (a timeout, a refused connection).
 */
export async function readLoaded(tier: Tier, http: Http): Promise<boolean | undefined> {
  return (await readServerWord(tier, http))?.loaded;
}

export async function readServerWord(tier: Tier, http: Http): Promise<ServerWord | undefined> {
  if (tier.provider.type === 'anthropic') return undefined;
  if (isOllama(tier.provider)) {
    const loaded = await ollama(tier, http);
    return loaded === undefined ? undefined : { server: 'ollama', loaded };
  }
  if (!isLocalNetworkHost(new URL(tier.provider.base_url).hostname)) return undefined;
  for (const [server, reader] of OPENAI_TYPE_READERS) {
    const loaded = await reader(tier, http);
    if (loaded !== undefined) return { server, loaded };
  }
  return undefined;
}

const ollama: Reader = async (tier, http) => {
  const names = await ollamaLoaded(tier.provider, http);
  return names ? servesModel(names, tier.model) : undefined;
};

/** `{"running":[{"model":"qwen","state":"ready"}]}`: listed and ready is loaded; starting, or not listed, is not. */
const llamaSwap: Reader = async (tier, http) => {
  const answer = await getJson(besideApiRoot(new URL(tier.provider.base_url), '/running'), tier.provider, http);
  if (answer.status !== 200 || !isRecord(answer.json) || !Array.isArray(answer.json.running)) return undefined;
  const entry = answer.json.running.find((m: unknown) => isRecord(m) && m.model === tier.model);
  return isRecord(entry) && entry.state === 'ready';
};

/** Router mode: `{"data":[{"id":"m","status":{"value":"loaded"|"loading"|"unloaded"}}]}`; a single-model server has no status. */
const llamaCppRouter: Reader = async (tier, http) => {
  const answer = await getJson(besideApiRoot(new URL(tier.provider.base_url), '/models'), tier.provider, http);
  if (answer.status !== 200 || !isRecord(answer.json) || !Array.isArray(answer.json.data)) return undefined;
  const entry = answer.json.data.find((m: unknown) => isRecord(m) && m.id === tier.model);
  if (!isRecord(entry) || !isRecord(entry.status) || typeof entry.status.value !== 'string') return undefined;
  return entry.status.value === 'loaded';
};

/** `{"data":[{"id":"m","state":"loaded"|"not-loaded"}]}`. */
const lmStudio: Reader = async (tier, http) => {
  const answer = await getJson(besideApiRoot(new URL(tier.provider.base_url), '/api/v0/models'), tier.provider, http);
  if (answer.status !== 200 || !isRecord(answer.json) || !Array.isArray(answer.json.data)) return undefined;
  const entry = answer.json.data.find((m: unknown) => isRecord(m) && m.id === tier.model);
  if (!isRecord(entry) || typeof entry.state !== 'string') return undefined;
  return entry.state === 'loaded';
};

const OPENAI_TYPE_READERS: ReadonlyArray<[ServerWord['server'], Reader]> = [
  ['llama-swap', llamaSwap],
  ['llama.cpp router', llamaCppRouter],
  ['lmstudio', lmStudio],
];
