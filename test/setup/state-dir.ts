import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

// The usage log is on by default and writes to $XDG_STATE_HOME/llm-route/usage.db: a test
// must never write to the real state dir. Each test file gets a fresh one, which CLI child
// processes inherit through the environment.
const stateDir = mkdtempSync(join(tmpdir(), 'llm-route-state-'));
process.env.XDG_STATE_HOME = stateDir;
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));
