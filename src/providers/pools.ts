import type { Dispatcher } from 'undici';
import { createUpstreamDispatcher, dispatcherShape } from './upstream-dispatcher.js';
import { allTiers } from '../config/all-tiers.js';
import { DEFAULT_TIMEOUTS, type Config, type Provider } from '../config/schema.js';

/**
 * One keep-alive connection pool per provider (through HTTPS_PROXY when set, see upstream-dispatcher.ts). undici's own header/body timers are coarse
 * (about half a second) and are switched off per request: the attempt runs exact timers.
 * undici has no per-request connect timeout, so a provider's pool uses the smallest
 * `connect_ms` of the tiers that use it.
 */
export class ProviderPools {
  private readonly pools = new Map<string, Dispatcher>();
  /** Per provider name: what its pool was made for, so a reload can keep an unchanged pool. */
  private readonly shapes = new Map<string, string>();
  /** Pools a successor took over: they are the successor's to close. */
  private readonly handedOver = new Set<string>();
  /** Requests using this set of pools; a retired set closes when the last one is done. */
  private users = 0;
  private retired = false;

  /** With `previous`, pools whose origin and connect timeout did not change are taken over. */
  constructor(config: Config, previous?: ProviderPools) {
    const connectMs = new Map<string, number>();
    for (const tier of allTiers(config)) {
      const current = connectMs.get(tier.provider.name);
      if (current === undefined || tier.timeouts.connect_ms < current) connectMs.set(tier.provider.name, tier.timeouts.connect_ms);
    }
    for (const provider of config.providers.values()) {
      const timeout = connectMs.get(provider.name) ?? DEFAULT_TIMEOUTS.connect_ms;
      const shape = dispatcherShape(provider, timeout);
      const reused = previous?.shapes.get(provider.name) === shape ? previous.take(provider.name) : undefined;
      this.pools.set(provider.name, reused ?? createUpstreamDispatcher(provider, timeout));
      this.shapes.set(provider.name, shape);
    }
  }

  /** Hands a pool over to a successor; requests still holding this set may go on using it. */
  private take(name: string): Dispatcher | undefined {
    this.handedOver.add(name);
    return this.pools.get(name);
  }

  /**
   * A request holds the pools it started with until it is done, so a reload in the middle of
   * its failover never sends its retry to another host or with another key.
   */
  acquire(): this {
    this.users++;
    return this;
  }

  release(): void {
    this.users--;
    if (this.retired && this.users === 0) this.closeOwn();
  }

  /** Replaced by a reload: the pools no successor took close once their requests are done. */
  retire(): void {
    this.retired = true;
    if (this.users === 0) this.closeOwn();
  }

  private closeOwn(): void {
    for (const [name, pool] of this.pools) {
      if (!this.handedOver.has(name)) void pool.close().catch(() => undefined);
    }
  }

  get(provider: Provider): Dispatcher {
    const pool = this.pools.get(provider.name);
    if (!pool) throw new Error(`no pool for provider ${provider.name}`);
    return pool;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools].filter(([name]) => !this.handedOver.has(name)).map(([, pool]) => pool.destroy().catch(() => undefined)));
  }
}
