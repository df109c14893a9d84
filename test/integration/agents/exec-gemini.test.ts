import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { buildPrivateCli, type CliProcess, repoRoot, runCli } from '../../helpers/cli.js';
import { useHarness } from '../../helpers/harness.js';

/**
 * `llm-route exec -- gemini` through the real CLI, with a stand-in `gemini` that reports what it
 * was given and asks the proxy as Gemini CLI does (x-goog-api-key, streamGenerateContent with
 * alt=sse): the base URL, a key, the route as its model, and for that run only a system settings
 * file choosing the auth type that takes the base URL — written where Gemini CLI reads one
 * (root owns it and every folder above it) and removed when the run ends (docs/agents.md).
 */

const h = useHarness();
let cli: ReturnType<typeof buildPrivateCli>;
let dir: string;
/** A state folder Gemini CLI would read a settings file in: one whose every folder root owns and no one else may write. */
let ownedState: string;
const asRoot = process.getuid?.() === 0;

/** Whether root owns `dir` and every folder above it and no one else may write them (a clone under /tmp is not). */
function rootOwnsTheWay(dir: string): boolean {
  for (let folder = dir; ; folder = dirname(folder)) {
    const stats = lstatSync(folder);
    if (stats.uid !== 0 || (stats.mode & 0o022) !== 0) return false;
    if (dirname(folder) === folder) return true;
  }
}

/** Root's own home when the repository lies where others may write (a clone under /tmp); the repository otherwise; none when not root. */
const stateParent = asRoot
  ? [join(repoRoot, 'node_modules', '.cache'), join(homedir(), '.cache')].find((folder) => {
      if (!rootOwnsTheWay(dirname(folder))) return false;
      mkdirSync(folder, { recursive: true, mode: 0o755 });
      return rootOwnsTheWay(folder);
    })
  : undefined;

const STAND_IN = `#!/usr/bin/env node
const fs = require('node:fs');
(async () => {
  const settingsPath = process.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH;
  const settings = settingsPath && fs.existsSync(settingsPath) ? JSON.parse(fs.readFileSync(settingsPath, 'utf8')) : null;
  const url = process.env.GOOGLE_GEMINI_BASE_URL + '/v1beta/models/' + process.env.GEMINI_MODEL + ':streamGenerateContent?alt=sse';
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': process.env.GEMINI_API_KEY, 'user-agent': 'GeminiCLI-tui/0.61.0/x (linux; x64; terminal)' },
    body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
  });
  console.log(JSON.stringify({
    base: process.env.GOOGLE_GEMINI_BASE_URL, key: process.env.GEMINI_API_KEY, model: process.env.GEMINI_MODEL,
    settingsPath, settings, status: res.status, tier: res.headers.get('x-llm-route-tier'), body: await res.text(),
  }));
})();
`;

function tierFile(url: string, extra: string[] = []): string {
  const file = join(dir, `tiers-${Math.random().toString(36).slice(2)}.yaml`);
  const yaml = [
    'version: 1',
    ...extra,
    'providers:',
    '  dead: { type: openai, base_url: "http://127.0.0.1:1/v1" }',
    `  local: { type: openai, base_url: "${url}" }`,
    'routes:',
    '  local:',
    '    aliases: ["gemini-*"]',
    '    tiers:',
    '      - { provider: dead, model: m }',
    '      - { provider: local, model: qwen }',
    '',
  ];
  writeFileSync(file, yaml.join('\n'));
  return file;
}

async function finished(run: CliProcess): Promise<{ code: number | null; stdout: string[]; stderr: string }> {
  const { code } = await run.exited;
  return { code, stdout: run.lines, stderr: run.stderr() };
}

beforeAll(() => {
  cli = buildPrivateCli();
  dir = mkdtempSync(join(tmpdir(), 'llm-route-exec-gemini-'));
  const gemini = join(dir, 'bin', 'gemini');
  mkdirSync(join(dir, 'bin'));
  writeFileSync(gemini, STAND_IN);
  chmodSync(gemini, 0o755);
  ownedState = mkdtempSync(join(stateParent ?? join(repoRoot, 'node_modules', '.cache'), 'llm-route-state-'));
});

afterAll(() => {
  cli?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (ownedState) rmSync(ownedState, { recursive: true, force: true });
});

describe('llm-route exec -- gemini', () => {
  it.skipIf(!stateParent)(
    'gives Gemini CLI the proxy, a key, the route, and a settings file for the run only (removed after); its request fails over to the tier that answers',
    async () => {
      const fake = await h.fake();
      fake.always(healthyStream(['Hel', 'lo']));
      const run = await finished(
        runCli(cli.bin, ['exec', '-c', tierFile(fake.url), '--', join(dir, 'bin', 'gemini')], { XDG_STATE_HOME: ownedState, GEMINI_API_KEY: 'users-own-key' }),
      );
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout[0]);
      expect(report.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // No from_client gemini provider: the user's own key stays home; the proxy takes a placeholder.
      expect(report.key).toBe('llm-route');
      expect(report.model).toBe('local');
      expect(report.settingsPath).toBe(join(ownedState, 'llm-route', `gemini-cli-settings.${report.settingsPath.split('.').at(-2)}.json`));
      expect(report.settings.security.auth.selectedType).toBe('gemini-api-key');
      expect(report.settings.modelConfigs.customOverrides).toContainEqual({ match: { model: 'base' }, modelConfig: { model: 'local@background' } });
      expect(report.settings.modelConfigs.customOverrides).toContainEqual({ match: { model: 'chat-base' }, modelConfig: { model: 'local' } });
      expect(report.status).toBe(200);
      expect(report.tier).toBe('local');
      expect(report.body).toContain('"text":"Hel"');
      expect(existsSync(report.settingsPath)).toBe(false);
      expect(readdirSync(join(ownedState, 'llm-route')).filter((name) => name.startsWith('gemini-cli-settings'))).toEqual([]);
      expect(run.stderr).not.toContain('Gemini CLI reads a settings file');
    },
  );

  it("with llm-route's state folder where Gemini CLI would skip a settings file (/tmp), says what to set once, and still gives it the proxy", async () => {
    const fake = await h.fake();
    fake.always(healthyStream(['ok']));
    const run = await finished(runCli(cli.bin, ['exec', '-c', tierFile(fake.url), '--', join(dir, 'bin', 'gemini')]));
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout[0]);
    expect(report.settingsPath).toBeUndefined();
    expect(report.status).toBe(200);
    expect(run.stderr).toContain('Gemini CLI reads a settings file for this run only when root owns it');
    expect(run.stderr).toContain('"selectedType": "gemini-api-key"');
  });

  it("with server.auth_token, the token is Gemini CLI's key (x-goog-api-key), which the proxy accepts", async () => {
    const fake = await h.fake();
    fake.always(healthyStream(['ok']));
    const run = await finished(
      runCli(cli.bin, ['exec', '-c', tierFile(fake.url, ['server: { auth_token: tok-gemini-1 }']), '--', join(dir, 'bin', 'gemini')], {
        XDG_STATE_HOME: ownedState,
      }),
    );
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout[0]);
    expect(report.key).toBe('tok-gemini-1');
    expect(report.status).toBe(200);
  });
});
