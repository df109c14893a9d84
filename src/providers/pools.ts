import { Pool } from 'undici';
import type { Config, Provider } from '../config/schema.js';

/**
 * One keep-alive connection pool per provider. undici's own header/body timers are coarse
 * (about half a second) and are switched off per request: the attempt runs exact timers.
 * undici has no per-request connect timeout, so a provider's pool uses the smallest
 * `connect_ms` of the tiers that use it.
 */
export class ProviderPools {
  private readonly pools = new Map<string, Pool>();
  /** Per provider name: what its pool was made for, so a reload can keep an unchanged pool. */
  private readonly shapes = new Map<string, string>();

  /** With `previous`, pools whose origin and connect timeout did not change are taken over. */
  constructor(config: Config, previous?: ProviderPools) {
    const connectMs = new Map<string, number>();
    for (const route of config.routes.values()) {
      for (const tier of route.tiers) {
        const current = connectMs.get(tier.provider.name);
        if (current === undefined || tier.timeouts.connect_ms < current) connectMs.set(tier.provider.name, tier.timeouts.connect_ms);
      }
    }
    for (const provider of config.providers.values()) {
      const timeout = connectMs.get(provider.name) ?? 2_000;
      const shape = `${new URL(provider.base_url).origin}|${timeout}`;
      const reused = previous?.shapes.get(provider.name) === shape ? previous.take(provider.name) : undefined;
      this.pools.set(provider.name, reused ?? createPool(provider, timeout));
      this.shapes.set(provider.name, shape);
    }
  }

  /** Hands a pool over to a successor; it is no longer closed by this instance. */
  private take(name: string): Pool | undefined {
    const pool = this.pools.get(name);
    this.pools.delete(name);
    this.shapes.delete(name);
    return pool;
  }

  /** Closes the pools no successor took, once their requests in flight have finished. */
  retire(): void {
    for (const pool of this.pools.values()) void pool.close().catch(() => undefined);
    this.pools.clear();
  }

  get(provider: Provider): Pool {
    const pool = this.pools.get(provider.name);
    if (!pool) throw new Error(`no pool for provider ${provider.name}`);
    return pool;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.destroy().catch(() => undefined)));
  }
}

function createPool(provider: Provider, connectTimeout: number): Pool {
  return new Pool(new URL(provider.base_url).origin, {
    connectTimeout,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: 0,
    bodyTimeout: 0,
    pipelining: 1,
  });
}
