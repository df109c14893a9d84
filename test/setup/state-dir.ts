import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

// The usage log is on by default and writes to $XDG_STATE_HOME/llm-route/usage.db: a test
// must never write to the real state dir. Each test file gets a fresh one, which CLI child
// processes inherit through the environment. Likewise $XDG_CACHE_HOME, where the CLI keeps
// Node's compile cache (src/runtime/compile-cache.ts).
const stateDir = mkdtempSync(join(tmpdir(), 'llm-route-state-'));
process.env.XDG_STATE_HOME = stateDir;
const cacheDir = mkdtempSync(join(tmpdir(), 'llm-route-cache-'));
process.env.XDG_CACHE_HOME = cacheDir;
afterAll(() => {
  rmSync(stateDir, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});
