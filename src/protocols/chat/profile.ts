import type { Provider } from '../../config/schema.js';
import { isLocalNetworkHost } from '../../util/loopback.js';
import {
  besideApiRoot,
  bearerCheckHeaders,
  type ModelListSource,
  openaiModelIds,
  type ProfiledProvider,
  type ProviderProfile,
  underBase,
} from '../core/provider-profile.js';
import { ollamaServer, tagNames } from '../ollama/profile.js';
import { CLOUD_DISCOVERY, LOAD_PATHS, LOCAL_DISCOVERY, localServerWord } from './local-servers.js';

/** Ollama's usual port: an openai-type provider there is Ollama's `/v1`, asked in Ollama's own API. */
const OLLAMA_PORT = '11434';

function atOllamaPort(provider: Pick<Provider, 'base_url'>): boolean {
  return new URL(provider.base_url).port === OLLAMA_PORT;
}

function isLocal(provider: Pick<Provider, 'base_url'>): boolean {
  return isLocalNetworkHost(new URL(provider.base_url).hostname);
}

/**
 * An OpenAI-compatible server (`type: openai`): OpenAI itself, OpenRouter and other clouds, or a
 * local llama.cpp, vLLM, LM Studio, llama-swap — or Ollama's `/v1` on its usual port.
 */
export const openaiProfile: ProviderProfile = {
  type: 'openai',
  wire: 'chat',
  genAiName: 'openai',
  reasons: false,
  credentialApi: 'openai',
  checkHeaders: bearerCheckHeaders,

  /** llama.cpp and vLLM: `GET /health` (503 while llama.cpp loads); Ollama: `GET /api/version`; anything else: the model list. */
  readiness(provider: ProfiledProvider) {
    if (atOllamaPort(provider)) return ollamaServer.readiness(provider);
    return {
      probes: [
        { url: besideApiRoot(provider.base_url, '/health'), loadingOn503: true },
        { url: besideApiRoot(provider.base_url, '/api/version'), loadingOn503: false },
      ],
      list: underBase(provider.base_url, '/models'),
    };
  },

  /** `GET {base_url}/models`, whose answer decides; Ollama's `/api/tags` when it gives no list. */
  modelLists(provider: ProfiledProvider): readonly ModelListSource[] {
    if (atOllamaPort(provider)) return ollamaServer.modelLists(provider);
    return [
      { url: underBase(provider.base_url, '/models'), decisive: true, names: openaiModelIds },
      { url: besideApiRoot(provider.base_url, '/api/tags'), decisive: false, names: tagNames },
    ];
  },

  discovery(provider) {
    if (atOllamaPort(provider)) return ollamaServer.discovery;
    return isLocal(provider) ? LOCAL_DISCOVERY : CLOUD_DISCOVERY;
  },

  async loadedState(tier, ask) {
    if (atOllamaPort(tier.provider)) return ollamaServer.loadedState(tier, ask);
    // A cloud API is not asked.
    return isLocal(tier.provider) ? localServerWord(tier, ask) : undefined;
  },

  // Ollama's /v1 answers /api/ps; the other local servers are asked up to three endpoints, off a tier check's path.
  loadedInOneAsk: atOllamaPort,

  async warm(tier, ask) {
    if (atOllamaPort(tier.provider)) return ollamaServer.warm(tier, ask);
    const word = isLocal(tier.provider) ? await localServerWord(tier, ask) : undefined;
    if (word?.loaded) return { status: 200, message: 'already loaded', already: true };
    const path = word ? LOAD_PATHS[word.server] : undefined;
    if (!path) return { noLoad: word?.server ?? 'openai' };
    const answer = await ask(besideApiRoot(tier.provider.base_url, path), { model: tier.model });
    return { status: answer.status, message: answer.message };
  },

  // llama.cpp, vLLM, LM Studio and Ollama's /v1 on this machine cut a long prompt; a cloud API refuses it.
  truncatesSilently: (provider) => provider.local,
  configuredWindow: () => undefined,
  windowPerRequest: false,
  // One request's inputs at most, unless a tier's max_batch says (a larger batch is split): what OpenAI, vLLM and Ollama take at once.
  embeddingBatch: 256,
};
