/** The pieces of start-up tuning, each in src/runtime/. */
export type Tuning = 'bundle' | 'compile-cache' | 'zod' | 'wasm-tier' | 'gc-when-quiet';

/**
 * The one switch for llm-route's start-up tuning, for an A/B: `LLM_ROUTE_NO_TUNING=1` turns off
 * every piece of it, all of which lives in src/runtime/ — the bundle (bin/llm-route.js runs
 * tsc's plain dist/ instead, so no stand-ins, no zod tree-shaken in and no builtins required for
 * imported), Node's compile cache, zod without its locales (unbundled: the bundle's zod has
 * only English anyway), undici's wasm parser kept on V8's baseline tier and
 * the GC once quiet; a comma-separated list of pieces (`LLM_ROUTE_NO_TUNING=zod,wasm-tier`)
 * turns off only those. What llm-route answers is the same either way; only how fast it starts
 * and how much memory it keeps change (`node bench/startup.mjs --ab` measures it in one run).
 */
export function tuningOff(piece: Tuning, env: NodeJS.ProcessEnv = process.env): boolean {
  const off = env.LLM_ROUTE_NO_TUNING;
  return off === '1' || (off ?? '').split(',').includes(piece);
}
