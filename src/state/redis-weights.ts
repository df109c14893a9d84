import { nodeCrypto } from '../util/node-crypto.js';
import type { WeightChanged } from '../telemetry/events.js';
import { type RedisLink, UNAVAILABLE } from '../redis/redis-link.js';
import type { SharedLayers, SharedWeights } from './shared-weights.js';
import type { WeightSync } from './types.js';

interface Stored {
  layers: SharedLayers;
  source: WeightChanged['source'];
  reason?: string;
}

interface Announcement extends Stored {
  origin: string;
  route: string;
  tier: string;
}

/**
 * Admin overrides, kill switches, alerts and rollbacks shared through Redis: a change on any
 * instance is stored (one hash field per tier) and published in one script call; every
 * instance applies what it hears to its own weights (control/weights.ts), so the planner keeps reading
 * weights locally with no round trip. The newer change of a tier wins. A change made while
 * Redis is away is pushed when it is back, and what others changed meanwhile is pulled.
 */
export class RedisWeights implements WeightSync {
  private readonly origin = nodeCrypto().randomUUID();
  private weights: SharedWeights | null = null;
  /** Tiers changed here that Redis may not have yet. */
  private readonly unsent = new Map<string, Stored & { route: string; tier: string }>();
  private readonly hash: string;
  private readonly channel: string;

  constructor(
    private readonly link: RedisLink,
    prefix: string,
  ) {
    this.hash = `${prefix}weights`;
    this.channel = `${prefix}weights`;
    link.subscribe(this.channel, (message) => this.onMessage(message));
    link.onRejoin(() => this.reconcile());
  }

  attach(weights: SharedWeights): void {
    this.weights = weights;
    weights.onLocalChange = (route, tier, layers, source, reason) => {
      this.unsent.set(field(route, tier), { route, tier, layers, source, reason });
      void this.push(route, tier);
    };
  }

  async close(): Promise<void> {
    if (this.weights) this.weights.onLocalChange = null;
  }

  private async push(route: string, tier: string): Promise<void> {
    const k = field(route, tier);
    const change = this.unsent.get(k);
    if (!change) return;
    const stored: Stored = { layers: change.layers, source: change.source, ...(change.reason ? { reason: change.reason } : {}) };
    const announcement: Announcement = { ...stored, origin: this.origin, route, tier };
    const reply = await this.link.run((redis) =>
      redis.llmWeightsPut(this.hash, k, JSON.stringify(stored), this.channel, JSON.stringify(announcement), stored.layers.updatedAt),
    );
    if (reply === UNAVAILABLE) return;
    if (this.unsent.get(k) === change) this.unsent.delete(k);
    // Another instance's change of this tier is as new or newer: it stays, and this one takes it.
    if (typeof reply === 'string') this.applyStored(route, tier, reply);
  }

  private onMessage(message: string): void {
    let change: Announcement;
    try {
      change = JSON.parse(message) as Announcement;
    } catch {
      return;
    }
    if (change.origin === this.origin) return;
    this.apply(change.route, change.tier, change);
  }

  /** Back on Redis: what others changed meanwhile comes in, what changed here goes out (the newer wins). */
  private async reconcile(): Promise<void> {
    const weights = this.weights;
    if (!weights) return;
    const all = await this.link.run((redis) => redis.hgetall(this.hash));
    if (all === UNAVAILABLE) return;
    for (const [k, value] of Object.entries(all)) {
      const [route, tier] = k.split('\u0000');
      if (route === undefined || tier === undefined) continue;
      const stored = parseStored(value);
      if (!stored) continue; // a field another version wrote: ignored
      const pending = this.unsent.get(k);
      if (pending && pending.layers.updatedAt >= stored.layers.updatedAt) continue;
      if (pending) this.unsent.delete(k);
      this.apply(route, tier, stored);
    }
    for (const change of [...this.unsent.values()]) await this.push(change.route, change.tier);
  }

  private applyStored(route: string, tier: string, value: string): void {
    const stored = parseStored(value);
    if (stored) this.apply(route, tier, stored);
  }

  private apply(route: string, tier: string, stored: Stored): void {
    this.weights?.applyShared(route, tier, stored.layers, stored.source, stored.reason);
  }
}

function parseStored(value: string): Stored | null {
  try {
    const stored = JSON.parse(value) as Stored;
    return typeof stored?.layers?.updatedAt === 'number' ? stored : null;
  } catch {
    return null;
  }
}

function field(route: string, tier: string): string {
  return `${route}\u0000${tier}`;
}
