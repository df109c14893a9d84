import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { formatInt, formatUsd } from '../../../src/usage/text-table.js';
import type { UsageReport } from '../../../src/usage/usage-report.js';
import { anthropicTextStream } from '../../helpers/anthropic-upstream.js';
import { buildPrivateCli, type CliProcess, runCli } from '../../helpers/cli.js';
import { withModelList } from '../../helpers/control-kit.js';
import { useHarness } from '../../helpers/harness.js';
import { closedPort } from '../../helpers/ports.js';

/**
 * `exec -- claude` while the agent works (docs/agents.md): the start-up notice
 * before the command starts, llm-route's status line installed through Claude Code's
 * `--settings` (unless the user has one), and the exit summary, whose numbers are the usage
 * log's for the run — also while another llm-route writes the same database.
 * `claude` here is a stand-in that records its arguments and environment, sends turns with
 * Claude Code's session header, and runs its status line command as Claude Code does.
 */

const h = useHarness();
let cli: ReturnType<typeof buildPrivateCli>;
let dir: string;
let claude: string;

const FAKE_CLAUDE = `#!/usr/bin/env node
const { execSync } = require('node:child_process');
const { writeFileSync } = require('node:fs');
(async () => {
  const args = process.argv.slice(2);
  const env = process.env;
  const session = 'sess-' + process.pid;
  process.stderr.write('fake-claude: started\\n');
  const turn = async (base, token) => {
    const res = await fetch(base + '/v1/messages', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', authorization: 'Bearer ' + token, 'x-claude-code-session-id': session },
      body: JSON.stringify({ model: env.ANTHROPIC_MODEL, max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    return { status: res.status, text: await res.text() };
  };
  const turns = [];
  for (let i = 0; i < Number(env.FAKE_TURNS || 0); i++) {
    turns.push((await turn(env.ANTHROPIC_BASE_URL, env.ANTHROPIC_AUTH_TOKEN)).status);
    // Another llm-route writing the same usage database meanwhile.
    if (i === 0 && env.FAKE_OTHER_URL) turns.push((await turn(env.FAKE_OTHER_URL, 'x')).status);
  }
  const record = { args, session, turns, env: { LLM_ROUTE_URL: env.LLM_ROUTE_URL, LLM_ROUTE_API_KEY: env.LLM_ROUTE_API_KEY } };
  // The status line as Claude Code runs it: the command of its settings, in a shell, its JSON on stdin.
  const at = args.indexOf('--settings');
  const statusLine = at >= 0 ? JSON.parse(args[at + 1]).statusLine : undefined;
  if (statusLine && env.FAKE_TURNS) {
    record.statusLine = execSync(statusLine.command, { input: JSON.stringify({ session_id: session, model: { id: 'chat' } }), env: { ...env, NO_COLOR: '1' } }).toString();
  }
  writeFileSync(env.FAKE_RECORD, JSON.stringify(record));
  process.stderr.write('fake-claude: done\\n');
})();
`;

interface ClaudeRecord {
  args: string[];
  session: string;
  turns: number[];
  env: { LLM_ROUTE_URL?: string; LLM_ROUTE_API_KEY?: string };
  statusLine?: string;
}

beforeAll(() => {
  cli = buildPrivateCli();
  dir = mkdtempSync(join(tmpdir(), 'llm-route-exec-agent-'));
  mkdirSync(join(dir, 'bin'));
  claude = join(dir, 'bin', 'claude');
  writeFileSync(claude, FAKE_CLAUDE);
  chmodSync(claude, 0o755);
}, 60_000);

afterAll(() => {
  cli?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const PRICE = { input_per_mtok: 3, output_per_mtok: 15 };

/** A tier file: a local tier nobody listens for, then a priced Anthropic tier (a fake). */
async function tierFile(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const cloud = await h.fake();
  cloud.always(
    withModelList(['claude-sonnet-4-5'], anthropicTextStream(['Hi', ' there'], { usage: { input_tokens: 1500, output_tokens: 1 }, outputTokens: 40 })),
  );
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    stringify({
      version: 1,
      usage: { path: join(dir, `${name}.db`) },
      providers: {
        local: { type: 'openai', base_url: `http://127.0.0.1:${await closedPort()}/v1` },
        cloud: { type: 'anthropic', base_url: cloud.url.replace(/\/v1$/, ''), api_key: 'sk-ant-upstream', price: PRICE },
      },
      routes: {
        chat: {
          tiers: [
            { name: 'local', provider: 'local', model: 'qwen' },
            { name: 'cloud', provider: 'cloud', model: 'claude-sonnet-4-5' },
          ],
        },
      },
      ...extra,
    }),
  );
  return file;
}

/** A home and a project folder of their own, as Claude Code would find them. */
function places(name: string): { home: string; project: string } {
  const home = join(dir, `${name}-home`);
  const project = join(dir, `${name}-project`);
  mkdirSync(join(home, '.claude'), { recursive: true });
  mkdirSync(join(project, '.claude'), { recursive: true });
  return { home, project };
}

async function execClaude(
  file: string,
  where: { home: string; project: string },
  claudeArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stderr: string; stdout: string[]; record: ClaudeRecord }> {
  const record = join(where.project, 'record.json');
  const run: CliProcess = runCli(
    cli.bin,
    ['exec', '-c', file, '--', claude, ...claudeArgs],
    { HOME: where.home, CLAUDE_CONFIG_DIR: undefined, FAKE_RECORD: record, LLM_ROUTE_CONFIG: undefined, ...env },
    { cwd: where.project },
  );
  const { code } = await run.exited;
  return { code, stderr: run.stderr(), stdout: run.lines, record: JSON.parse(readFileSync(record, 'utf8')) as ClaudeRecord };
}

function usageJson(args: string[]): UsageReport {
  const run = spawnSync(cli.bin, ['usage', ...args, '--json'], { encoding: 'utf8', env: { ...process.env, LLM_ROUTE_CONFIG: undefined } });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as UsageReport;
}

describe('exec -- claude: notice, status line, exit summary', () => {
  it('says the local tier is down before Claude starts, shows the session on its status line, and ends with the usage log of its own run', async () => {
    const file = await tierFile('full', { server: { auth_token: 'tok-123' } });
    // Another llm-route on the same tier file (the same usage database), sent a request during the run.
    const otherPort = await closedPort();
    const otherFile = join(dir, 'other.yaml');
    writeFileSync(
      otherFile,
      readFileSync(file, 'utf8')
        .replace('version: 1', `version: 1\nserver:\n  port: ${otherPort}`)
        .replace(/server:\n {2}auth_token: tok-123\n/, ''),
    );
    const other = runCli(cli.bin, ['serve', '--no-ui', '-c', otherFile], { LLM_ROUTE_CONFIG: undefined });
    h.defer(async () => {
      if (other.child.exitCode === null) other.child.kill('SIGTERM');
      await other.exited;
    });
    await other.waitForLine((line) => line.includes('"event":"listening"'), 20_000);

    const where = places('full');
    const run = await execClaude(file, where, [], { FAKE_TURNS: '2', FAKE_OTHER_URL: `http://127.0.0.1:${otherPort}` });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toEqual([]);
    expect(run.record.turns).toEqual([200, 200, 200]);

    // The notice, before the command started; the summary after it ended.
    const lines = run.stderr.trim().split('\n');
    const notice = lines.findIndex((line) => line.startsWith('llm-route: chat/local is unreachable (connection refused (127.0.0.1:'));
    expect(lines[notice]).toMatch(/; its requests go to chat\/cloud, a paid tier$/);
    expect(notice).toBeLessThan(lines.indexOf('fake-claude: started'));
    const summary = lines.findIndex((line) => line.startsWith('llm-route: this run'));
    expect(summary).toBeGreaterThan(lines.indexOf('fake-claude: done'));

    // The status line: through --settings, by absolute paths, asking this run's proxy with the client's token.
    const [flag, settings, ...rest] = run.record.args;
    expect([flag, rest]).toEqual(['--settings', []]);
    const statusLine = JSON.parse(settings).statusLine;
    expect(statusLine).toEqual({
      type: 'command',
      command: expect.stringMatching(/bin\/llm-route\.js statusline --url http:\/\/127\.0\.0\.1:\d+$/),
      padding: 0,
    });
    expect(statusLine.command.endsWith(`--url ${run.record.env.LLM_ROUTE_URL}`)).toBe(true);
    expect(run.record.env.LLM_ROUTE_API_KEY).toBe('tok-123');
    expect(run.record.statusLine).toMatch(/^llm-route ▸ cloud claude-sonnet-4-5 · 0 local \/ 2 cloud · 2 fallbacks · \$0\.0\d{3} \(today \$0\.\d{4}\)\n$/);

    // The summary's numbers are the usage log's for this run: `usage --since <start> --run <id>`.
    const hint = /^llm-route: the same from the usage log: llm-route usage -c (\S+) --since (\S+) --run ([0-9a-z]{10}) --by tier$/.exec(lines[summary + 1]);
    expect(hint, lines.join('\n')).not.toBeNull();
    const [, hintFile, since, id] = hint as RegExpExecArray;
    expect(hintFile).toBe(file);
    const mine = usageJson(['-c', file, '--since', since, '--run', id, '--by', 'tier']);
    expect(mine.totals).toMatchObject({ requests: 2, failovers: 2 });
    const t = mine.totals;
    expect(lines[summary]).toBe(
      `llm-route: this run (${/\((\d+s)\)/.exec(lines[summary])?.[1]}): 2 requests, 0 local / 2 cloud (chat/cloud 2); ` +
        `2 fallbacks (chat/local connection_refused ×2); 0 tool calls recovered; ` +
        `${formatInt(t.prompt_tokens)} in + ${formatInt(t.completion_tokens)} out tokens; ${formatUsd(t.cost_usd)}`,
    );
    expect(t.prompt_tokens).toBe(3000);
    // The other process's request is in the same window of the same database, and not in the summary.
    expect(usageJson(['-c', file, '--since', since, '--by', 'tier']).totals.requests).toBe(3);

    // What happened to the tiers while Claude had the screen: kept for the end.
    expect(lines.at(-1)).toMatch(/^llm-route: during the run: \d\d:\d\d:\d\d chat\/local degraded \(failing: connection_refused/);
  }, 60_000);

  it("leaves a status line of the user's own (~/.claude/settings.json) and says so once", async () => {
    const file = await tierFile('user');
    const where = places('user');
    writeFileSync(join(where.home, '.claude', 'settings.json'), JSON.stringify({ statusLine: { type: 'command', command: 'my-line' } }));
    const run = await execClaude(file, where, ['--model', 'x']);
    expect(run.record.args).toEqual(['--model', 'x']);
    const notes = run.stderr.split('\n').filter((line) => line.includes('keeps your own status line'));
    expect(notes).toEqual([
      `llm-route: Claude Code keeps your own status line (${join(where.home, '.claude', 'settings.json')}); for llm-route's, run \`llm-route statusline\` from it (docs/agents.md)`,
    ]);
  }, 30_000);

  it("leaves the project's own status line (.claude/settings.local.json), and one in $CLAUDE_CONFIG_DIR", async () => {
    const file = await tierFile('project');
    const where = places('project');
    writeFileSync(join(where.project, '.claude', 'settings.local.json'), JSON.stringify({ statusLine: { type: 'command', command: 'mine' } }));
    const project = await execClaude(file, where);
    expect(project.record.args).toEqual([]);
    expect(project.stderr).toContain(`keeps your own status line (${join(where.project, '.claude', 'settings.local.json')})`);

    const other = places('config-dir');
    const configDir = join(dir, 'claude-config');
    mkdirSync(configDir, { recursive: true });
    writeFileSync(join(configDir, 'settings.json'), JSON.stringify({ statusLine: { type: 'command', command: 'mine' } }));
    const viaEnv = await execClaude(file, other, [], { CLAUDE_CONFIG_DIR: configDir });
    expect(viaEnv.record.args).toEqual([]);
  }, 30_000);

  it('adds its status line to a --settings the user passed without one, and keeps theirs when it has one', async () => {
    const file = await tierFile('given');
    const where = places('given');
    const merged = await execClaude(file, where, ['--settings', '{"model":"opus"}', '--verbose']);
    expect(merged.record.args[0]).toBe('--settings');
    expect(JSON.parse(merged.record.args[1])).toEqual({ model: 'opus', statusLine: expect.objectContaining({ type: 'command' }) });
    expect(merged.record.args.slice(2)).toEqual(['--verbose']);

    writeFileSync(join(where.project, 'mine.json'), JSON.stringify({ statusLine: { type: 'command', command: 'mine' } }));
    const kept = await execClaude(file, where, ['--settings=mine.json']);
    expect(kept.record.args).toEqual(['--settings=mine.json']);
    expect(kept.stderr).toContain('keeps your own status line (the --settings you gave)');
  }, 30_000);

  it('leaves print mode and subcommands alone', async () => {
    const file = await tierFile('print');
    const where = places('print');
    expect((await execClaude(file, where, ['-p', 'hi'])).record.args).toEqual(['-p', 'hi']);
    expect((await execClaude(file, where, ['mcp', 'list'])).record.args).toEqual(['mcp', 'list']);
  }, 30_000);
});
