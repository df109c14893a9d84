import { parentPort, workerData } from 'node:worker_threads';
import type { ToEngine } from './messages.js';
import { UsageEngine, type EngineOptions } from './usage-engine.js';
import { settleWhenQuiet } from '../util/settle-when-quiet.js';

// The worker thread's entry: the engine, fed by the main thread's UsageLog.
const port = parentPort;
if (port) {
  const engine = new UsageEngine((message) => port.postMessage(message), workerData as EngineOptions);
  let lastMessage = Date.now();
  port.on('message', (message: ToEngine) => {
    lastMessage = Date.now();
    engine.receive(message);
  });
  // The thread's own heap, given back once the main thread's messages stop for a while.
  settleWhenQuiet({ lastActive: () => lastMessage });
}
