import type { Dispatcher } from 'undici';
import type { Tier } from '../config/schema.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import { discoverTier } from './discover-tier.js';
import { discoveredOf, recordDiscovered, tierFit } from './tier-facts.js';

/**
 * Runs discovery for `tier` and keeps what it learned; a change (a new window, or a window
 * that became unknown) is one `fit_discovered` event — one log line, not one per check.
 * Never throws and never holds a request up: its callers do not wait for it.
 */
export async function refreshFit(tier: Tier, bus: TelemetryBus, opts: { signal?: AbortSignal; dispatcher?: Dispatcher } = {}): Promise<void> {
  try {
    const before = discoveredOf(tier);
    const { facts, error } = await discoverTier(tier, { timeoutMs: tier.provider.health.timeout_ms, ...opts });
    if (opts.signal?.aborted) return;
    recordDiscovered(tier, facts);
    // A server that documents nothing (a cloud API) is not news; a window learned, changed or lost is.
    const learnedNothing = facts.context === undefined && facts.vision === undefined && facts.tools === undefined;
    const changed =
      before === undefined
        ? !learnedNothing || error !== undefined
        : before.context !== facts.context || before.vision !== facts.vision || before.tools !== facts.tools || before.loadedContext !== facts.loadedContext;
    if (!changed) return;
    const fit = tierFit(tier);
    bus.emit({
      type: 'fit_discovered',
      route: tier.route,
      tier: tier.name,
      context: fit.context ?? null,
      context_source: fit.contextSource ?? null,
      vision: fit.vision ?? null,
      tools: fit.tools ?? null,
      ...(error ? { error } : {}),
    });
  } catch {
    // discovery is best effort: unknown limits mean no pre-check, never a failed request
  }
}
