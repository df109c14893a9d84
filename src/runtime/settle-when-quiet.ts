import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { tuningOff } from './switch.js';

/** How long nothing may happen before a thread counts as quiet. */
export const QUIET_MS = 1_500;
/** How often the quiet is looked for: a settle comes 1.5-2 s after the last activity. */
const LOOK_EVERY_MS = 500;
/** Heap growth since the last settle that makes another one worth its time. */
const REGROWTH_BYTES = 2 * 1024 * 1024;

export interface QuietWatch {
  /** When the thread last took on work (Date.now()): a request's arrival, a message. */
  lastActive: () => number;
  /** True while work is still under way, however long nothing new arrives (a stream). */
  busy?: () => boolean;
}

export interface SettleHooks {
  collect: () => void;
  heapBytes: () => number;
}

/**
 * Gives a thread's idle memory back once it has been quiet for QUIET_MS: one full, compacting
 * GC that also shrinks the young generation (V8's "last resort" flavour), 20-30 ms of a thread
 * with nothing else to do. V8 keeps the young generation it grew while loading (8 MB on Node 24)
 * and the start-up's garbage until such a GC: Node 20's memory reducer runs one after ~8 s of
 * quiet, Node 24's never did in our runs, and a `serve` that has answered its first request then
 * sat ~11 MB heavier for good. Node 22 and 24 take the option; Node 20's V8
 * (11.3) reads it as a minor GC, which costs ~1 ms and leaves the settling to its memory reducer.
 * After a settle, the next waits for new activity and for the heap to have grown by
 * REGROWTH_BYTES (a metrics scrape now and then is not worth a GC each time).
 * Returns a stop function; the timer never keeps a process alive. Nothing runs with the tuning
 * switched off (src/runtime/switch.ts).
 */
export function settleWhenQuiet(watch: QuietWatch, hooks: SettleHooks = v8Hooks()): () => void {
  if (tuningOff('gc-when-quiet')) return () => {};
  let settledFor: number | null = null; // lastActive() at the last settle
  let settledBytes = 0;
  const timer = setInterval(() => {
    const lastActive = watch.lastActive();
    if (lastActive === settledFor || Date.now() - lastActive < QUIET_MS || watch.busy?.()) return;
    if (settledFor !== null && hooks.heapBytes() < settledBytes + REGROWTH_BYTES) return;
    hooks.collect();
    settledFor = lastActive;
    settledBytes = hooks.heapBytes();
  }, LOOK_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

type GcOptions = { type: 'major'; execution: 'sync'; flavor: 'last-resort' };

/**
 * V8's own GC call, which Node exposes only behind --expose-gc: the flag, set now, gives each new
 * context a `gc` function (this thread's isolate collects, whichever context asks). Without a
 * `gc` there (a V8 that ignores the flag), nothing is collected.
 */
function v8Hooks(): SettleHooks {
  let gc: ((options: GcOptions) => void) | undefined | null = null;
  return {
    collect: () => {
      if (gc === null) {
        v8.setFlagsFromString('--expose-gc');
        const found: unknown = runInNewContext('typeof gc === "function" ? gc : undefined');
        gc = typeof found === 'function' ? (found as (options: GcOptions) => void) : undefined;
      }
      gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    },
    heapBytes: () => v8.getHeapStatistics().total_physical_size,
  };
}
