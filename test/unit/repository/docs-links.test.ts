import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';

/**
 * The README is the front door and docs/ the reference: every relative link in them (`](path)`,
 * `](path#anchor)`, `](#anchor)`, pictures too) reaches a file or folder of this repository, and
 * an anchor reaches a heading of its page, as GitHub names headings. The README and docs/README.md
 * (the index) each link every page of docs/.
 */

const root = repoRoot;
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const docPages = pages.filter((p) => p.startsWith('docs/'));

/** A page's text with its fenced blocks and inline code blanked (a `](x)` or `# x` in code is neither a link nor a heading). */
function prose(text: string): string {
  return text.replace(/^ *```[^\n]*\n[\s\S]*?^ *``` *$/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; a repeat gets -1, -2, … */
function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const withoutFences = text.replace(/^ *```[^\n]*\n[\s\S]*?^ *``` *$/gm, '');
  for (const [, heading] of withoutFences.matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The relative link targets of a page (web addresses left out). */
function links(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)].map((m) => m[1]).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** What is wrong with one link of `page` (null: it resolves). */
function problem(page: string, target: string): string | null {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? join(root, page) : resolve(dirname(join(root, page)), decodeURI(path));
  if (!file.startsWith(root)) return `${target}: outside the repository`;
  if (!existsSync(file)) return `${target}: no ${relative(root, file)}`;
  if (anchor === undefined) return null;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `${target}: an anchor on something that is not a page`;
  return headingAnchors(readFileSync(file, 'utf8')).has(anchor) ? null : `${target}: no heading #${anchor} in ${relative(root, file)}`;
}

describe('links in the README and docs/', () => {
  it.each(pages)('every relative link in %s reaches a file, and its anchor a heading', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const found = links(text);
    expect(found.length).toBeGreaterThan(0);
    expect(found.map((target) => problem(page, target)).filter(Boolean)).toEqual([]);
  });

  it('the README and the index each link every page of docs/', () => {
    const linked = (page: string) =>
      new Set(links(readFileSync(join(root, page), 'utf8')).map((target) => relative(root, resolve(dirname(join(root, page)), target.split('#')[0]))));
    const fromReadme = linked('README.md');
    const fromIndex = linked('docs/README.md');
    expect(docPages.filter((p) => !fromReadme.has(p))).toEqual([]);
    expect(docPages.filter((p) => p !== 'docs/README.md' && !fromIndex.has(p))).toEqual([]);
  });

  it('names anchors as GitHub does, and the check catches a link that reaches nothing', () => {
    expect([
      ...headingAnchors("## Ollama's API in\n## `warm: true`\n## Traces (OpenTelemetry), opt-in\n## Ollama's API in\n```sh\n# not a heading\n```\n"),
    ]).toEqual(['ollamas-api-in', 'warm-true', 'traces-opentelemetry-opt-in', 'ollamas-api-in-1']);
    expect(problem('README.md', 'docs/nowhere.md')).toBe('docs/nowhere.md: no docs/nowhere.md');
    expect(problem('README.md', 'docs/routing.md#no-such-heading')).toBe('docs/routing.md#no-such-heading: no heading #no-such-heading in docs/routing.md');
    expect(problem('docs/routing.md', '../README.md#quick-start')).toBeNull();
    expect(problem('docs/routing.md', '#the-plan')).toBeNull();
  });
});
