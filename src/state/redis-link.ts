import { Redis } from 'ioredis';
import type { TelemetryBus } from '../telemetry/bus.js';
import { defineScripts, type Scripts } from './redis-scripts.js';

/** Returned by `run` when Redis could not answer: the caller serves from local state. */
export const UNAVAILABLE = Symbol('redis unavailable');

/** Reconnect backoff: 100 ms doubling to 2 s, so an instance rejoins within ~2 s of Redis being back. */
const MAX_RECONNECT_MS = 2_000;
/** A Redis that does not answer within this is treated as away for that call. */
const COMMAND_TIMEOUT_MS = 1_000;

/**
 * The connections to Redis and whether it is reachable. Commands never queue while it is
 * away (no offline queue, no resend): a call then fails at once and the caller uses local
 * state, so a Redis outage costs no request. Reconnects with backoff; each time it is back,
 * the rejoin hooks run (overrides reconciled, spend made meanwhile moved to Redis), and a
 * `state_degraded` / `state_recovered` pair says so.
 */
export class RedisLink {
  readonly cmd: Redis & Scripts;
  readonly sub: Redis;
  /** host:port/db, for messages (never the URL: it may hold a password). */
  readonly target: string;
  private ready = false;
  private degradedAt: number | null = null;
  private closing = false;
  private readonly rejoinHooks: Array<() => Promise<void> | void> = [];
  private readonly messageHooks = new Map<string, (message: string) => void>();
  private readonly reportedErrors = new Set<string>();
  private rejoining: Promise<void> = Promise.resolve();

  constructor(url: string, private readonly bus: TelemetryBus) {
    const parsed = new URL(url);
    this.target = `${parsed.hostname}:${parsed.port || '6379'}${parsed.pathname && parsed.pathname !== '/' ? parsed.pathname : '/0'}`;
    const options = {
      lazyConnect: true,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: COMMAND_TIMEOUT_MS,
      enableAutoPipelining: true,
      retryStrategy: (times: number) => Math.min(100 * 2 ** (times - 1), MAX_RECONNECT_MS),
      connectionName: 'llm-route',
    };
    this.cmd = defineScripts(new Redis(url, options));
    // The subscriber keeps its own queue: SUBSCRIBE must survive reconnects (autoResubscribe).
    this.sub = new Redis(url, { ...options, enableOfflineQueue: true, enableAutoPipelining: false, commandTimeout: undefined, connectionName: 'llm-route-sub' });
    this.cmd.on('ready', this.onReady);
    this.cmd.on('close', () => this.onDown('connection closed'));
    this.cmd.on('error', (err: Error) => this.onDown(err.message));
    this.sub.on('error', () => undefined); // the command connection reports the outage
    this.sub.on('ready', () => void this.runRejoin());
    this.sub.on('message', (channel: string, message: string) => this.messageHooks.get(channel)?.(message));
    this.cmd.connect().catch(() => undefined);
    this.sub.connect().catch(() => undefined);
  }

  /** Redis answers now. */
  get up(): boolean {
    return this.ready;
  }

  /** Runs after every (re)connect, in order. */
  onRejoin(hook: () => Promise<void> | void): void {
    this.rejoinHooks.push(hook);
  }

  /** Messages published on `channel` (by any instance, this one included). */
  subscribe(channel: string, onMessage: (message: string) => void): void {
    this.messageHooks.set(channel, onMessage);
    this.sub.subscribe(channel).catch(() => undefined);
  }

  /** One call to Redis; UNAVAILABLE when it is away, slow or failed (a script error is reported once on stderr). */
  async run<T>(call: (redis: Redis & Scripts) => Promise<T>): Promise<T | typeof UNAVAILABLE> {
    if (!this.ready) return UNAVAILABLE;
    try {
      return await call(this.cmd);
    } catch (err) {
      const message = (err as Error).message;
      if (/^(ERR|WRONGTYPE|NOSCRIPT)/.test(message) && !this.reportedErrors.has(message)) {
        this.reportedErrors.add(message);
        process.stderr.write(`llm-route: a Redis call failed (answered from local state): ${message}\n`);
      }
      return UNAVAILABLE;
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    this.ready = false;
    await Promise.all([quit(this.cmd), quit(this.sub)]);
  }

  private readonly onReady = (): void => {
    this.ready = true;
    void this.runRejoin().then(() => {
      if (this.degradedAt === null || !this.ready) return;
      const downMs = Date.now() - this.degradedAt;
      this.degradedAt = null;
      this.bus.emit({ type: 'state_recovered', backend: 'redis', target: this.target, downMs });
    });
  };

  private onDown(error: string): void {
    this.ready = false;
    if (this.closing || this.degradedAt !== null) return;
    this.degradedAt = Date.now();
    this.bus.emit({ type: 'state_degraded', backend: 'redis', target: this.target, error: error.replace(/\/\/[^@/]*@/g, '//***@') });
  }

  /** The hooks, one run at a time (both connections coming back ask for a run). */
  private runRejoin(): Promise<void> {
    this.rejoining = this.rejoining.then(async () => {
      for (const hook of this.rejoinHooks) {
        try {
          await hook();
        } catch {
          // a hook that fails (Redis went away again) runs again at the next rejoin
        }
      }
    });
    return this.rejoining;
  }
}

async function quit(redis: Redis): Promise<void> {
  try {
    if (redis.status === 'ready') await redis.quit();
    else redis.disconnect();
  } catch {
    redis.disconnect();
  }
}
