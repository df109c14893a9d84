import type { Config, Tier } from '../config/schema.js';
import { allTiers } from '../config/all-tiers.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import { checkTier } from './check-tier.js';

type CheckKind = 'check' | 'warmup';

interface Schedule {
  tier: Tier;
  kind: CheckKind;
  everyMs: number;
  timer: NodeJS.Timeout | null;
}

/**
 * Active health checks (`health.interval_ms` on a provider) and warm-ups of local tiers (a
 * 1-token request at start and every `keepalive_ms`, so a model stays loaded). Results leave
 * as `health_check` events; the health board turns them into state.
 */
export class HealthChecker {
  private schedules: Schedule[] = [];
  private running = false;
  private readonly inFlight = new Set<string>();
  private readonly aborts = new Set<AbortController>();

  constructor(private readonly bus: TelemetryBus, private config: Config) {}

  start(): void {
    this.running = true;
    this.configure(this.config);
  }

  stop(): void {
    this.running = false;
    for (const schedule of this.schedules) if (schedule.timer) clearInterval(schedule.timer);
    this.schedules = [];
    for (const abort of this.aborts) abort.abort();
  }

  configure(config: Config): void {
    this.config = config;
    if (!this.running) return;
    for (const schedule of this.schedules) if (schedule.timer) clearInterval(schedule.timer);
    this.schedules = [];
    for (const tier of allTiers(config)) {
      const { health } = tier.provider;
      if (health.interval_ms !== undefined) this.schedule(tier, 'check', health.interval_ms);
      if (health.warmup) this.schedule(tier, 'warmup', health.keepalive_ms);
    }
  }

  /** Checks every tier now, with a TTFT request; resolves when all have reported. */
  async runAll(): Promise<void> {
    const tiers = allTiers(this.config);
    await Promise.all(tiers.map((tier) => this.run(tier, 'check', true)));
  }

  private schedule(tier: Tier, kind: CheckKind, everyMs: number): void {
    const schedule: Schedule = { tier, kind, everyMs, timer: null };
    schedule.timer = setInterval(() => void this.run(tier, kind, kind === 'warmup' || tier.provider.health.ttft_check), everyMs);
    schedule.timer.unref();
    this.schedules.push(schedule);
    void this.run(tier, kind, kind === 'warmup' || tier.provider.health.ttft_check); // once at start too
  }

  private async run(tier: Tier, kind: CheckKind, ttft: boolean): Promise<void> {
    const id = `${kind}\u0000${tier.route}\u0000${tier.name}`;
    if (this.inFlight.has(id)) return; // a slow check is not piled up on
    this.inFlight.add(id);
    const abort = new AbortController();
    this.aborts.add(abort);
    try {
      // A warm-up may have to wait for the model to load: it gets the cold budget.
      const timeoutMs = kind === 'warmup' ? tier.timeouts.cold_ttft_ms + tier.timeouts.connect_ms : tier.provider.health.timeout_ms + (ttft ? tier.timeouts.ttft_ms : 0);
      const result = await checkTier(tier, { timeoutMs, ttft, signal: abort.signal });
      if (abort.signal.aborted) return;
      this.bus.emit({
        type: 'health_check', route: tier.route, tier: tier.name, kind,
        ok: result.status === 'healthy', reachable: result.reachable, modelPresent: result.modelPresent, ttftMs: result.ttftMs,
        ...(result.error ? { error: result.error } : {}),
      });
    } finally {
      this.aborts.delete(abort);
      this.inFlight.delete(id);
    }
  }
}
