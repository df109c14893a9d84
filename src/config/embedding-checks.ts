import type { ConfigProblem, PathSegment } from './errors.js';
import type { Reporter } from './positions.js';
import { isRecord } from './raw-data.js';

/** Provider types whose API has no embeddings: a tier of theirs cannot serve an embeddings route. */
const NO_EMBEDDINGS: ReadonlySet<string> = new Set(['anthropic']);

/** Route keys that only mean something for chat (streams, savers' rewrites of a conversation). */
const CHAT_ROUTE_KEYS: Readonly<Record<string, string>> = {
  hedge_ms: 'races streams for their first token',
  on_break: 'says what a committed stream does when it breaks',
  resume: 'recovers a committed stream',
  savers: "rewrite a conversation's prompt",
  deadline_ms: "bounds a stream's wait for its first token",
};

/** Tier keys that only mean something for chat. */
const CHAT_TIER_KEYS: Readonly<Record<string, string>> = {
  max_tokens: "caps an answer's tokens",
  tool_text: 'recovers tool calls written as text',
  prefill: 'continues an assistant message',
  tools: 'says whether the model takes tools',
  vision: 'says whether the model takes images',
};

/** Timeouts only streams use (an embeddings answer is whole: connect_ms, idle_ms and total_ms bound it). */
const STREAM_TIMEOUTS: readonly string[] = ['ttft_ms', 'cold_ttft_ms', 'cold_after_ms', 'stream_max_ms'];

/**
 * docs/embeddings.md: every tier of an embeddings route is in the route's vector space (a
 * tier's `space`, default its model name; the route's, default its first tier's), on a provider
 * whose API has embeddings, without the keys only chat uses; `space` and `max_batch` belong to
 * embeddings routes only.
 */
export function embeddingProblems(data: Record<string, unknown>, report: Reporter): ConfigProblem[] {
  if (!isRecord(data.routes)) return [];
  const problems: ConfigProblem[] = [];
  const providers = isRecord(data.providers) ? data.providers : {};
  for (const [routeName, route] of Object.entries(data.routes)) {
    if (!isRecord(route) || !Array.isArray(route.tiers)) continue;
    const at = (target: 'key' | 'value', path: PathSegment[], message: string): number =>
      problems.push(report.at(target, ['routes', routeName, ...path], message));
    if (route.kind !== 'embeddings') {
      if (route.space !== undefined) at('key', ['space'], 'space is for routes of kind: embeddings (their vector space); this route is a chat route');
      route.tiers.forEach((tier: unknown, index: number) => {
        if (!isRecord(tier)) return;
        for (const key of ['space', 'max_batch'])
          if (tier[key] !== undefined)
            at('key', ['tiers', index, key], `${key} is for tiers of an embeddings route (kind: embeddings); route "${routeName}" is a chat route`);
      });
      continue;
    }
    for (const [key, what] of Object.entries(CHAT_ROUTE_KEYS))
      if (route[key] !== undefined) at('key', [key], `${key} ${what}: it is for chat routes, and "${routeName}" is an embeddings route (whole answers only)`);
    timeoutProblems(route.timeouts, ['timeouts'], routeName, at);
    const first = route.tiers[0];
    const space = typeof route.space === 'string' ? route.space : isRecord(first) ? tierSpace(first) : undefined;
    route.tiers.forEach((tier: unknown, index: number) => {
      if (!isRecord(tier)) return;
      for (const [key, what] of Object.entries(CHAT_TIER_KEYS))
        if (tier[key] !== undefined) at('key', ['tiers', index, key], `${key} ${what}: it is for chat routes, and "${routeName}" is an embeddings route`);
      timeoutProblems(tier.timeouts, ['tiers', index, 'timeouts'], routeName, at);
      const provider = typeof tier.provider === 'string' && isRecord(providers[tier.provider]) ? providers[tier.provider] : undefined;
      if (isRecord(provider) && typeof provider.type === 'string' && NO_EMBEDDINGS.has(provider.type)) {
        at(
          'value',
          ['tiers', index, 'provider'],
          `provider "${tier.provider}" is type ${provider.type}, whose API has no embeddings: an embeddings tier needs type openai, ollama or gemini`,
        );
      }
      const own = tierSpace(tier);
      if (space === undefined || own === undefined || own === space) return;
      const named = typeof tier.space === 'string' ? `its space "${own}"` : `its model "${own}" (a tier's space is its model name unless it says space:)`;
      at(
        'value',
        ['tiers', index, tier.space !== undefined ? 'space' : 'model'],
        `tier ${index} of embeddings route "${routeName}" is in another vector space: ${named}, the route's is "${space}"; vectors of two spaces cannot be compared, ` +
          `so a route never fails over between them (the same weights under another name: say space: "${space}")`,
      );
    });
  }
  return problems;
}

/** A tier's vector space as written: its `space`, else its model name. */
function tierSpace(tier: Record<string, unknown>): string | undefined {
  if (typeof tier.space === 'string' && tier.space !== '') return tier.space;
  return typeof tier.model === 'string' && tier.model !== '' ? tier.model : undefined;
}

function timeoutProblems(timeouts: unknown, path: PathSegment[], routeName: string, at: (target: 'key', path: PathSegment[], message: string) => void): void {
  if (!isRecord(timeouts)) return;
  for (const key of STREAM_TIMEOUTS)
    if (timeouts[key] !== undefined)
      at('key', [...path, key], `${key} times a stream: embeddings route "${routeName}" answers whole (connect_ms, idle_ms and total_ms bound it)`);
}
