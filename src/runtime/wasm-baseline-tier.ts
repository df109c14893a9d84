import { setFlagsFromString } from 'node:v8';
import { tuningOff } from './switch.js';

/**
 * Keeps WebAssembly on V8's baseline compiler (Liftoff) for the rest of this process. The only
 * wasm llm-route runs is undici's HTTP parser (llhttp), and within a few responses V8 recompiles
 * its parse loop with TurboFan: a 23 MB malloc peak on a background thread (Node 24; 37 MB on
 * Node 20), of which ~9 MB is never given back to the OS, so an idle `serve` sat ~10 MB heavier,
 * or not, depending on when that compile ran. Set at run time, these two work on Node 20 to 24
 * (`--liftoff-only` does not on Node 24): without dynamic tiering, tier-up is all or nothing,
 * and the second flag turns it off. A streamed response through undici costs
 * the same either way (bench/RESULTS.md). For a process's own proxy (serve, exec), before its
 * first upstream connection (where undici compiles llhttp).
 */
export function keepWasmOnBaselineTier(): void {
  if (tuningOff('wasm-tier')) return;
  setFlagsFromString('--no-wasm-dynamic-tiering');
  setFlagsFromString('--no-wasm-tier-up');
}
