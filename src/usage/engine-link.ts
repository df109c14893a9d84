import { Worker } from 'node:worker_threads';
import type { FromEngine, ToEngine } from './messages.js';
import type { EngineOptions, UsageEngine } from './usage-engine.js';

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
export function startEngine(
  onMessage: (message: FromEngine) => void,
  options: EngineOptions & { mode?: EngineMode } = {},
  onExit: (error: string) => void = () => undefined,
): EngineLink {
  const { mode = defaultMode(), retryBaseMs, retryMaxMs, busyTimeoutMs, maxPageCount, holdMs, now } = options;
  const engineOptions: EngineOptions = { retryBaseMs, retryMaxMs, busyTimeoutMs, maxPageCount, holdMs };
  if (mode === 'inline') return inlineEngine(onMessage, { ...engineOptions, now });
  // Only data crosses to a thread (an injected clock stays inline-only).
  const worker = new Worker(new URL('./usage-thread.js', import.meta.url), { workerData: engineOptions });
  worker.unref(); // never what keeps a process alive: close() flushes first
  let stopping = false;
  let failure = '';
  worker.on('message', onMessage);
  worker.on('error', (err) => (failure = err.message));
  worker.on('exit', (code) => {
    if (!stopping) onExit(failure || `the usage thread exited (code ${code})`);
  });
  return {
    post: (message) => worker.postMessage(message),
    stop: async () => {
      stopping = true;
      await worker.terminate();
    },
  };
}

function defaultMode(): EngineMode {
  return import.meta.url.endsWith('.js') ? 'worker' : 'inline';
}

function inlineEngine(onMessage: (message: FromEngine) => void, options: EngineOptions): EngineLink {
  let stopped = false;
  // Imported here, not at the top: in worker mode the main thread never loads the engine (nor
  // SQLite). Messages posted before it is there wait in order, as they would for a thread.
  let engine: UsageEngine | null = null;
  const waiting: ToEngine[] = [];
  void import('./usage-engine.js').then(({ UsageEngine }) => {
    // Replies arrive on a later turn, as they would from a thread.
    engine = new UsageEngine((message) => setImmediate(() => !stopped && onMessage(message)), options);
    for (const message of waiting.splice(0)) engine.receive(message);
  });
  return {
    post: (message) => (engine ? engine.receive(message) : waiting.push(message)),
    stop: async () => {
      stopped = true;
    },
  };
}
