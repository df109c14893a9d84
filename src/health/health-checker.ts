import type { Agent, Dispatcher } from 'undici';
import type { Config, Tier } from '../config/schema.js';
import { allTiers } from '../config/all-tiers.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { HealthChecked } from '../telemetry/events.js';
import { createStaleAwareAgent } from '../util/stale-socket-pool.js';
import { checkTier, type TierCheck } from './check-tier.js';
import { Deadline } from './deadline.js';
import { readLoaded, recordLoaded } from './loaded-models.js';

type CheckKind = HealthChecked['kind'];

/**
 * Learns what a tier can take (src/fit/refresh-fit.ts) and says so on the bus; never throws.
 * Handed in: fit builds on health (its discovery asks the same servers), not the other way.
 */
export type FitDiscovery = (tier: Tier, bus: TelemetryBus, opts: { signal: AbortSignal; dispatcher: Dispatcher }) => Promise<void>;

interface Schedule {
  tier: Tier;
  kind: CheckKind;
  everyMs: number;
  timer: NodeJS.Timeout | null;
}

/** A warm-up that finds the server loading asks again this often… */
const LOADING_POLL_MS = 1_000;
/** …says how long it has waited at most this often… */
const LOADING_REPORT_MS = 5_000;
/** …and leaves it to the next scheduled warm-up after this long. */
const LOADING_GIVE_UP_MS = 10 * 60_000;
/** While requests arrive, a tier's server is asked what it has loaded at most this often… */
const LOADED_REFRESH_MS = 5_000;
/**
 * …and, once it said nothing (it documents none of the endpoints: each ask a 404 in its log), at
 * most this often: discovery (at start, on a reload, after a check) still asks at once.
 */
const NO_LOADED_STATE_MS = 10 * 60_000;

/**
 * Active health checks (`health.interval_ms` on a provider) and warm-ups of local tiers (a
 * 1-token request at start and every `keepalive_ms`, so a model stays loaded). Results leave
 * as `health_check` events; the health board turns them into state. A server still loading
 * its model (503) is neither healthy nor failed: a warm-up waits for it and says so.
 */
export class HealthChecker {
  private schedules: Schedule[] = [];
  private running = false;
  private readonly inFlight = new Set<string>();
  /** Tiers whose discovery is on its way (tier objects: a reload makes new ones). */
  private readonly discovering = new WeakSet<Tier>();
  private readonly aborts = new Set<AbortController>();
  /** Its own connections, stale-aware: a socket the server closed after a stream is not a failed check. */
  private agent: Agent | null = null;
  private readonly tiersByKey = new Map<string, Tier>();
  /** When requests arriving may next ask a tier's server what it has loaded. */
  private readonly loadedDueAt = new Map<Tier, number>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly bus: TelemetryBus,
    private config: Config,
    private readonly discoverFit: FitDiscovery,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.running = true;
    // Requests that reach a tier keep its loaded state fresh, from here, never on their own path.
    this.unsubscribe = this.bus.subscribe((event) => {
      if (event.type !== 'attempt_end') return;
      const tier = this.tiersByKey.get(`${event.route}\u0000${event.tier}`);
      if (tier && this.now() >= (this.loadedDueAt.get(tier) ?? 0)) setImmediate(() => void this.refreshLoaded(tier));
    });
    this.configure(this.config);
  }

  stop(): void {
    this.running = false;
    this.unsubscribe?.();
    this.unsubscribe = null;
    for (const schedule of this.schedules) if (schedule.timer) clearInterval(schedule.timer);
    this.schedules = [];
    for (const abort of this.aborts) abort.abort();
    void this.agent?.destroy().catch(() => undefined);
    this.agent = null;
  }

  configure(config: Config): void {
    this.config = config;
    if (!this.running) return;
    for (const schedule of this.schedules) if (schedule.timer) clearInterval(schedule.timer);
    this.schedules = [];
    this.tiersByKey.clear();
    for (const tier of allTiers(config)) {
      this.tiersByKey.set(`${tier.route}\u0000${tier.name}`, tier);
      // Each tier's limits, learned at start and on every reload (and again with each check).
      void this.discover(tier);
      const { health } = tier.provider;
      if (health.interval_ms !== undefined) this.schedule(tier, 'check', health.interval_ms);
      if (health.warmup) this.schedule(tier, 'warmup', health.keepalive_ms);
    }
  }

  /** Probes every tier now (the UI's `p`), with a TTFT request; resolves when all have reported. */
  async runAll(): Promise<void> {
    const tiers = allTiers(this.config);
    await Promise.all(tiers.map((tier) => this.run(tier, 'probe', true)));
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
      // A warm-up may have to wait for the model to load: it gets the cold budget. A check gets
      // room for a 1-token request: a TTFT check makes one, and so does a model missing from the list.
      const timeoutMs = kind === 'warmup' ? tier.timeouts.cold_ttft_ms + tier.timeouts.connect_ms : tier.provider.health.timeout_ms + tier.timeouts.ttft_ms;
      let loadingSince: number | null = null;
      let reportedAt = 0;
      for (;;) {
        const result = await checkTier(tier, { timeoutMs, ttft, signal: abort.signal, dispatcher: this.dispatcher() });
        if (abort.signal.aborted) return;
        if (kind !== 'warmup' && result.reachable) void this.discover(tier);
        const now = Date.now();
        const waitedMs = loadingSince === null ? undefined : now - loadingSince;
        if (result.status !== 'loading' || kind !== 'warmup') return this.emit(tier, kind, result, waitedMs);
        if (loadingSince === null || now - reportedAt >= LOADING_REPORT_MS) {
          this.emit(tier, kind, result, waitedMs ?? 0);
          reportedAt = now;
        }
        loadingSince ??= now;
        if (now - loadingSince >= LOADING_GIVE_UP_MS || !(await pause(LOADING_POLL_MS, abort.signal))) return;
      }
    } finally {
      this.aborts.delete(abort);
      this.inFlight.delete(id);
    }
  }

  private emit(tier: Tier, kind: CheckKind, result: TierCheck, waitedMs: number | undefined): void {
    this.bus.emit({
      type: 'health_check',
      route: tier.route,
      tier: tier.name,
      kind,
      ok: result.status === 'healthy',
      reachable: result.reachable,
      modelPresent: result.modelPresent,
      ttftMs: result.ttftMs,
      ...(result.error ? { error: result.error } : {}),
      ...(result.status === 'loading' ? { loading: true } : {}),
      ...(waitedMs !== undefined ? { waitedMs } : {}),
      ...(result.note ? { note: result.note } : {}),
    });
  }

  /**
   * Discovery of the tier's window, vision and tools (src/fit/), one at a time per tier object:
   * a reload makes new tier objects, so a tier moved to another server is asked at once, never
   * skipped because the old server's discovery is still on its way. What is loaded is read
   * beside it, on its own (a server that is slow to say must not hold discovery up).
   */
  private async discover(tier: Tier): Promise<void> {
    void this.refreshLoaded(tier);
    if (this.discovering.has(tier)) return;
    this.discovering.add(tier);
    const abort = new AbortController();
    this.aborts.add(abort);
    try {
      await this.discoverFit(tier, this.bus, { signal: abort.signal, dispatcher: this.dispatcher() });
    } finally {
      this.aborts.delete(abort);
      this.discovering.delete(tier);
    }
  }

  /** Asks the tier's server whether its model is loaded (docs/hedging.md); one at a time per tier, never throws. */
  private async refreshLoaded(tier: Tier): Promise<void> {
    const id = `loaded\u0000${tier.route}\u0000${tier.name}`;
    if (this.inFlight.has(id) || !this.running) return;
    this.inFlight.add(id);
    this.loadedDueAt.set(tier, this.now() + LOADED_REFRESH_MS);
    const abort = new AbortController();
    this.aborts.add(abort);
    const deadline = new Deadline(tier.provider.health.timeout_ms, abort.signal);
    try {
      const loaded = await readLoaded(tier, { signal: deadline.signal, dispatcher: this.dispatcher() });
      recordLoaded(tier, loaded);
      if (loaded === undefined) this.loadedDueAt.set(tier, this.now() + NO_LOADED_STATE_MS);
    } catch {
      // no answer: the server's last word stands until it says otherwise
    } finally {
      deadline.dispose();
      this.aborts.delete(abort);
      this.inFlight.delete(id);
    }
  }

  private dispatcher(): Agent {
    this.agent ??= createStaleAwareAgent();
    return this.agent;
  }
}

/** Resolves true after `ms`, false at once if `signal` aborts first. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
