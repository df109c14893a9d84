import type { ProviderConfig } from '../config/schema.js';
import { openaiAdapter } from './openai.js';
import type { ProviderAdapter } from './types.js';

const adapters: Partial<Record<ProviderConfig['type'], ProviderAdapter>> = {
  openai: openaiAdapter,
};

export function adapterFor(type: ProviderConfig['type']): ProviderAdapter {
  return adapters[type] ?? openaiAdapter;
}
