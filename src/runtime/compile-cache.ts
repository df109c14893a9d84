import module from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { tuningOff } from './switch.js';

type WithCompileCache = { enableCompileCache?: (directory: string) => unknown };

/**
 * Node ≥ 22.1 keeps the code it compiled for llm-route's modules on disk and reuses it on the
 * next start: ~40 ms less CPU of a `serve` start-up on Node 24. The cache lives in
 * $XDG_CACHE_HOME/llm-route/compile-cache (else ~/.cache/...), never the OS temp dir, which is
 * no place to leave files behind. Node 20 has no such cache: nothing happens there; nor with the
 * tuning switched off (src/runtime/switch.ts).
 */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  const enable = (module as WithCompileCache).enableCompileCache;
  if (!enable || tuningOff('compile-cache', env)) return; // Node < 22.1 (Node itself honours NODE_DISABLE_COMPILE_CACHE)
  const cache = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  try {
    enable(join(cache, 'llm-route', 'compile-cache'));
  } catch {
    // an unwritable cache dir costs the speed-up, nothing else
  }
}
