import { parentPort, workerData } from 'node:worker_threads';
import type { ToEngine } from './messages.js';
import { UsageEngine, type EngineOptions } from './usage-engine.js';

// The worker thread's entry: the engine, fed by the main thread's UsageLog.
const port = parentPort;
if (port) {
  const engine = new UsageEngine((message) => port.postMessage(message), workerData as EngineOptions);
  port.on('message', (message: ToEngine) => engine.receive(message));
}
