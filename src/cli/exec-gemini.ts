import { lstatSync, mkdirSync, readFileSync, rmSync, type Stats, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { LLM_ROUTE_TOKEN_HEADER } from '../protocols/core/credential.js';
import { stateDir } from '../usage/paths.js';
import { isRecord } from '../util/is-record.js';

/**
 * What Gemini CLI needs to talk to llm-route for one `exec` run (docs/agents.md), seen with
 * 0.61.0: GOOGLE_GEMINI_BASE_URL alone makes it pick the auth type `gateway`, which its `-p`
 * mode refuses ("Invalid auth method selected."); the auth type `gemini-api-key` takes the base
 * URL. That type is set for the run by a system settings file named in
 * GEMINI_CLI_SYSTEM_SETTINGS_PATH, never by editing the user's own settings; Gemini CLI reads
 * such a file only when root owns it and every folder above it and no one else may write them.
 */

/** The model name Gemini CLI asks for by default: the route it reaches, when one does, is the route Gemini CLI is given. */
export const GEMINI_MODEL = 'gemini-2.5-pro';

export function isGeminiCli(program: string | undefined): boolean {
  return program !== undefined && /^gemini(\.js|\.cmd|\.exe)?$/.test(basename(program));
}

/**
 * Its environment: llm-route's URL, a key (llm-route's token or a placeholder; the user's own
 * GEMINI_API_KEY when a from_client gemini provider is sent it, llm-route's token then in a
 * header of its own), and the route as its model. Its own helpers (the model-routing classifier,
 * loop detection, summaries) ask for Gemini model names of their own; the settings file points
 * them at `<route>@background`, and its history compression at the route (settingsFor).
 */
export function geminiCliEnv(url: string, route: string, key: string, own: { key?: string; token?: string }): Record<string, string> {
  const env: Record<string, string> = { GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: own.key ?? key, GEMINI_MODEL: route };
  if (own.key && own.token) env.GEMINI_CLI_CUSTOM_HEADERS = withHeader(process.env.GEMINI_CLI_CUSTOM_HEADERS, `${LLM_ROUTE_TOKEN_HEADER}: ${own.token}`);
  return env;
}

/** GEMINI_CLI_CUSTOM_HEADERS is `Name: value, Name: value`. */
function withHeader(list: string | undefined, header: string): string {
  return list?.trim() ? `${list.trim()}, ${header}` : header;
}

/** Its history compression's model aliases (0.61.0): each asks for a Gemini model by name. */
const COMPRESSION_ALIASES = [
  'chat-compression-3-pro',
  'chat-compression-3-flash',
  'chat-compression-3.1-flash-lite',
  'chat-compression-2.5-pro',
  'chat-compression-2.5-flash',
  'chat-compression-2.5-flash-lite',
  'chat-compression-default',
];

/**
 * The run's settings: the system settings Gemini CLI would have read (`base`, an
 * administrator's), with the auth type that takes the base URL, and model overrides so every
 * request names the route. Gemini CLI's helpers all derive from its `base` model config and
 * its chat models from `chat-base` (a later, deeper override wins): helpers ask for
 * `<route>@background`, the chat and its compression for the route.
 */
export function settingsFor(route: string, base: Record<string, unknown> = {}): string {
  const customOverrides = [
    { match: { model: 'base' }, modelConfig: { model: `${route}@background` } },
    { match: { model: 'chat-base' }, modelConfig: { model: route } },
    ...COMPRESSION_ALIASES.map((alias) => ({ match: { model: alias }, modelConfig: { model: route } })),
    { match: { model: 'agent-history-provider-summarizer' }, modelConfig: { model: `${route}@background` } },
  ];
  const security = isRecord(base.security) ? base.security : {};
  const auth = isRecord(security.auth) ? security.auth : {};
  const modelConfigs = isRecord(base.modelConfigs) ? base.modelConfigs : {};
  const settings = {
    ...base,
    security: { ...security, auth: { ...auth, selectedType: 'gemini-api-key' } },
    modelConfigs: {
      ...modelConfigs,
      customOverrides: [...(Array.isArray(modelConfigs.customOverrides) ? modelConfigs.customOverrides : []), ...customOverrides],
    },
  };
  return `${JSON.stringify(settings, null, 2)}\n`;
}

/** The system settings Gemini CLI reads when not told of a file (an administrator's), as JSON; {} when there are none or they are not plain JSON. */
function systemSettings(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const path =
    env.GEMINI_CLI_SYSTEM_SETTINGS_PATH ||
    (process.platform === 'darwin' ? '/Library/Application Support/GeminiCli/settings.json' : '/etc/gemini-cli/settings.json');
  try {
    const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}

/**
 * Writes the run's settings file in llm-route's state folder and returns its path and what
 * removes it; or why Gemini CLI would not read it there (a folder above it that root does not
 * own, or that others may write: `/tmp`, a user's home).
 */
export function writeRunSettings(route: string, env: NodeJS.ProcessEnv = process.env): { path: string; remove(): void } | { problem: string } {
  const dir = stateDir(env);
  const problem = unsafeFolder(dir);
  if (problem) return { problem };
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const path = join(dir, `gemini-cli-settings.${process.pid}.json`);
  writeFileSync(path, settingsFor(route, systemSettings(env)), { mode: 0o644 });
  return { path, remove: () => rmSync(path, { force: true }) };
}

/** Why Gemini CLI would skip a settings file in `dir`: the first folder on the way that root does not own or others may write; null when none. */
function unsafeFolder(dir: string): string | null {
  for (let folder = dir; ; folder = dirname(folder)) {
    let stats: Stats | undefined;
    try {
      stats = lstatSync(folder);
    } catch {
      // Not made yet: made by llm-route, owned by whoever runs it (checked below on its parent).
    }
    if (stats && (stats.uid !== 0 || (stats.mode & 0o022) !== 0)) {
      return stats.uid !== 0 ? `${folder} is not owned by root` : `others may write to ${folder}`;
    }
    if (dirname(folder) === folder) break;
  }
  return typeof process.getuid === 'function' && process.getuid() !== 0 ? 'llm-route does not run as root' : null;
}

/** What exec says when Gemini CLI cannot be given the auth type for the run. */
export function settingsNotice(problem: string): string {
  return (
    `llm-route exec: Gemini CLI reads a settings file for this run only when root owns it and every folder above it (${problem}); ` +
    'without one it refuses llm-route\'s URL in -p mode ("Invalid auth method selected."). ' +
    'Set "security": {"auth": {"selectedType": "gemini-api-key"}} in ~/.gemini/settings.json once (docs/agents.md#gemini-cli)'
  );
}
