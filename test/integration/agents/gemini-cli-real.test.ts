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

/** `llm-route exec -c <tiers> -- gemini -p "list the files here"` in a namespace reaching only `port`; its exit code and output. */
async function runGemini(
  tierLines: string[],
  port: number,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const work = join(dir, `work-${port}`);
  mkdirSync(work);
  writeFileSync(join(work, 'notes.txt'), 'hello\n');
  const tiers = join(dir, `llm-route-${port}.yaml`);
  writeFileSync(tiers, ['version: 1', ...tierLines, ''].join('\n'));
  const target = { host: '127.0.0.1', port };
  const bridges = await bridgeTargets(dir, [target]);
  h.defer(() => bridges.forEach((bridge) => bridge.close()));
  const command = [process.execPath, join(repoRoot, 'bin', 'llm-route.js'), 'exec', '-c', tiers, '--', GEMINI_CLI as string, '-p', 'list the files here'];
  const childEnv = {
    ...process.env,
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    HOME: join(dir, 'home'),
    XDG_STATE_HOME: state,
    // The user's call, not exec's: a headless run in a folder Gemini CLI has not been told to trust.
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    ...env,
  };
  const child = spawnInNetns(dir, [target], command, { cwd: work, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  h.defer(() => stop(child));
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += String(d)));
  child.stderr?.on('data', (d) => (stderr += String(d)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

/** Google's API as Gemini CLI reads it: the model's own GET, then a list_directory call (signed), then what it found. */
async function googleModel(ctx: ScriptContext): Promise<void> {
  if (ctx.req.method === 'GET') return ctx.json(200, { name: 'models/gemini-2.5-flash', inputTokenLimit: 1048576, outputTokenLimit: 65536 });
  const contents = (ctx.body.contents ?? []) as Array<{ parts?: Array<Record<string, unknown>> }>;
  const answered = contents.some((content) => content.parts?.some((part) => part.functionResponse));
  const parts = answered
    ? [{ text: 'The folder holds notes.txt.' }]
    : [{ functionCall: { name: 'list_directory', args: { dir_path: '.' } }, thoughtSignature: 'c2lnbmVkLWJ5LWdvb2dsZQ==' }];
  ctx.res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = {
    candidates: [{ content: { parts, role: 'model' }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 4, totalTokenCount: 13 },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'r1',
  };
  ctx.res.end(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
}

describe.skipIf(unavailable !== null)('the real Gemini CLI through exec', () => {
  it('gemini -p answers from the second tier with the first down, its function call and response carried across turns', { timeout: 180_000 }, async () => {
    const fake = await h.fake();
    fake.always(localModel);
    const { code, stdout, stderr } = await runGemini(
      [
        'providers:',
        '  dead: { type: openai, base_url: "http://127.0.0.1:1/v1" }',
        `  local: { type: openai, base_url: "${fake.url}" }`,
        'routes:',
        '  local:',
        '    tiers:',
        '      - { provider: dead, model: m }',
        '      - { provider: local, model: qwen }',
      ],
      fake.port,
    );
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

  it("with the local tier down, Gemini CLI's own key reaches only the gemini tier (api_key: from_client), its call's signature untouched", {
    timeout: 180_000,
  }, async () => {
    const google = await h.fake();
    google.always(googleModel);
    const { code, stdout, stderr } = await runGemini(
      [
        'providers:',
        '  dead: { type: openai, base_url: "http://127.0.0.1:1/v1" }',
        `  gemini: { type: gemini, base_url: "http://127.0.0.1:${google.port}", api_key: from_client }`,
        'routes:',
        '  local:',
        '    aliases: ["gemini-*"]',
        '    tiers:',
        '      - { provider: dead, model: qwen }',
        '      - { provider: gemini, model: gemini-2.5-flash }',
      ],
      google.port,
      { GEMINI_API_KEY: 'AIza-users-own-key' },
    );
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain('The folder holds notes.txt.');
    const turns = google.requests.filter((request) => request.url.includes(':streamGenerateContent'));
    expect(turns).toHaveLength(2);
    expect(turns.map((request) => request.headers['x-goog-api-key'])).toEqual(['AIza-users-own-key', 'AIza-users-own-key']);
    // Discovery asks the model list with no key: a client's key goes with its own requests only.
    const checks = google.requests.filter((request) => !request.url.includes(':'));
    expect(checks.every((request) => request.headers['x-goog-api-key'] === undefined)).toBe(true);
    expect(JSON.stringify(turns[1].body)).toContain('c2lnbmVkLWJ5LWdvb2dsZQ==');
    expect(stderr).not.toContain('AIza-users-own-key');
  });
});
