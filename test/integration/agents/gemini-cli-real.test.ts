import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunk, type ScriptContext } from '../../helpers/fake-upstream.js';
import { repoRoot } from '../../helpers/cli.js';
import { useHarness } from '../../helpers/harness.js';
import { bridgeTargets, netnsUnavailable, spawnInNetns, stop } from '../../helpers/netns.js';

/**
 * The real Gemini CLI through `llm-route exec`, in a loopback-only network namespace (it phones
 * home otherwise), the tier file's first tier down: `gemini -p` answers from the second, a
 * function call and its response included. Opt-in: GEMINI_CLI names an installed gemini
 * (`npm install @google/gemini-cli@0.61.0` in a folder of its own, then its
 * node_modules/.bin/gemini); it also needs root (unshare -n, and Gemini CLI reads exec's settings
 * file only when root owns it).
 */

const GEMINI_CLI = process.env.GEMINI_CLI;
const unavailable = GEMINI_CLI === undefined ? 'GEMINI_CLI is not set' : !existsSync(GEMINI_CLI) ? `${GEMINI_CLI} is missing` : netnsUnavailable();

const h = useHarness();
let dir: string;
let state: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'llm-route-gemini-cli-'));
  mkdirSync(join(repoRoot, 'node_modules', '.cache'), { recursive: true });
  state = mkdtempSync(join(repoRoot, 'node_modules', '.cache', 'llm-route-state-'));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (state) rmSync(state, { recursive: true, force: true });
});

/** A local model that lists the folder first (Gemini CLI's list_directory), then says what it found; its helpers get JSON. */
async function localModel(ctx: ScriptContext): Promise<void> {
  const messages = (ctx.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const answered = messages.some((message) => message.role === 'tool');
  if (ctx.body.stream !== true)
    return ctx.json(200, {
      id: 'c1',
      object: 'chat.completion',
      created: 1,
      model: 'qwen',
      choices: [{ index: 0, message: { role: 'assistant', content: '{}' }, finish_reason: 'stop' }],
    });
  ctx.startStream();
  if (!answered) {
    ctx.event(
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_local1', type: 'function', function: { name: 'list_directory', arguments: '' } }] }),
    );
    ctx.event(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"dir_path":"."}' } }] }));
    ctx.event(chunk({}, 'tool_calls'));
  } else {
    ctx.role();
    for (const piece of ['The folder ', 'holds ', 'notes.txt.']) ctx.content(piece);
    ctx.finish();
  }
  ctx.done();
}

describe.skipIf(unavailable !== null)('the real Gemini CLI through exec', () => {
  it('gemini -p answers from the second tier with the first down, its function call and response carried across turns', { timeout: 180_000 }, async () => {
    const fake = await h.fake();
    fake.always(localModel);
    const work = join(dir, 'work');
    mkdirSync(work);
    writeFileSync(join(work, 'notes.txt'), 'hello\n');
    const tiers = join(dir, 'llm-route.yaml');
    writeFileSync(
      tiers,
      [
        'version: 1',
        'providers:',
        '  dead: { type: openai, base_url: "http://127.0.0.1:1/v1" }',
        `  local: { type: openai, base_url: "${fake.url}" }`,
        'routes:',
        '  local:',
        '    tiers:',
        '      - { provider: dead, model: m }',
        '      - { provider: local, model: qwen }',
        '',
      ].join('\n'),
    );
    const target = { host: '127.0.0.1', port: fake.port };
    const bridges = await bridgeTargets(dir, [target]);
    h.defer(() => bridges.forEach((bridge) => bridge.close()));
    const command = [process.execPath, join(repoRoot, 'bin', 'llm-route.js'), 'exec', '-c', tiers, '--', GEMINI_CLI as string, '-p', 'list the files here'];
    const env = {
      ...process.env,
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      HOME: join(dir, 'home'),
      XDG_STATE_HOME: state,
      // The user's call, not exec's: a headless run in a folder Gemini CLI has not been told to trust.
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
    };
    const child = spawnInNetns(dir, [target], command, { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
    h.defer(() => stop(child));
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => (stdout += String(d)));
    child.stderr?.on('data', (d) => (stderr += String(d)));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain('The folder holds notes.txt.');
    expect(stderr).toMatch(/this run \(\d+s\): 2 requests, 2 local \/ 0 cloud \(local\/local 2\); 2 fallbacks \(local\/dead connection_refused ×2\)/);
    const turns = fake.requests.filter((request) => request.body.stream === true);
    expect(turns).toHaveLength(2);
    const second = turns[1].body.messages as Array<Record<string, unknown>>;
    const call = second.find((message) => message.role === 'assistant') as { tool_calls: Array<{ id: string; function: { name: string } }> };
    const result = second.find((message) => message.role === 'tool') as { tool_call_id: string; content: string };
    // Gemini CLI made an id for the call (llm-route's answer carried none, as Gemini's do) and sent it back with the response.
    expect(call.tool_calls[0].function.name).toBe('list_directory');
    expect(result.tool_call_id).toBe(call.tool_calls[0].id);
    expect(result.content).toContain('notes.txt');
    expect(JSON.stringify(fake.requests.map((request) => request.body))).not.toContain('thoughtSignature');
  });
});
