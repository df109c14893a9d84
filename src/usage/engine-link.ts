import { Worker } from 'node:worker_threads';
import type { FromEngine, ToEngine } from './messages.js';
import { UsageEngine, type EngineOptions } from './usage-engine.js';

export type EngineMode = 'worker' | 'inline';

export interface EngineLink {
  post(message: ToEngine): void;
  /** Stops the thread (after the engine answered its `close` call). */
  stop(): Promise<void>;
}

/**
 * The usage engine in a worker thread, so SQLite and the tokenizer never run on the thread
 * that serves requests. Run from the TypeScript sources (the test runner) there is no compiled
 * worker file to start: the same engine then runs inline, behind the same asynchronous link.
 */
export function startEngine(onMessage: (message: FromEngine) => void, options: EngineOptions & { mode?: EngineMode } = {}): EngineLink {
  const { mode = defaultMode(), retryBaseMs, retryMaxMs, busyTimeoutMs, maxPageCount, holdMs, now } = options;
  const engineOptions: EngineOptions = { retryBaseMs, retryMaxMs, busyTimeoutMs, maxPageCount, holdMs };
  if (mode === 'inline') return inlineEngine(onMessage, { ...engineOptions, now });
  // Only data crosses to a thread (an injected clock stays inline-only).
  const worker = new Worker(new URL('./usage-thread.js', import.meta.url), { workerData: engineOptions });
  worker.unref(); // never what keeps a process alive: close() flushes first
  worker.on('message', onMessage);
  worker.on('error', (err) => onMessage({ t: 'degraded', path: '', error: `usage thread failed: ${err.message}` }));
  return {
    post: (message) => worker.postMessage(message),
    stop: async () => {
      await worker.terminate();
    },
  };
}

function defaultMode(): EngineMode {
  return import.meta.url.endsWith('.js') ? 'worker' : 'inline';
}

function inlineEngine(onMessage: (message: FromEngine) => void, options: EngineOptions): EngineLink {
  let stopped = false;
  // Replies arrive on a later turn, as they would from a thread.
  const engine = new UsageEngine((message) => setImmediate(() => !stopped && onMessage(message)), options);
  return {
    post: (message) => engine.receive(message),
    stop: async () => {
      stopped = true;
    },
  };
}
