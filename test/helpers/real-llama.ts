import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The real llama-server of ../shared/real-llama (built once per machine by its build.sh): where
 * its build lives, the script that starts it, and whether both are here. Tests that use it skip
 * when they are not. `shared/` sits beside the checkout (CI lays it beside its clone too).
 */
export const REAL_LLAMA_DIR = process.env.LLAMA_DIR ?? '/tmp/real-llama';
export const REAL_LLAMA_BIN = `${REAL_LLAMA_DIR}/llama.cpp/build/bin/llama-server`;
export const REAL_LLAMA_START = process.env.REAL_LLAMA_START ?? fileURLToPath(new URL('../../../shared/real-llama/start.sh', import.meta.url));
export const realLlamaBuilt = (): boolean => existsSync(REAL_LLAMA_BIN) && existsSync(REAL_LLAMA_START);
