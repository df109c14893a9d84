import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';

/** Every command's --help ends with its exit codes and examples; bad flags exit 2 everywhere. */

function cli(args: string[]): { code: number | null; out: string; err: string } {
  const run = spawnSync(process.execPath, [join(repoRoot, 'bin/llm-route.js'), ...args], { encoding: 'utf8', env: { ...process.env, COLUMNS: '200' } });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

/** The command names a help text lists under "Commands:" (not `help`). */
function commandsOf(help: string): string[] {
  const section = help.split('\nCommands:\n')[1] ?? '';
  return section
    .split('\n')
    .map((line) => /^ {2}([a-z-]+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== 'help');
}

describe('llm-route --help', () => {
  const paths: string[][] = [];
  const collect = (path: string[]): void => {
    for (const name of commandsOf(cli([...path, '--help']).out)) {
      paths.push([...path, name]);
      collect([...path, name]);
    }
  };
  collect([]);

  it('lists the commands it knows', () => {
    expect(paths.map((p) => p.join(' '))).toEqual(expect.arrayContaining(['serve', 'exec', 'demo', 'mock', 'init', 'savers try', 'incidents show']));
  });

  it.each(paths.map((p) => [p.join(' '), p]))('%s --help: exit codes and an example of itself', (name, path) => {
    const help = cli([...(path as string[]), '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/\nExit codes:\n {2}\S/);
    expect(help.out).toContain(`\nExamples:\n  $ llm-route ${name}`);
  });

  it("names every client protocol it answers, Ollama's API among them", () => {
    const help = cli(['--help']).out.replace(/\s+/g, ' ');
    expect(help).toContain("(OpenAI Chat Completions and Responses, Anthropic Messages, Ollama's API) in front of ordered model tiers");
  });

  it('mock --help shows its numeric defaults as numbers', () => {
    const help = cli(['mock', '--help']).out;
    expect(help).toContain('completion length in tokens (default: 20)');
    expect(help).toContain('status used by --fail-rate (default: 503)');
    expect(help).not.toMatch(/\(default: "\d+"\)/);
  });

  it("a bad flag exits 2 for every command (1 is each command's own failure)", () => {
    for (const path of paths) {
      const run = cli([...path, '--no-such-flag']);
      expect(run.code, path.join(' ')).toBe(2);
      expect(run.err).toContain("unknown option '--no-such-flag'");
    }
  });
});
