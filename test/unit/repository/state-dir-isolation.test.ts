import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { repoRoot } from '../../helpers/cli.js';
import { defaultUsagePath } from '../../../src/usage/paths.js';

describe("the test suite never touches the user's state dir", () => {
  it('points $XDG_STATE_HOME at a temporary dir of the test file (test/setup/state-dir.ts)', () => {
    expect(process.env.XDG_STATE_HOME?.startsWith(join(tmpdir(), 'llm-route-state-'))).toBe(true);
    expect(defaultUsagePath().startsWith(join(homedir(), '.local', 'state'))).toBe(false);
  });

  it('a spawned CLI inherits it: `usage` looks in the temporary dir, not ~/.local/state', () => {
    const run = spawnSync(process.execPath, ['bin/llm-route.js', 'usage'], { cwd: repoRoot, encoding: 'utf8' });
    expect(`${run.stdout}${run.stderr}`).toContain(join(process.env.XDG_STATE_HOME as string, 'llm-route', 'usage.db'));
  });
});
