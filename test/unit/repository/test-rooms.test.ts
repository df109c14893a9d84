import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';

/** Each folder under `root` that holds files, with its files' names (folders without a file are left out). */
function foldersOf(root: string): Map<string, string[]> {
  const folders = new Map<string, string[]>();
  for (const entry of readdirSync(join(repoRoot, root), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const folder = relative(join(repoRoot, root), entry.parentPath);
    folders.set(folder, [...(folders.get(folder) ?? []), entry.name]);
  }
  return folders;
}

/**
 * test/unit/ mirrors src/ (test/README.md, "Layout"): the unit tests of `src/<room>/` are in
 * `test/unit/<room>/`, sub-rooms (`src/protocols/chat/`) included.
 */
describe('unit tests beside their rooms', () => {
  const src = foldersOf('src');
  const unit = foldersOf('test/unit');

  it('every room of src/ with three files or more has its unit tests in test/unit/<room>/', () => {
    const rooms = [...src].filter(([folder, files]) => folder !== '' && files.length >= 3).map(([folder]) => folder);
    expect(rooms.length).toBeGreaterThan(30);
    const without = rooms.filter((room) => !(unit.get(room) ?? []).some((name) => /\.test\.tsx?$/.test(name)));
    expect(without, 'rooms of src/ without a test/unit/<room>/ folder of tests').toEqual([]);
  });

  it('every folder of test/unit/ but repository/ is a room of src/', () => {
    const strays = [...unit.keys()].filter((folder) => folder !== '' && folder !== 'repository' && !src.has(folder));
    expect(strays, 'test/unit/ folders that name no src/ folder').toEqual([]);
  });
});
