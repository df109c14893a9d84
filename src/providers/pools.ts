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

  constructor(config: Config) {
    const connectMs = new Map<string, number>();
    for (const route of config.routes.values()) {
      for (const tier of route.tiers) {
        const current = connectMs.get(tier.provider.name);
        if (current === undefined || tier.timeouts.connect_ms < current) connectMs.set(tier.provider.name, tier.timeouts.connect_ms);
      }
    }
    for (const provider of config.providers.values()) {
      this.pools.set(provider.name, createPool(provider, connectMs.get(provider.name) ?? 2_000));
    }
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
