import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { completion, healthyStream } from '../helpers/fake-upstream.js';
import { useHarness } from '../helpers/harness.js';

/**
 * The README's SDK snippets ("Point your app at it"), each block run on its own as a module with
 * the real `openai` and `@anthropic-ai/sdk` against a running proxy: a block that leans on
 * another's variables (the Anthropic block once called the OpenAI block's `client`) fails.
 */

const h = useHarness();
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'llm-route-readme-snippets-'));
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function snippets(): string[] {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Point your app at it'), readme.indexOf('**Claude Code and Codex**'));
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
}

function runModule(file: string): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [file], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, err })));
}

describe("the README's SDK snippets", () => {
  it('each block runs on its own against the proxy', async () => {
    const up = await h.fake();
    const stream = healthyStream(['hel', 'lo']);
    up.always((ctx) => (ctx.body.stream ? stream(ctx) : ctx.json(200, completion('hello'))));
    const p = await h.proxy({ tiers: [{ name: 'local', url: up.url }] });

    const blocks = snippets();
    expect(blocks.map((b) => /from '(openai|@anthropic-ai\/sdk)'/.exec(b)?.[1])).toEqual(['openai', '@anthropic-ai/sdk']);
    for (const [i, block] of blocks.entries()) {
      const file = join(dir, `snippet-${i}.mjs`);
      writeFileSync(file, block.replaceAll('http://127.0.0.1:4141', p.origin));
      const run = await runModule(file);
      expect(run.code, `block ${i}:\n${block}\n${run.err}`).toBe(0);
    }
    const protocols = p.logs.filter((l) => l.event === 'request').map((l) => l.protocol);
    expect(protocols.sort()).toEqual(['chat', 'messages', 'responses']);
  }, 60_000);
});
