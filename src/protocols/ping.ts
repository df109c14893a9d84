import type { NeutralRequest } from './neutral.js';

/** A one-message request in no protocol's shape, for health checks and benchmarks (each wire encodes it its own way). */
export function textRequest(prompt: string, maxTokens: number): NeutralRequest {
  return { system: [], messages: [{ role: 'user', content: [{ type: 'text', text: prompt }] }], tools: [], maxTokens };
}
