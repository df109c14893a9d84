import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

// ioredis (CommonJS) is required when a tier file names Redis, not at start-up: most never do.
const requireLazily = createRequire(import.meta.url);
const RedisClient = (): typeof Redis => (requireLazily('ioredis') as typeof import('ioredis')).Redis;
import type { TelemetryBus } from '../telemetry/bus.js';
import { defineScripts, type Scripts } from './redis-scripts.js';

/** Returned by `run` when Redis could not answer: the caller serves from local state. */
export const UNAVAILABLE = Symbol('redis unavailable');

/** Reconnect backoff: 100 ms doubling to 2 s, so an instance rejoins within ~2 s of Redis being back. */
const MAX_RECONNECT_MS = 2_000;
/** A Redis that does not answer within this is treated as away for that call. */
const COMMAND_TIMEOUT_MS = 1_000;
/**
 * Calls kept to be made again once Redis answers, at most: give-backs of requests that ended
 * while it was away. Only requests in flight when it went away hold anything there, so this
 * is far more than needed; beyond it the oldest are dropped (a slot or hold then lapses by itself).
 */
const MAX_REPLAYS = 10_000;
/** A replay that failed while Redis is up (slow, not away) is tried again this much later. */
const REPLAY_RETRY_MS = 1_000;
/** A replay that keeps failing while Redis answers other calls is given up after this many tries. */
const MAX_REPLAY_TRIES = 5;
/** Replays made at once (pipelined on the one connection). */
const REPLAY_BATCH = 100;

/** One call on the command connection. */
export type RedisCall<T = unknown> = (redis: Redis & Scripts) => Promise<T>;

interface Replay {
  call: RedisCall;
  tries: number;
}

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
  private replays: Replay[] = [];
  private replaying: Promise<void> = Promise.resolve();
  private replayTimer: NodeJS.Timeout | null = null;

  constructor(
    url: string,
    private readonly bus: TelemetryBus,
  ) {
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
    this.cmd = defineScripts(new (RedisClient())(url, options));
    // The subscriber keeps its own queue: SUBSCRIBE must survive reconnects (autoResubscribe).
    this.sub = new (RedisClient())(url, {
      ...options,
      enableOfflineQueue: true,
      enableAutoPipelining: false,
      commandTimeout: undefined,
      connectionName: 'llm-route-sub',
    });
    this.cmd.on('ready', this.onReady);
    this.cmd.on('close', () => this.onDown('connection closed'));
    this.cmd.on('error', (err: Error) => this.onDown(err.message));
    this.sub.on('error', () => undefined); // the command connection reports the outage
    // The hooks read what others changed while this instance was away: only once its channels
    // hear again (ioredis resubscribes on its own, but does not say when that is done), so that a
    // change made between the read and the resubscription is not missed.
    this.sub.on('ready', () => void this.resubscribe().then(() => this.runRejoin()));
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

  /**
   * One call to Redis; UNAVAILABLE when it is away, slow or failed (a script error is reported
   * once on stderr). A call that was sent and failed may still have run (its reply came after
   * the timeout, or was lost with the connection): `ifLost`, when given, is then made once
   * Redis answers, to undo what it may have done.
   */
  async run<T>(call: RedisCall<T>, ifLost?: RedisCall): Promise<T | typeof UNAVAILABLE> {
    if (!this.ready) return UNAVAILABLE;
    try {
      return await call(this.cmd);
    } catch (err) {
      const message = (err as Error).message;
      if (/^(ERR|WRONGTYPE|NOSCRIPT)/.test(message) && !this.reportedErrors.has(message)) {
        this.reportedErrors.add(message);
        process.stderr.write(`llm-route: a Redis call failed (answered from local state): ${message}\n`);
      }
      if (ifLost) this.replayLater(ifLost);
      return UNAVAILABLE;
    }
  }

  /**
   * A call that must reach Redis (giving back what a request held there): when it cannot be
   * made now, it is made again once Redis answers. It must be safe to make twice, as it may
   * have run although its reply was lost.
   */
  async runOrReplay<T>(call: RedisCall<T>): Promise<T | typeof UNAVAILABLE> {
    if (this.ready) return this.run(call, call);
    this.replayLater(call);
    return UNAVAILABLE;
  }

  private async resubscribe(): Promise<void> {
    const channels = [...this.messageHooks.keys()];
    if (channels.length > 0) await this.sub.subscribe(...channels).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closing = true;
    this.ready = false;
    if (this.replayTimer) clearTimeout(this.replayTimer);
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

  private replayLater(call: RedisCall): void {
    this.replays.push({ call, tries: 0 });
    if (this.replays.length > MAX_REPLAYS) this.replays.shift();
    // Redis is up but did not answer in time: no rejoin will come, so try again on a timer.
    if (this.ready) this.scheduleReplay();
  }

  private scheduleReplay(): void {
    if (this.replayTimer || this.closing) return;
    this.replayTimer = setTimeout(() => {
      this.replayTimer = null;
      void this.replay();
    }, REPLAY_RETRY_MS);
    this.replayTimer.unref();
  }

  /** Makes the kept calls, one pass at a time; those that fail are kept for the next. */
  private replay(): Promise<void> {
    this.replaying = this.replaying.then(async () => {
      const replays = this.replays;
      this.replays = [];
      const failed: Replay[] = [];
      for (let i = 0; i < replays.length; i += REPLAY_BATCH) {
        const batch = replays.slice(i, i + REPLAY_BATCH);
        const replies = await Promise.all(batch.map((replay) => this.run(replay.call)));
        batch.forEach((replay, j) => {
          if (replies[j] !== UNAVAILABLE) return;
          // Away again: kept as it is. Up but failing (slow, or a script error): a few tries.
          if (!this.ready) failed.push(replay);
          else if (replay.tries + 1 < MAX_REPLAY_TRIES) failed.push({ call: replay.call, tries: replay.tries + 1 });
        });
      }
      this.replays = [...failed, ...this.replays].slice(-MAX_REPLAYS);
      if (this.replays.length > 0 && this.ready) this.scheduleReplay();
    });
    return this.replaying;
  }

  /** The kept calls, then the hooks, one run at a time (both connections coming back ask for a run). */
  private runRejoin(): Promise<void> {
    this.rejoining = this.rejoining.then(async () => {
      // First: the hooks read the shared counters these give back to.
      await this.replay();
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
