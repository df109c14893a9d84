import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';

/** What `npm pack` would publish, as it lists it (the package as a user installs it). */
function packed(): string[] {
  const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repoRoot, encoding: 'utf8' });
  expect(pack.status, pack.stderr).toBe(0);
  return (JSON.parse(pack.stdout) as Array<{ files: Array<{ path: string }> }>)[0].files.map((file) => file.path);
}

describe('the package as npm pack makes it', () => {
  const files = packed();

  it('carries the license package.json names: MIT, its text in LICENSE', () => {
    expect(JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).license).toBe('MIT');
    expect(files).toContain('LICENSE');
    const text = readFileSync(join(repoRoot, 'LICENSE'), 'utf8');
    expect(text).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} llm-route contributors\n/);
    expect(text).toContain('THE SOFTWARE IS PROVIDED "AS IS"');
  });

  it('ships no source map, and no script that points at one (the sources they name are not shipped)', () => {
    expect(files.some((file) => file.startsWith('src/'))).toBe(false);
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
    const pointing = files.filter((file) => file.endsWith('.js') && readFileSync(join(repoRoot, file), 'utf8').includes('sourceMappingURL='));
    expect(pointing).toEqual([]);
  });

  it("leaves no packed tarball for git to show (npm pack's .tgz is ignored)", () => {
    const ignored = readFileSync(join(repoRoot, '.gitignore'), 'utf8').split('\n');
    expect(ignored).toContain('*.tgz');
  });
});
