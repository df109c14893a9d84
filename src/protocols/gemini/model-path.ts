import type { Provider, Tier } from '../../config/schema.js';
import { upstreamPath } from '../core/paths.js';

/**
 * A tier's model as Gemini's resource name: `gemini-2.5-flash` is `models/gemini-2.5-flash`; a
 * name written with its collection (`models/x`, `tunedModels/x`) is kept. Each segment is
 * percent-encoded: a model name is the tier file's, and a path is no place for a `?` of it.
 */
export function modelResource(model: string): string {
  const name = model.includes('/') ? model : `models/${model}`;
  return name.split('/').map(encodeURIComponent).join('/');
}

/** The path of a model's method: `{base path}/v1beta/models/{model}:{method}`. */
export function methodPath(provider: Provider, tier: Tier, method: string): string {
  return upstreamPath(provider.base_url, `/v1beta/${modelResource(tier.model)}:${method}`);
}

/** `:streamGenerateContent?alt=sse` (each chunk an SSE `data:`) for a stream, `:generateContent` for a whole answer. */
export function generatePath(provider: Provider, tier: Tier, stream: boolean): string {
  return methodPath(provider, tier, stream ? 'streamGenerateContent?alt=sse' : 'generateContent');
}
