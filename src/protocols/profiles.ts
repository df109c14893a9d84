import type { Provider } from '../config/schema.js';
import { openaiProfile } from './chat/profile.js';
import type { ProviderProfile } from './core/provider-profile.js';
import { geminiProfile } from './gemini/profile.js';
import { anthropicProfile } from './messages/profile.js';
import { ollamaProfile } from './ollama/profile.js';

/** Each provider type's profile, registered once: a new tier type is its folder plus a line here (and its wire in registry.ts). */
const PROFILES: Record<Provider['type'], ProviderProfile> = {
  openai: openaiProfile,
  anthropic: anthropicProfile,
  ollama: ollamaProfile,
  gemini: geminiProfile,
};

/** What other rooms ask of a provider, answered by its type (docs/architecture.md, "a provider's profile"). */
export function profileOf(provider: Pick<Provider, 'type'>): ProviderProfile {
  return PROFILES[provider.type];
}

/** Whether the provider's own server speaks this wire natively (Anthropic's Messages, Ollama's API), not as a copy of it. */
export function nativelySpeaks(provider: Pick<Provider, 'type'>, wire: ProviderProfile['wire']): boolean {
  return PROFILES[provider.type].wire === wire;
}
