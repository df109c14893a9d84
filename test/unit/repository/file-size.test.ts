import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';

/** The house keeps each source file under 300 lines: one idea a file, a file a person can hold. */
const MAX_LINES = 300;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

describe('the size of src/ files', () => {
  it(`keeps every file at ${MAX_LINES} lines or fewer`, () => {
    const files = sourceFiles(join(repoRoot, 'src'));
    expect(files.length).toBeGreaterThan(100);
    const over = files
      .map((file) => ({ file: relative(repoRoot, file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(over).toEqual([]);
  });
});
