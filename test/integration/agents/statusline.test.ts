import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { costUsd } from '../../../src/usage/cost.js';
import { anthropicTextStream } from '../../helpers/anthropic-upstream.js';
import { buildPrivateCli, type CliProcess, runCli } from '../../helpers/cli.js';
import { withModelList } from '../../helpers/control-kit.js';
import { useHarness } from '../../helpers/harness.js';
import { closedPort } from '../../helpers/ports.js';

/**
 * `llm-route statusline` as Claude Code runs it: its status JSON on stdin, one line on stdout,
 * from a real `serve`; and `serve`'s start-up notice of a tier that is down.
 */

const h = useHarness();
let cli: ReturnType<typeof buildPrivateCli>;
let dir: string;

beforeAll(() => {
  cli = buildPrivateCli();
  dir = mkdtempSync(join(tmpdir(), 'llm-route-statusline-'));
}, 60_000);

afterAll(() => {
  cli?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const PRICE = { input_per_mtok: 3, output_per_mtok: 15 };
const SESSION = 'd807bb6a-aaa8-48f1-8040-9253f14c5101';
/** What Claude Code 2.1.197 wrote on its status line command's stdin (seen in a loopback-only namespace), trimmed. */
const STATUS_JSON = {
  session_id: SESSION,
  transcript_path: `/home/u/.claude/projects/-tmp-proj/${SESSION}.jsonl`,
  cwd: '/tmp/proj',
  model: { id: 'chat', display_name: 'chat' },
  workspace: { current_dir: '/tmp/proj', project_dir: '/tmp/proj', added_dirs: [] },
  version: '2.1.197',
  output_style: { name: 'default' },
  cost: { total_cost_usd: 0.0063, total_duration_ms: 7625, total_api_duration_ms: 362, total_lines_added: 0, total_lines_removed: 0 },
  exceeds_200k_tokens: false,
};

/** Runs the status line command with `input` on stdin; its stdout and exit code. */
async function statusline(
  args: string[],
  input: string,
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  const run = runCli(cli.bin, ['statusline', ...args], { LLM_ROUTE_URL: undefined, LLM_ROUTE_CONFIG: undefined, LLM_ROUTE_API_KEY: undefined, ...env });
  run.child.stdin.end(input);
  const { code } = await run.exited;
  return { code, out: run.lines.join('\n'), err: run.stderr() };
}

async function startServe(file: string): Promise<CliProcess> {
  const proc = runCli(cli.bin, ['serve', '--no-ui', '-c', file], { LLM_ROUTE_CONFIG: undefined });
  h.defer(async () => {
    if (proc.child.exitCode === null) proc.child.kill('SIGTERM');
    await proc.exited;
  });
  await proc.waitForLine((line) => line.includes('"event":"listening"'), 20_000);
  return proc;
}

describe('llm-route statusline', () => {
  it("shows a real serve's summary of the session: its last tier and model, the split, the fallback, session and today's cost", async () => {
    const cloud = await h.fake();
    cloud.always(withModelList(['claude-sonnet-4-5'], anthropicTextStream(['Hi', '!'], { usage: { input_tokens: 1200, output_tokens: 1 }, outputTokens: 12 })));
    const downPort = await closedPort();
    const port = await closedPort();
    const file = join(dir, 'serve.yaml');
    writeFileSync(
      file,
      stringify({
        version: 1,
        server: { port },
        usage: { path: join(dir, 'usage.db') },
        providers: {
          local: { type: 'openai', base_url: `http://127.0.0.1:${downPort}/v1` },
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
      }),
    );
    const serve = await startServe(file);
    const origin = `http://127.0.0.1:${port}`;

    // The start-up notice: on stderr for people, as an event in the JSON log, before any request.
    await serve.waitForLine((line) => line.includes('"event":"tier_unavailable"'));
    expect(serve.stderr()).toContain(
      `llm-route: chat/local is unreachable (connection refused (127.0.0.1:${downPort})); its requests go to chat/cloud, a paid tier\n`,
    );
    const notice = JSON.parse(serve.lines.find((line) => line.includes('"tier_unavailable"')) as string);
    expect(notice).toMatchObject({ event: 'tier_unavailable', route: 'chat', tier: 'local', problem: 'unreachable', fallback: 'chat/cloud', paid: true });

    // Before any request of the session: no requests yet, today's cost.
    const before = await statusline(['--url', origin, '--no-color'], JSON.stringify(STATUS_JSON));
    expect(before).toEqual({ code: 0, out: 'llm-route no requests yet · today $0.0000', err: '' });

    const client = new Anthropic({ baseURL: origin, apiKey: 'x', maxRetries: 0, defaultHeaders: { 'x-claude-code-session-id': SESSION } });
    await client.messages.stream({ model: 'chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    const requestLine = await serve.waitForLine((line) => line.includes('"event":"request"'));
    expect(serve.lines.indexOf(requestLine)).toBeGreaterThan(serve.lines.findIndex((line) => line.includes('"tier_unavailable"')));

    const cost = usd(costUsd(PRICE, { prompt: 1200, completion: 12, cached: 0 }));
    const expected = `llm-route ▸ cloud claude-sonnet-4-5 · 0 local / 1 cloud · 1 fallback · ${cost} (today ${cost})`;
    // Today's cost comes from the usage log, written within 200 ms and read at most every 2 s.
    let shown = '';
    for (let i = 0; i < 40 && shown !== expected; i++) {
      shown = (await statusline(['--url', origin, '--no-color'], JSON.stringify(STATUS_JSON))).out;
      if (shown !== expected) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(shown).toBe(expected);

    // The same line found through $LLM_ROUTE_URL (what exec sets), and through the tier file's address.
    expect((await statusline(['--no-color'], JSON.stringify(STATUS_JSON), { LLM_ROUTE_URL: origin })).out).toBe(expected);
    expect((await statusline(['--no-color', '-c', file], JSON.stringify(STATUS_JSON))).out).toBe(expected);
    expect((await statusline(['--no-color'], JSON.stringify(STATUS_JSON), { LLM_ROUTE_CONFIG: file })).out).toBe(expected);

    // Colours as Claude Code shows them: the cloud tier yellow, the fallback yellow; none with NO_COLOR.
    const coloured = (await statusline(['--url', origin], JSON.stringify(STATUS_JSON))).out;
    expect(coloured).toContain('\u001b[33m▸ cloud claude-sonnet-4-5\u001b[0m');
    expect(coloured).toContain('\u001b[33m1 fallback\u001b[0m');
    expect(withoutSgr(coloured)).toBe(expected);
    expect((await statusline(['--url', origin], JSON.stringify(STATUS_JSON), { NO_COLOR: '1' })).out).toBe(expected);

    // Another session of the same server has none of these requests.
    expect((await statusline(['--url', origin, '--no-color'], JSON.stringify({ ...STATUS_JSON, session_id: 'other' }))).out).toBe(
      `llm-route no requests yet · today ${cost}`,
    );
  }, 60_000);

  it('with no llm-route on the address: "llm-route not running", exit 0 (a failing command would blank Claude Code\'s line)', async () => {
    const port = await closedPort();
    const run = await statusline(['--url', `http://127.0.0.1:${port}`], JSON.stringify(STATUS_JSON));
    expect(run).toEqual({ code: 0, out: '\u001b[2mllm-route not running\u001b[0m', err: '' });
    // Nothing on stdin at all (a run by hand, a closed pipe): the same.
    expect((await statusline(['--url', `http://127.0.0.1:${port}`, '--no-color'], '')).out).toBe('llm-route not running');
  });

  it('something else on the port: says it got no summary, exit 0', async () => {
    const other = await h.fake();
    other.always((ctx) => ctx.error(404, 'not here'));
    const run = await statusline(['--url', other.url.replace(/\/v1$/, ''), '--no-color'], 'not json');
    expect(run.code).toBe(0);
    expect(run.out).toBe(`llm-route: no summary from 127.0.0.1:${other.port} (HTTP 404)`);
    expect(other.requests[0].url).toBe('/admin/sessions/-');
  });

  it('sends $LLM_ROUTE_API_KEY as the Bearer token, URL-encodes the session id', async () => {
    const other = await h.fake();
    other.always((ctx) => ctx.json(200, { requests: 0, last: null, today: { cost_usd: 1.5 } }));
    const run = await statusline(['--no-color'], JSON.stringify({ session_id: 'a/b c' }), {
      LLM_ROUTE_URL: other.url.replace(/\/v1$/, ''),
      LLM_ROUTE_API_KEY: 'tok',
    });
    expect(run.out).toBe('llm-route no requests yet · today $1.50');
    expect(other.requests[0]).toMatchObject({ url: '/admin/sessions/a%2Fb%20c', headers: expect.objectContaining({ authorization: 'Bearer tok' }) });
  });

  it('a bad flag goes through the full CLI: exit 2 and the usage', async () => {
    const run = await statusline(['--bogus'], '');
    expect(run.code).toBe(2);
    expect(run.err).toContain("unknown option '--bogus'");
  });
});

/** The text without its ANSI colour codes (ESC [ n m). */
function withoutSgr(text: string): string {
  return text.replace(new RegExp(`${String.fromCharCode(27)}\\[\\d+m`, 'g'), '');
}

function usd(value: number): string {
  return value < 1 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}
