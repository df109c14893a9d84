import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';

// Every reference in the code resolves inside the repository: a comment, test or bench note
// cites README.md or a page of docs/, never a document a clone does not have (the planning
// notes the project was built from) or an issue number of a tracker outside it.

/** The folders whose files may cite documents, and the file kinds read there. */
const CITING_FOLDERS = ['src', 'test', 'scripts', 'bench', 'bin', 'examples'];
const CITING_FILE = /\.(ts|tsx|mjs|js|md|sh|yaml|py)$/;

/** Documents outside the repository, and issue numbers. */
const OUTSIDE = /\bSPEC\b|\bDESIGN\b|\.\.\/shared\b|\b[Ii]ssues? #?\d+/;
/** A section of the README, as comments cite one: `README "Quick start"`, `the README's "Commands"`. */
const README_SECTION = /README(?:'s|:|,)? "([^"]+)"/g;
/** A path into the repository's own documents and scripts, as comments cite them. */
const CITED_PATH = /(?<![\w./-])((?:docs|bench|examples|scripts)\/[\w./-]*\w\.(?:md|png|yaml|mjs|sh|py))/g;

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'fixtures' ? [] : filesUnder(path);
    return CITING_FILE.test(entry.name) ? [path] : [];
  });
}

/** What in `text` cites a document the tree does not hold: `line: reference` for each. */
function unresolvedReferences(text: string, exists: (path: string) => boolean, readmeHeadings: readonly string[]): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    const outside = OUTSIDE.exec(line);
    if (outside) found.push(`${i + 1}: ${outside[0]}`);
    for (const match of line.matchAll(CITED_PATH)) if (!exists(match[1])) found.push(`${i + 1}: ${match[1]}`);
    for (const match of line.matchAll(README_SECTION)) if (!readmeHeadings.includes(match[1])) found.push(`${i + 1}: ${match[0]}`);
  });
  return found;
}

const inTree = (path: string) => existsSync(join(repoRoot, path));
const headingsOf = (markdown: string) => [...markdown.matchAll(/^#+ (.+)$/gm)].map((match) => match[1].trim());
const readmeHeadings = headingsOf(readFileSync(join(repoRoot, 'README.md'), 'utf8'));
// This file's and the link test's samples name pages and sections that are not there on purpose.
const SAMPLES = ['test/unit/repository/references.test.ts', 'test/unit/repository/docs-links.test.ts'];

describe('references in the code', () => {
  it('finds what a clone cannot follow: a planning note, an issue number, a docs page or README section that is not there', () => {
    // The forbidden words are put together here, so that this file does not itself hold them.
    const [plan, design, issue, shared] = [
      ['SP', 'EC'],
      ['DES', 'IGN'],
      ['iss', 'ue 33'],
      ['../sha', 'red'],
    ].map((parts) => parts.join(''));
    const sample = [
      `// as ${plan} "Route by fit" says`,
      `// see ${design}.md`,
      `// (${issue}, point 4)`,
      `// from ${shared}/seeds`,
      '// docs/fit.md holds it',
      '// docs/no-such-page.md holds it',
      '// (README "Quick start")',
      '// (README "Traces", a section that moved to docs/)',
    ].join('\n');
    expect(unresolvedReferences(sample, inTree, readmeHeadings)).toEqual([
      `1: ${plan}`,
      `2: ${design}`,
      `3: ${issue}`,
      `4: ${shared}`,
      '6: docs/no-such-page.md',
      '8: README "Traces"',
    ]);
  });

  it('in src/, test/, scripts/, bench/, bin/ and examples/ all resolve inside the repository', () => {
    const files = CITING_FOLDERS.flatMap((folder) => filesUnder(join(repoRoot, folder))).filter((file) => !SAMPLES.includes(relative(repoRoot, file)));
    expect(files.length).toBeGreaterThan(400);
    const unresolved = files.flatMap((file) =>
      unresolvedReferences(readFileSync(file, 'utf8'), inTree, readmeHeadings).map((found) => `${relative(repoRoot, file)}:${found}`),
    );
    expect(unresolved).toEqual([]);
  });
});
