import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from './errors.js';

// Finding the tier file, apart from reading it: `llm-route statusline` looks for the server's
// address here on every update of Claude Code's screen, without loading the schema.

const DEFAULT_FILE = 'llm-route.yaml';

/** Which tier file to use: -c/--config, then $LLM_ROUTE_CONFIG, then ./llm-route.yaml. Returns an absolute path. */
export function resolveConfigPath(cliPath?: string, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  if (cliPath) return existingFile(resolve(cwd, cliPath), 'given with -c/--config');
  const fromEnv = env.LLM_ROUTE_CONFIG;
  if (fromEnv) return existingFile(resolve(cwd, fromEnv), 'given in $LLM_ROUTE_CONFIG');
  const local = resolve(cwd, DEFAULT_FILE);
  if (existsSync(local)) return local;
  throw fileProblem(
    '',
    `no tier file found: no -c/--config was given, $LLM_ROUTE_CONFIG is not set, and ${local} does not exist; ` +
      `run \`llm-route init\` to write one for this machine (it finds local model servers and cloud keys), or pass -c FILE`,
  );
}

function existingFile(file: string, source: string): string {
  if (!existsSync(file)) throw fileProblem(file, `tier file not found (${source}); \`llm-route init -c ${file}\` writes one`);
  return file;
}

export function fileProblem(file: string, message: string): ConfigError {
  return new ConfigError([{ file, line: 0, col: 0, path: '', message }]);
}
