import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';

interface Graph {
  files: number;
  cycles: string[][];
  upward: Array<{ from: string; to: string }>;
  unlisted: string[];
}

const script = join(repoRoot, 'scripts/import-graph.mjs');
const graphOf = (root?: string): Graph =>
  JSON.parse(execFileSync(process.execPath, [script, ...(root ? [root] : []), '--json'], { encoding: 'utf8' })) as Graph;

describe('the import graph of src/ (scripts/import-graph.mjs)', () => {
  it('has no import cycle, no import from a lower layer to a higher one, no directory outside the layers', () => {
    const graph = graphOf();
    expect(graph.files).toBeGreaterThan(100);
    expect(graph.cycles).toEqual([]);
    expect(graph.upward).toEqual([]);
    expect(graph.unlisted).toEqual([]);
  });

  describe('finds what it is there to find, in a tree made for it', () => {
    const root = mkdtempSync(join(tmpdir(), 'llm-route-import-graph-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const write = (file: string, text: string): void => {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    };
    // A cycle inside config/, util/ reaching up into config/ (a type-only import), and
    // peers of one rank (sse/, http/) that lean on each other.
    write('config/a.ts', "import { b } from './b.js';\nexport const a = (): number => b();\n");
    write('config/b.ts', "export const b = (): number => 1;\nexport const later = () => import('./a.js');\n");
    write('util/c.ts', "import type { a } from '../config/a.js';\nexport type C = typeof a;\n");
    write('config/d.ts', "// import('../cli/e.js') named in a comment is not an import\nimport { c } from '../util/ok.js';\nexport const d = c;\n");
    write('util/ok.ts', 'export const c = 1;\n');
    write('sse/f.ts', "export * from '../http/g.js';\n");
    write('http/g.ts', 'export const g = 1;\n');
    write('nowhere/h.ts', "import '../util/ok.js';\n");

    it('reports the cycle, the upward imports and the unlisted directory', () => {
      const graph = graphOf(root);
      expect(graph.cycles).toEqual([['config/a.ts', 'config/b.ts']]);
      expect(graph.upward.map((edge) => `${edge.from} → ${edge.to}`).sort()).toEqual(['sse/f.ts → http/g.ts', 'util/c.ts → config/a.ts']);
      expect(graph.unlisted).toEqual(['nowhere']);
    });

    it('fails --check with a report for people', () => {
      const run = spawnSync(process.execPath, [script, root, '--check'], { encoding: 'utf8' });
      expect(run.status).toBe(1);
      expect(run.stdout).toMatch(/1 cycles, 2 upward imports/);
      expect(run.stdout).toContain('upward: util/c.ts → config/a.ts (util may not import config)');
    });
  });
});
