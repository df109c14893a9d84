import type { FromEngine, ToEngine } from './messages.js';
import type { EngineOptions, UsageEngine } from './usage-engine.js';

/** When nothing needs the engine sooner, it loads this long after the link starts. */
const LOAD_AFTER_MS = 250;

export interface EngineLink {
  post(message: ToEngine): void;
  /** Stops delivering the engine's messages (after it answered its `close` call). */
  stop(): Promise<void>;
}

/**
 * The usage engine, on this thread behind an asynchronous link: messages in, handled in order on
 * the engine's promise queue, its messages out on a later turn. Not a worker thread: on Node 22
 * and 24 one costs 14-17 MB of resident memory for as long as the process lives (its isolate and
 * Node's bootstrap; terminate() gives back only ~5 MB). The engine's work is small and spread
 * out: rows every 200 ms, 100 to a transaction (CHUNK in usage-engine.ts), ~11 µs of CPU a
 * request all told (bench/RESULTS.md); a budget reservation is one short transaction; a prune
 * runs once a day.
 */
export function startEngine(
  onMessage: (message: FromEngine) => void,
  options: EngineOptions = {},
): EngineLink {
  let stopped = false;
  // Imported here, not at the top: a usage log that is off never loads the engine (nor SQLite).
  // Messages posted before it is there wait in order.
  let engine: UsageEngine | null = null;
  let loading = false;
  const waiting: ToEngine[] = [];
  const load = (): void => {
    if (loading) return;
    loading = true;
    clearTimeout(timer);
    void import('./usage-engine.js').then(({ UsageEngine }) => {
      engine = new UsageEngine((message) => setImmediate(() => !stopped && onMessage(message)), options);
      for (const message of waiting.splice(0)) engine.receive(message);
    });
  };
  // Loading SQLite and opening the database takes 10-30 ms of this thread: a `serve` that has
  // just started answers its first request before that, unless the request needs the engine (a
  // budget). Anything but the settings and the start-up totals' question loads it at once (a
  // row, a budget, a flush); the timer reports an unusable database soon after start.
  const timer = setTimeout(load, LOAD_AFTER_MS);
  return {
    post: (message) => {
      if (engine) return engine.receive(message);
      waiting.push(message);
      if (!canWait(message)) load();
    },
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** What the engine may be told before it has loaded: its settings, and the start-up totals' question. */
function canWait(message: ToEngine): boolean {
  return message.t === 'configure' || (message.t === 'call' && message.call.op === 'day_totals');
}
