import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { ProxyServer } from '../../../src/server/server.js';
import { buildPrivateCli, type CliProcess, repoRoot, runCli } from '../../helpers/cli.js';
import { closedPort } from '../../helpers/ports.js';

/**
 * The README's recipe for a machine without Ollama (in "Quick start"), run as written: the mock on Ollama's port is the Ollama
 * `init` finds, and the tier file init writes serves from it. Ollama's port is the one thing
 * moved (to a free one, through LLM_ROUTE_INIT_PORTS, where init looks for Ollama), so a real
 * Ollama on this machine neither answers in its place nor is disturbed.
 */

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
let cli: ReturnType<typeof buildPrivateCli>;
let dir: string;
const running: CliProcess[] = [];

beforeAll(() => {
  cli = buildPrivateCli();
  dir = mkdtempSync(join(tmpdir(), 'llm-route-no-ollama-'));
});
afterAll(() => {
  for (const p of running) p.child.kill('SIGKILL');
  cli?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The commands of the ```sh block after `after`, comments and a trailing `&` dropped, each as its words. */
function recipe(after: string): string[][] {
  const from = readme.indexOf(after);
  expect(from, `the README has "${after}"`).toBeGreaterThan(-1);
  const start = readme.indexOf('```sh\n', from) + '```sh\n'.length;
  return readme
    .slice(start, readme.indexOf('```', start))
    .split('\n')
    .map((line) =>
      line
        .replace(/\s+#.*$/, '')
        .replace(/\s*&$/, '')
        .trim(),
    )
    .filter(Boolean)
    .map((line) => line.split(/\s+/));
}

describe('README: no Ollama yet?', () => {
  it('the mock on Ollama’s port is the Ollama init finds; the file init writes validates and answers through llm-route', async () => {
    const [mockLine, initLine] = recipe('**No Ollama yet?**');
    expect(mockLine.slice(0, 2)).toEqual(['llm-route', 'mock']);
    expect(mockLine).toContain('11434');
    expect(initLine).toEqual(['llm-route', 'init']);
    const model = mockLine[mockLine.indexOf('--name') + 1];

    const port = await closedPort();
    const mock = runCli(
      cli.bin,
      mockLine.slice(1).map((word) => (word === '11434' ? String(port) : word)),
    );
    running.push(mock);
    await mock.waitForLine((line) => line.includes(`http://127.0.0.1:${port}`));

    // Every other kind init looks for points at a closed port: only the mock can be found.
    const closed = await closedPort();
    const ports = { LLM_ROUTE_INIT_PORTS: `ollama=${port},lmstudio=${closed},llamacpp=${closed},vllm=${closed}` };
    const keys = { ANTHROPIC_API_KEY: undefined, OPENAI_API_KEY: undefined, OLLAMA_HOST: undefined };
    const init = runCli(cli.bin, [...initLine.slice(1), '--yes'], { ...ports, ...keys }, { cwd: dir });
    expect((await init.exited).code, init.stderr()).toBe(0);
    expect(init.lines).toContain(`  found Ollama at http://127.0.0.1:${port}: ${model}`);

    const file = join(dir, 'llm-route.yaml');
    const validate = runCli(cli.bin, ['validate'], {}, { cwd: dir });
    expect((await validate.exited).code, validate.stderr()).toBe(0);
    // init says of the file it wrote what validate says of it, in the same words.
    expect(validate.lines[0]).toMatch(/^ok: .*llm-route\.yaml — 1 route \(chat: ollama\), 1 provider$/);
    expect(init.lines).toContain(validate.lines[0]);
    const config = loadConfig(file, {});
    const tier = config.routes.get('chat')?.tiers[0];
    expect([tier?.provider.type, tier?.provider.base_url, tier?.model]).toEqual(['ollama', `http://127.0.0.1:${port}`, model]);

    // The proxy serve would start on that file: an Ollama client's chat gets the mock's answer.
    const proxy = new ProxyServer({ config, port: 0 });
    const { url } = await proxy.listen();
    try {
      const answer = await new Ollama({ host: url }).chat({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
      expect(answer.message.content).toMatch(new RegExp(`^\\[${model.replace(/[.]/g, '\\.')}\\] hello`));
      const preload = await new Ollama({ host: url }).generate({ model: 'chat', prompt: '' });
      expect(preload).toMatchObject({ done: true, done_reason: 'load' });
    } finally {
      await proxy.close(500);
    }
  });
});
