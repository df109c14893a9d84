import type { Config, Provider } from '../config/schema.js';
import { profileOf } from '../protocols/profiles.js';

/** What a CLIENT span says of the server an attempt went to: `gen_ai.provider.name`, `server.address`, `server.port`. */
export interface ProviderFacts {
  genAi: string;
  address: string;
  port: number;
}

/**
 * `gen_ai.provider.name` by the provider's host, for the hosts the GenAI semantic conventions
 * name (their well-known values); any other server by its API: `openai` for an OpenAI-compatible
 * one (llama.cpp, vLLM, LM Studio, OpenRouter; `server.address` says which), `anthropic`, `gcp.gemini`, and
 * `ollama` (no well-known value: the conventions allow a custom one).
 */
const WELL_KNOWN_HOSTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^api\.openai\.com$/, 'openai'],
  [/^api\.anthropic\.com$/, 'anthropic'],
  [/\.openai\.azure\.com$/, 'azure.ai.openai'],
  [/\.services\.ai\.azure\.com$|\.models\.ai\.azure\.com$/, 'azure.ai.inference'],
  [/^bedrock-runtime\.[a-z0-9-]+\.amazonaws\.com$/, 'aws.bedrock'],
  [/^generativelanguage\.googleapis\.com$/, 'gcp.gemini'],
  [/aiplatform\.googleapis\.com$/, 'gcp.vertex_ai'],
  [/^api\.groq\.com$/, 'groq'],
  [/^api\.deepseek\.com$/, 'deepseek'],
  [/^api\.mistral\.ai$/, 'mistral_ai'],
  [/^api\.x\.ai$/, 'x_ai'],
  [/^api\.perplexity\.ai$/, 'perplexity'],
  [/^api\.cohere\.(ai|com)$/, 'cohere'],
];

export function providerFacts(provider: Provider): ProviderFacts {
  const url = new URL(provider.base_url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const known = WELL_KNOWN_HOSTS.find(([pattern]) => pattern.test(host));
  return {
    genAi: known ? known[1] : profileOf(provider).genAiName,
    address: host,
    port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
  };
}

/** Each provider of a config by name. */
export function providerFactsOf(config: Config): Map<string, ProviderFacts> {
  return new Map([...config.providers.values()].map((provider) => [provider.name, providerFacts(provider)]));
}
