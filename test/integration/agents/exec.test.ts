import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMockOptions } from '../../../src/mock/options.js';
import { startMock, type MockServer } from '../../../src/mock/server.js';
import { buildPrivateCli, runCli, type CliProcess } from '../../helpers/cli.js';

const require = createRequire(import.meta.url);

// `llm-route exec` through the real CLI: the child finds the proxy in its environment,
// its exit code is llm-route's, and llm-route never writes to the child's stdout.

let cli: ReturnType<typeof buildPrivateCli>;
let mock: MockServer;
let dir: string;
let configFile: string;

/** The child: asks the proxy for a completion, prints what it saw as one JSON line, exits with argv[1]. */
const CHILD = `
(async () => {
  const base = process.env.OPENAI_BASE_URL;
  const res = await fetch(base + '/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.OPENAI_API_KEY },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = await res.json();
  console.log(JSON.stringify({
    base, apiBase: process.env.OPENAI_API_BASE, root: process.env.LLM_ROUTE_URL, key: process.env.OPENAI_API_KEY,
    status: res.status, tier: res.headers.get('x-llm-route-tier'), content: body.choices && body.choices[0].message.content,
  }));
  process.exit(Number(process.argv[1] || 0));
})();
`;

interface ChildReport {
  base: string;
  apiBase: string;
  root: string;
  key: string;
  status: number;
  tier: string | null;
  content: string | undefined;
}

function writeConfig(name: string, extra: string[] = []): string {
  const file = join(dir, name);
  const yaml = [
    'version: 1',
    ...extra,
    'providers:',
    '  m:',
    '    type: openai',
    `    base_url: ${mock.url}`,
    'routes:',
    '  chat:',
    '    tiers:',
    '      - { provider: m, model: m-model }',
    '',
  ];
  writeFileSync(file, yaml.join('\n'));
  return file;
}

function exec(args: string[], env: Record<string, string | undefined> = {}): CliProcess {
  return runCli(cli.bin, ['exec', ...args], env);
}

async function finished(run: CliProcess): Promise<{ code: number | null; stdout: string[]; stderr: string }> {
  const { code } = await run.exited;
  return { code, stdout: run.lines, stderr: run.stderr() };
}

beforeAll(async () => {
  cli = buildPrivateCli();
  mock = await startMock(parseMockOptions({ name: 'm' }));
  dir = mkdtempSync(join(tmpdir(), 'llm-route-exec-'));
  configFile = writeConfig('llm-route.yaml');
});

afterAll(async () => {
  await mock?.close();
  cli?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('llm-route exec', () => {
  it('gives the child the proxy in OPENAI_BASE_URL, and its chat request goes through to the tier', async () => {
    const run = await finished(exec(['-c', configFile, '--', process.execPath, '-e', CHILD]));
    expect(run.code, run.stderr).toBe(0);
    // stdout belongs to the child: its one line and nothing from llm-route.
    expect(run.stdout).toHaveLength(1);
    const report = JSON.parse(run.stdout[0]) as ChildReport;
    expect(report.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(report.apiBase).toBe(report.base);
    expect(report.root).toBe(report.base.replace(/\/v1$/, ''));
    expect(report.status).toBe(200);
    expect(report.tier).toBe('m');
    expect(report.content).toMatch(/^\[m\]/);
    // stderr: only the exit summary, once the child has exited (docs/agents.md).
    expect(run.stderr).toMatch(
      /^llm-route: this run \(\d+s\): 1 request, 1 local \/ 0 cloud \(chat\/m 1\); 0 fallbacks; 0 tool calls recovered; 1 in \+ 20 out tokens; \$0\nllm-route: the same from the usage log: llm-route usage -c \S+ --since \S+ --run [0-9a-z]{10} --by tier\n$/,
    );
  });

  it.each([0, 3, 42])('exits with the child exit code %i', async (code) => {
    const run = await finished(exec(['-c', configFile, '--', process.execPath, '-e', CHILD, String(code)]));
    expect(run.code, run.stderr).toBe(code);
    expect((JSON.parse(run.stdout[0]) as ChildReport).status).toBe(200);
  });

  it('exits with 128+n when a signal ends the child', async () => {
    const run = await finished(exec(['-c', configFile, '--', process.execPath, '-e', 'process.kill(process.pid, "SIGTERM")']));
    expect(run.code).toBe(143);
  });

  it('passes SIGTERM on to the child and exits with the code the child chose', async () => {
    const child = 'process.on("SIGTERM", () => { console.log("got SIGTERM"); process.exit(7); }); console.log("ready"); setInterval(() => {}, 1000);';
    const run = exec(['-c', configFile, '--', process.execPath, '-e', child]);
    await run.waitForLine((line) => line === 'ready');
    run.child.kill('SIGTERM');
    const result = await finished(run);
    expect(result.code).toBe(7);
    expect(result.stdout).toEqual(['ready', 'got SIGTERM']);
  });

  it('hands every flag after the command to the command untouched, with or without --', async () => {
    const printArgs = 'console.log(JSON.stringify(process.argv.slice(1)))';
    const withDashes = await finished(exec(['-c', configFile, '--', process.execPath, '-e', printArgs, '--', '-c', 'x', '--port', '1', '--log']));
    expect(withDashes.code, withDashes.stderr).toBe(0);
    expect(JSON.parse(withDashes.stdout[0])).toEqual(['-c', 'x', '--port', '1', '--log']);

    const bare = await finished(exec(['-c', configFile, process.execPath, '-e', printArgs, '--', '--help']));
    expect(bare.code, bare.stderr).toBe(0);
    expect(JSON.parse(bare.stdout[0])).toEqual(['--help']);
  });

  it('gives the child server.auth_token as OPENAI_API_KEY, which the proxy accepts', async () => {
    const file = writeConfig('with-token.yaml', ['server:', '  auth_token: s3cret-token']);
    const run = await finished(exec(['-c', file, '--', process.execPath, '-e', CHILD]));
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout[0]) as ChildReport;
    expect(report.key).toBe('s3cret-token');
    expect(report.status).toBe(200);
  });

  it('sends the request log to stderr with --log, never to stdout', async () => {
    const run = await finished(exec(['--log', '-c', configFile, '--', process.execPath, '-e', CHILD]));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toHaveLength(1);
    const events = run.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event?: string; route?: string });
    expect(events[0].event).toBe('listening');
    expect(events.some((event) => event.route === 'chat')).toBe(true);
    // The exit summary, last, as an event of the same log.
    expect(events.at(-1)).toMatchObject({ event: 'exit_summary', usage: { by: 'tier', totals: { requests: 1 } }, tool_calls_recovered: 0 });
  });

  it('exits 2 with the problem at file:line:col for a bad tier file, without running the command', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'version: 1\nproviders: {}\nroutes:\n  chat:\n    tierz: []\n');
    const run = await finished(exec(['-c', bad, '--', process.execPath, '-e', 'console.log("ran")']));
    expect(run.code).toBe(2);
    expect(run.stdout).toEqual([]);
    expect(run.stderr).toContain(`${bad}:5:5`);
  });

  it('points Anthropic clients (Claude Code) at the proxy: the real Anthropic SDK in the child reaches a route, its own key dropped', async () => {
    const child = `
      const Anthropic = require(${JSON.stringify(require.resolve('@anthropic-ai/sdk'))});
      (async () => {
        const client = new (Anthropic.default ?? Anthropic)({ maxRetries: 0 });
        const message = await client.messages.create({ model: process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
        console.log(JSON.stringify({ base: process.env.ANTHROPIC_BASE_URL, token: process.env.ANTHROPIC_AUTH_TOKEN, apiKey: process.env.ANTHROPIC_API_KEY ?? null, model: process.env.ANTHROPIC_MODEL ?? null, text: message.content[0].text }));
      })().catch((e) => { console.log(JSON.stringify({ error: String(e) })); process.exit(1); });
    `;
    const run = await finished(exec(['-c', configFile, '--', process.execPath, '-e', child], { ANTHROPIC_API_KEY: 'sk-ant-users-own-key' }));
    expect(run.code, run.stderr + run.stdout.join('\n')).toBe(0);
    const report = JSON.parse(run.stdout[0]) as { base: string; token: string; apiKey: string | null; model: string | null; text: string };
    expect(report.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/); // no /v1: the Anthropic SDK adds it
    expect(report.token).toBe('llm-route');
    expect(report.apiKey).toBeNull();
    expect(report.model).toBe('chat'); // no route matches Claude's own names here: the first route
    expect(report.text).toMatch(/^\[m\]/);
  });

  it('gives Claude Code a model name per request class and the hint variable: without rules one route takes them all, a rule on the class splits them', async () => {
    const child = `
      const Anthropic = require(${JSON.stringify(require.resolve('@anthropic-ai/sdk'))});
      (async () => {
        const client = new (Anthropic.default ?? Anthropic)({ maxRetries: 0 });
        const routeOf = async (model) => (await client.messages.create({ model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }).withResponse()).response.headers.get('x-llm-route-route');
        const vars = ['ANTHROPIC_MODEL', 'ANTHROPIC_DEFAULT_OPUS_MODEL', 'ANTHROPIC_DEFAULT_SONNET_MODEL', 'ANTHROPIC_DEFAULT_HAIKU_MODEL', 'ANTHROPIC_SMALL_FAST_MODEL', 'CLAUDE_CODE_SUBAGENT_MODEL', 'CLAUDE_CODE_GATEWAY_HINT_HEADERS'];
        console.log(JSON.stringify({ env: Object.fromEntries(vars.map((v) => [v, process.env[v]])), main: await routeOf(process.env.ANTHROPIC_MODEL),
          background: await routeOf(process.env.ANTHROPIC_SMALL_FAST_MODEL), subagent: await routeOf(process.env.CLAUDE_CODE_SUBAGENT_MODEL) }));
      })().catch((e) => { console.log(JSON.stringify({ error: String(e) })); process.exit(1); });
    `;
    const plain = await finished(exec(['-c', configFile, '--', process.execPath, '-e', child]));
    expect(plain.code, plain.stderr + plain.stdout.join('\n')).toBe(0);
    const seen = JSON.parse(plain.stdout[0]) as { env: Record<string, string>; main: string; background: string; subagent: string };
    expect(seen.env).toEqual({
      ANTHROPIC_MODEL: 'chat',
      ANTHROPIC_DEFAULT_OPUS_MODEL: 'chat',
      ANTHROPIC_DEFAULT_SONNET_MODEL: 'chat',
      ANTHROPIC_DEFAULT_HAIKU_MODEL: 'chat@background',
      ANTHROPIC_SMALL_FAST_MODEL: 'chat@background',
      CLAUDE_CODE_SUBAGENT_MODEL: 'chat@subagent',
      CLAUDE_CODE_GATEWAY_HINT_HEADERS: '1',
    });
    expect([seen.main, seen.background, seen.subagent]).toEqual(['chat', 'chat', 'chat']);

    const ruled = join(dir, 'rules.yaml');
    writeFileSync(
      ruled,
      [
        'version: 1',
        'providers:',
        `  m: { type: openai, base_url: "${mock.url}" }`,
        'routes:',
        '  chat: { tiers: [{ provider: m, model: m-model }] }',
        '  small: { tiers: [{ provider: m, model: small-model }] }',
        'rules:',
        '  - { when: { class: background }, route: small }',
        '',
      ].join('\n'),
    );
    const split = await finished(exec(['-c', ruled, '--', process.execPath, '-e', child]));
    expect(split.code, split.stderr + split.stdout.join('\n')).toBe(0);
    const routes = JSON.parse(split.stdout[0]) as { main: string; background: string; subagent: string };
    expect([routes.main, routes.background, routes.subagent]).toEqual(['chat', 'small', 'chat']);
  });

  it('gives a codex command a Responses provider of its own as -c overrides, and a route as its model', async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    const fakeCodex = join(bin, 'codex');
    writeFileSync(fakeCodex, `#!${process.execPath}\nconsole.log(JSON.stringify({ argv: process.argv.slice(2), key: process.env.LLM_ROUTE_API_KEY }));\n`);
    chmodSync(fakeCodex, 0o755);
    const run = await finished(exec(['-c', configFile, '--', fakeCodex, 'exec', 'say hi']));
    expect(run.code, run.stderr).toBe(0);
    const { argv, key } = JSON.parse(run.stdout[0]) as { argv: string[]; key: string };
    expect(argv.slice(-2)).toEqual(['exec', 'say hi']);
    const overrides = argv.filter((_, i) => argv[i - 1] === '-c');
    expect(overrides).toEqual([
      'model_provider="llm-route"',
      'model_providers.llm-route.name="llm-route"',
      expect.stringMatching(/^model_providers\.llm-route\.base_url="http:\/\/127\.0\.0\.1:\d+\/v1"$/),
      'model_providers.llm-route.wire_api="responses"',
      'model_providers.llm-route.env_key="LLM_ROUTE_API_KEY"',
      'model="chat"',
    ]);
    expect(key).toBe('llm-route');
  });

  it("codex gets the route's window as model_context_window when every tier's is known: the largest", async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    const fakeCodex = join(bin, 'codex');
    writeFileSync(fakeCodex, `#!${process.execPath}\nconsole.log(JSON.stringify(process.argv.slice(2)));\n`);
    chmodSync(fakeCodex, 0o755);
    const windowsOf = async (contexts: Array<number | undefined>): Promise<string[]> => {
      const tiers = contexts.map((context, i) => `      - { name: t${i}, provider: m, model: m-model${context === undefined ? '' : `, context: ${context}`} }`);
      const file = join(dir, `codex-window-${contexts.join('-')}.yaml`);
      writeFileSync(
        file,
        ['version: 1', 'providers:', '  m:', '    type: openai', `    base_url: ${mock.url}`, 'routes:', '  chat:', '    tiers:', ...tiers, ''].join('\n'),
      );
      const run = await finished(exec(['-c', file, '--', fakeCodex, 'exec', 'hi']));
      expect(run.code, run.stderr).toBe(0);
      const argv = JSON.parse(run.stdout[0]) as string[];
      return argv.filter((a, i) => argv[i - 1] === '-c' && a.startsWith('model_context_window='));
    };
    expect(await windowsOf([8192, 32768])).toEqual(['model_context_window=32768']);
    expect(await windowsOf([8192])).toEqual(['model_context_window=8192']);
    expect(await windowsOf([8192, undefined])).toEqual([]); // the mock documents no window: unknown
  });

  it('exits 127 when the command does not exist', async () => {
    const run = await finished(exec(['-c', configFile, '--', join(dir, 'no-such-command')]));
    expect(run.code).toBe(127);
    expect(run.stderr).toContain('no-such-command');
  });
});
