import { type MockProcess, startMockProcess } from './mock-process.js';

/** The local tier goes away for OUTAGE_MS every CYCLE_MS, so failover and recovery show up. */
const CYCLE_MS = 30_000;
const OUTAGE_MS = 8_000;

/**
 * Takes the demo's local mock down now and then and brings it back on the same port.
 * `stop()` ends the cycle and stops whichever process is running.
 */
export function startOutages(first: MockProcess, restartArgs: string[]): { stop(): Promise<void> } {
  let current: MockProcess | null = first;
  let stopping = false;
  let cycle: Promise<void> = Promise.resolve();
  let wake: (() => void) | null = null;
  const timer = setInterval(() => {
    cycle = (async () => {
      if (stopping || !current) return;
      const down: MockProcess = current;
      current = null;
      await down.stop();
      await new Promise<void>((resolve) => {
        const pause = setTimeout(resolve, OUTAGE_MS);
        wake = () => {
          clearTimeout(pause);
          resolve();
        };
      });
      wake = null;
      if (!stopping) current = await startMockProcess(restartArgs).catch(() => null);
    })();
  }, CYCLE_MS);
  return {
    stop: async () => {
      stopping = true;
      clearInterval(timer);
      wake?.();
      await cycle;
      await current?.stop();
    },
  };
}
