import type { Config, Route } from '../config/schema.js';
import type { ClientProtocol } from '../telemetry/events.js';
import { loadedTokenCounter, tokenCounter, type Encoding } from '../tokens/count.js';
import { applySavers, type SaverOptions, type SaversResult } from './pipeline.js';
import { saversFor } from './registry.js';

/**
 * A route's savers applied to a request body, measured with the encoding of the route's first
 * tier. A route without savers returns at once: nothing copied, no tokenizer loaded or run.
 * Never rejects: if the pipeline itself cannot run (the tokenizer fails to load), the body goes
 * out as it came and every saver is counted as failed.
 */
export async function applyRouteSavers(route: Route, protocol: ClientProtocol, body: Record<string, unknown>, options?: SaverOptions): Promise<SaversResult> {
  const savers = saversFor(route);
  if (savers.length === 0) return { body, changed: false, measures: [], failures: [] };
  try {
    const encoding = route.tiers[0].tokenizer;
    const counter = loadedTokenCounter(encoding) ?? (await tokenCounter(encoding));
    return applySavers(protocol, body, savers, counter, options);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      body,
      changed: false,
      measures: savers.map((saver) => ({ saver: saver.name, before: 0, after: 0, failed: true })),
      failures: savers.map((saver) => ({ saver: saver.name, reason: 'threw', message })),
    };
  }
}

/** Loads the encodings that routes with savers measure with (~200 ms each), so that no request waits for one. */
export async function preloadSaverTokenizers(config: Config): Promise<void> {
  const encodings = new Set<Encoding>();
  for (const route of config.routes.values()) if (route.savers.length > 0) encodings.add(route.tiers[0].tokenizer);
  await Promise.all([...encodings].map((encoding) => tokenCounter(encoding)));
}
