import type { Tier } from '../../config/schema.js';
import { isRecord } from '../../util/is-record.js';
import {
  besideApiRoot,
  bearerCheckHeaders,
  type Discovered,
  type DiscoveryReader,
  type ModelListSource,
  openaiModelIds,
  type ProfiledProvider,
  type ProviderProfile,
  positiveInt,
  type ReadinessPlan,
  type ServerAsk,
  servesModel,
  underBase,
} from '../core/provider-profile.js';

/**
 * An Ollama server, asked in its own API (docs/fit.md, docs/hedging.md): `GET /api/version`
 * says it is up, `GET /api/tags` lists its models, `POST /api/show` and `GET /api/ps` say a
 * model's window and capabilities and whether it is in memory, `POST /api/generate` with no
 * prompt loads it. An openai-type provider on Ollama's usual port is asked the same way.
 */
export const ollamaServer = {
  readiness(provider: ProfiledProvider): ReadinessPlan {
    return {
      probes: [
        { url: besideApiRoot(provider.base_url, '/api/version'), loadingOn503: false },
        { url: besideApiRoot(provider.base_url, '/health'), loadingOn503: true },
      ],
      list: underBase(provider.base_url, '/models'),
    };
  },

  /** `/api/tags` first, then the OpenAI-shaped list of its `/v1`, whose answer decides. */
  modelLists(provider: ProfiledProvider): readonly ModelListSource[] {
    return [
      { url: besideApiRoot(provider.base_url, '/api/tags'), decisive: false, names: tagNames },
      { url: underBase(provider.base_url, '/models'), decisive: true, names: openaiModelIds },
    ];
  },

  discovery: [{ name: 'ollama', read: readShow }] as readonly DiscoveryReader[],

  async loadedState(tier: Tier, ask: ServerAsk): Promise<{ server: 'ollama'; loaded: boolean } | undefined> {
    const answer = await ask(besideApiRoot(tier.provider.base_url, '/api/ps'));
    const names = answer.status >= 200 && answer.status < 300 ? tagNames(answer.json) : null;
    return names ? { server: 'ollama', loaded: servesModel(names, tier.model) } : undefined;
  },

  /**
   * Its documented load request: `POST /api/generate` with the model and no prompt (an embedding
   * model, which does not generate: `/api/embed` with no input), the tier's keep_alive as written.
   */
  async warm(tier: Tier, ask: ServerAsk) {
    const body: Record<string, unknown> = { model: tier.model };
    if (tier.ollama.keep_alive !== undefined) body.keep_alive = tier.ollama.keep_alive;
    const answer = await ask(besideApiRoot(tier.provider.base_url, tier.embedding ? '/api/embed' : '/api/generate'), body);
    // Ollama answers once the model is in memory.
    return { status: answer.status, message: answer.message, loadedNow: true };
  },
};

export const ollamaProfile: ProviderProfile = {
  type: 'ollama',
  wire: 'ollama',
  genAiName: 'ollama',
  reasons: false,
  checkHeaders: bearerCheckHeaders,
  readiness: ollamaServer.readiness,
  modelLists: ollamaServer.modelLists,
  discovery: () => ollamaServer.discovery,
  loadedState: ollamaServer.loadedState,
  loadedInOneAsk: () => true,
  warm: ollamaServer.warm,
  // Ollama cuts a prompt longer than num_ctx and answers 200.
  truncatesSilently: () => true,
  configuredWindow: (tier) => tier.ollama.num_ctx,
  windowPerRequest: true,
  // One request's inputs at most, unless a tier's max_batch says (a larger batch is split): what OpenAI, vLLM and Ollama take at once.
  embeddingBatch: 256,
};

/** `{"models":[{"name":…}]}` of `/api/tags` and `/api/ps`. */
export function tagNames(json: unknown): string[] | null {
  if (!isRecord(json) || !Array.isArray(json.models)) return null;
  return json.models.flatMap((model: unknown) => (isRecord(model) && typeof model.name === 'string' ? [model.name] : []));
}

/** `model_info["<arch>.context_length"]` and `capabilities` from /api/show; the loaded runner's `context_length` from /api/ps. */
async function readShow(tier: Tier, ask: ServerAsk): Promise<Discovered | null> {
  const show = await ask(besideApiRoot(tier.provider.base_url, '/api/show'), { model: tier.model });
  if (show.status !== 200 || !isRecord(show.json)) throw new Error(`/api/show answered HTTP ${show.status}${isRecord(show.json) ? '' : ' without JSON'}`);
  const info = isRecord(show.json.model_info) ? show.json.model_info : {};
  const arch = typeof info['general.architecture'] === 'string' ? info['general.architecture'] : null;
  const modelContext = positiveInt(arch ? info[`${arch}.context_length`] : undefined);
  const capabilities = Array.isArray(show.json.capabilities) ? show.json.capabilities.filter((c): c is string => typeof c === 'string') : null;
  const facts: Discovered = { source: 'ollama /api/show' };
  if (modelContext) [facts.context, facts.modelContext] = [modelContext, modelContext];
  if (capabilities) [facts.vision, facts.tools] = [capabilities.includes('vision'), capabilities.includes('tools')];
  if (capabilities?.includes('thinking')) facts.thinking = true;
  const ps = await ask(besideApiRoot(tier.provider.base_url, '/api/ps')).catch(() => null);
  if (ps && isRecord(ps.json) && Array.isArray(ps.json.models)) {
    const runner = ps.json.models.find((m: unknown) => isRecord(m) && typeof m.name === 'string' && servesModel([m.name], tier.model));
    const loaded = isRecord(runner) ? positiveInt(runner.context_length) : undefined;
    if (loaded) facts.loadedContext = loaded;
  }
  return facts;
}
