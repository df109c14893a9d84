import type { EngineOptions, EngineReports, UsageEngine } from './usage-engine.js';

/** When nothing needs the engine sooner, it loads this long after the link starts. */
const LOAD_AFTER_MS = 250;

/** Work asked of the engine before it had loaded: run in order once it has, or failed if the link stops first. */
interface Waiting {
  run(engine: UsageEngine): void;
  fail(err: Error): void;
}

/**
 * The usage engine, on this thread, loaded at first need. Not a worker thread: on Node 22
 * and 24 one costs 14-17 MB of resident memory for as long as the process lives (its isolate and
 * Node's bootstrap; terminate() gives back only ~5 MB). The engine's work is small and spread
 * out: rows every 200 ms, 100 to a transaction (CHUNK in usage-engine.ts), ~11 µs of CPU a
 * request all told (bench/RESULTS.md); a budget reservation is one short transaction; a prune
 * runs once a day.
 */
export class EngineLink {
  // Imported when loaded, not at the top: a usage log that is off never loads the engine (nor SQLite).
  private engine: UsageEngine | null = null;
  private loading = false;
  private stopped = false;
  private readonly waiting: Waiting[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly reports: EngineReports,
    private readonly options: EngineOptions = {},
  ) {
    // Loading SQLite and opening the database takes 10-30 ms of this thread: a `serve` that has
    // just started answers its first request before that, unless the request needs the engine (a
    // budget). Anything but the settings and the start-up totals' question loads it at once (a
    // row, a budget, a flush); the timer reports an unusable database soon after start.
    this.timer = setTimeout(() => this.load(), LOAD_AFTER_MS);
  }

  /**
   * Runs `work` on the engine: now if it has loaded, else as soon as it has, in the order asked.
   * Work that `canWait` (the settings, the start-up totals' question) does not load it sooner.
   */
  run<T>(work: (engine: UsageEngine) => T | Promise<T>, canWait = false): Promise<T> {
    if (this.engine) return runOn(this.engine, work);
    if (this.stopped) return Promise.reject(new Error('the usage log is closed'));
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ run: (engine) => resolve(runOn(engine, work)), fail: reject });
      if (!canWait) this.load();
    });
  }

  /** The link is done (after the engine's close): work still waiting for it to load fails. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const waiting of this.waiting.splice(0)) waiting.fail(new Error('the usage log is closed'));
  }

  private load(): void {
    if (this.loading) return;
    this.loading = true;
    clearTimeout(this.timer);
    void import('./usage-engine.js').then(({ UsageEngine }) => {
      if (this.stopped) return;
      const engine = new UsageEngine(this.reports, this.options);
      for (const waiting of this.waiting.splice(0)) waiting.run(engine);
      this.engine = engine;
    });
  }
}

/** `work` on `engine`, now; a throw becomes a rejection. */
function runOn<T>(engine: UsageEngine, work: (engine: UsageEngine) => T | Promise<T>): Promise<T> {
  return new Promise<T>((resolve) => resolve(work(engine)));
}
