import { besideApiRoot, type ModelListSource, openaiModelIds, type ProfiledProvider, type ProviderProfile, underBase } from '../core/provider-profile.js';
import { tagNames } from '../ollama/profile.js';

/** The `anthropic-version` llm-route sends when the client sent none (and on checks). */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * Anthropic's API (`type: anthropic`, base URL without `/v1`): its key in `x-api-key` with an
 * `anthropic-version`, its model list at `/v1/models`; it documents no window, loaded state or
 * load request, and its models reason (extended thinking).
 */
export const anthropicProfile: ProviderProfile = {
  type: 'anthropic',
  wire: 'messages',
  genAiName: 'anthropic',
  reasons: true,
  credentialApi: 'anthropic',

  checkHeaders(provider: ProfiledProvider) {
    const headers: Record<string, string> = { accept: 'application/json', ...provider.headers, 'anthropic-version': ANTHROPIC_VERSION };
    if (provider.api_key) headers['x-api-key'] = provider.api_key;
    return headers;
  },

  readiness(provider: ProfiledProvider) {
    return {
      probes: [
        { url: besideApiRoot(provider.base_url, '/health'), loadingOn503: true },
        { url: besideApiRoot(provider.base_url, '/api/version'), loadingOn503: false },
      ],
      list: underBase(provider.base_url, '/v1/models'),
    };
  },

  modelLists(provider: ProfiledProvider): readonly ModelListSource[] {
    return [
      { url: underBase(provider.base_url, '/v1/models'), decisive: true, names: openaiModelIds },
      { url: besideApiRoot(provider.base_url, '/api/tags'), decisive: false, names: tagNames },
    ];
  },

  discovery: () => [],
  loadedState: async () => undefined,
  loadedInOneAsk: () => false,
  warm: async () => ({ noLoad: 'anthropic' }),
  // A cloud API refuses a prompt too long for it.
  truncatesSilently: () => false,
  configuredWindow: () => undefined,
  windowPerRequest: false,
};
