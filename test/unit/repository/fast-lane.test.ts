import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUN_APART } from '../../../vitest.unit.config.js';
import { repoRoot } from '../../helpers/cli.js';

/** `npm run test:unit` shares a module graph between unit files: one that mocks a module must run apart. */
describe('the fast lane (vitest.unit.config.ts)', () => {
  const unitFiles = readdirSync(join(repoRoot, 'test/unit'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.test\.tsx?$/.test(entry.name))
    .map((entry) => relative(repoRoot, join(entry.parentPath, entry.name)));

  it('runs every unit file that mocks a module apart, and names only files that exist', () => {
    const mocking = unitFiles.filter((file) => /\bvi\.(do)?mock\(/.test(readFileSync(join(repoRoot, file), 'utf8')));
    expect(mocking.length).toBeGreaterThan(0);
    for (const file of mocking) expect(RUN_APART, `${file} mocks a module`).toContain(file);
    for (const file of RUN_APART) expect(existsSync(join(repoRoot, file)), file).toBe(true);
  });
});
