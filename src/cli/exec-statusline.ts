import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What `exec -- claude` runs, and what it says about Claude Code's status line (once, before the command starts). */
export interface StatusLineSetup {
  command: string[];
  note: string | null;
}

export interface SettingsPlaces {
  cwd: string;
  env: NodeJS.ProcessEnv;
  home: string;
  /** Managed (enterprise) settings files: they outrank `--settings`. */
  managed: string[];
}

/** Claude Code's subcommands: they start no session, so they get no status line. */
const SUBCOMMANDS = new Set([
  'agents',
  'auth',
  'auto-mode',
  'doctor',
  'gateway',
  'install',
  'mcp',
  'plugin',
  'plugins',
  'project',
  'setup-token',
  'ultrareview',
  'update',
  'upgrade',
]);

const MANAGED = process.platform === 'darwin' ? ['/Library/Application Support/ClaudeCode/managed-settings.json'] : ['/etc/claude-code/managed-settings.json'];

export function isClaudeCode(program: string | undefined): boolean {
  return program !== undefined && /^claude(\.exe|\.js)?$/.test(basename(program));
}

/**
 * For `exec -- claude`: llm-route's status line for this run, through Claude Code's
 * `--settings` (a JSON string), unless the user has a status line of their own (their
 * settings files, or a `--settings` they passed): theirs wins, and the note says so. A
 * `--settings` of theirs without one gets ours added to it. Other commands are left alone.
 */
export function withStatusLine(command: string[], url: string, places: SettingsPlaces = defaultPlaces()): StatusLineSetup {
  const args = command.slice(1);
  if (!isClaudeCode(command[0]) || SUBCOMMANDS.has(args[0] ?? '') || args.includes('-p') || args.includes('--print')) return { command, note: null };
  const ours = { type: 'command', command: statusLineCommand(url), padding: 0 };

  const given = settingsArgument(args);
  if (given) {
    const theirs = readSettings(given.value, places.cwd);
    if (theirs === null)
      return { command, note: `llm-route: the --settings you gave Claude Code cannot be read; passed on as it is, without llm-route's status line` };
    if (theirs.statusLine !== undefined) return { command, note: keptNote('the --settings you gave') };
    const merged = [...args];
    merged.splice(given.index, given.width, '--settings', JSON.stringify({ ...theirs, statusLine: ours }));
    return { command: [command[0], ...merged], note: null };
  }
  for (const file of settingsFiles(places)) {
    const settings = existsSync(file) ? readSettings(file, places.cwd) : null;
    if (settings?.statusLine !== undefined) return { command, note: keptNote(file) };
  }
  return { command: [command[0], '--settings', JSON.stringify({ statusLine: ours }), ...args], note: null };
}

function keptNote(where: string): string {
  return `llm-route: Claude Code keeps your own status line (${where}); for llm-route's, run \`llm-route statusline\` from it (docs/agents.md)`;
}

/** Where Claude Code reads a status line from, besides `--settings`: managed, project local, project, user. */
function settingsFiles(places: SettingsPlaces): string[] {
  const configDir = places.env.CLAUDE_CONFIG_DIR || join(places.home, '.claude');
  return [
    ...places.managed,
    join(places.cwd, '.claude', 'settings.local.json'),
    join(places.cwd, '.claude', 'settings.json'),
    join(configDir, 'settings.json'),
  ];
}

/** The user's own `--settings VALUE` or `--settings=VALUE`: where it is in the arguments and how many it takes. */
function settingsArgument(args: string[]): { index: number; width: number; value: string } | null {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--settings' && i + 1 < args.length) return { index: i, width: 2, value: args[i + 1] };
    if (args[i].startsWith('--settings=')) return { index: i, width: 1, value: args[i].slice('--settings='.length) };
  }
  return null;
}

/** A settings file, or `--settings`'s value (a JSON string or a file), as an object; null when it cannot be read. */
function readSettings(value: string, cwd: string): Record<string, unknown> | null {
  try {
    const text = value.trimStart().startsWith('{') ? value : readFileSync(resolve(cwd, value), 'utf8');
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * This llm-route's own `statusline`, by absolute paths (this Node, this package's bin: no
 * PATH needed), asking the run's private proxy. Its token comes from the environment Claude
 * Code passes on (LLM_ROUTE_API_KEY), never the command line.
 */
function statusLineCommand(url: string): string {
  // dist/cli/ and dist/bundle/ are both two levels below the package root.
  const bin = fileURLToPath(new URL('../../bin/llm-route.js', import.meta.url));
  const program = existsSync(bin) ? `${shellQuote(process.execPath)} ${shellQuote(bin)}` : 'llm-route';
  return `${program} statusline --url ${shellQuote(url)}`;
}

/** A word for a POSIX shell (Claude Code runs the status line command with one). */
function shellQuote(word: string): string {
  return /^[\w./:@=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function defaultPlaces(): SettingsPlaces {
  return { cwd: process.cwd(), env: process.env, home: homedir(), managed: MANAGED };
}
