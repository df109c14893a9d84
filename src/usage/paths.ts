import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';

/** llm-route's state folder: $XDG_STATE_HOME/llm-route, else ~/.local/state/llm-route. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME && env.XDG_STATE_HOME !== '' ? env.XDG_STATE_HOME : join(env.HOME || homedir(), '.local', 'state');
  return join(state, 'llm-route');
}

/** $XDG_STATE_HOME/llm-route/usage.db, else ~/.local/state/llm-route/usage.db. */
export function defaultUsagePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), 'usage.db');
}

/** The usage database of a config: its `usage.path` (already absolute), else the default. */
export function usagePath(config: Pick<Config, 'usage'>, env: NodeJS.ProcessEnv = process.env): string {
  return config.usage.path ?? defaultUsagePath(env);
}
