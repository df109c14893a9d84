import { existsSync } from 'node:fs';
import Database, { type Database as Db } from 'better-sqlite3';
import { ConfigError } from '../config/errors.js';
import { loadConfig, resolveConfigPath } from '../config/load.js';
import { describeDbError } from './db-errors.js';
import { SCHEMA_VERSION } from './migrations.js';
import { defaultUsagePath, usagePath } from './paths.js';

export type OpenedLog = { ok: true; db: Db; path: string; tierFile?: TierFileRoutes } | { ok: false; message: string };

/** The tier file a reading command found, and its routes (the log may hold other tier files' rows too). */
export interface TierFileRoutes {
  file: string;
  routes: readonly string[];
}

/**
 * The usage log a reading command (`usage`, `incidents`) looks at: the tier file's `usage.path`
 * (found as every command finds it), else the default in the state dir when there is no tier
 * file at all. Never creates a database.
 */
export function openUsageLogForReading(configOption: string | undefined): OpenedLog {
  let path: string;
  let tierFile: TierFileRoutes | undefined;
  try {
    const config = loadConfig(resolveConfigPath(configOption));
    path = usagePath(config);
    tierFile = { file: config.file, routes: [...config.routes.keys()] };
  } catch (err) {
    const noTierFile =
      err instanceof ConfigError && configOption === undefined && !process.env.LLM_ROUTE_CONFIG && err.problems[0]?.message.startsWith('no tier file found');
    if (!noTierFile) return { ok: false, message: err instanceof ConfigError ? err.format() : (err as Error).message };
    path = defaultUsagePath();
  }
  const log = openUsageDb(path);
  return log.ok && tierFile ? { ...log, tierFile } : log;
}

/** The usage database at `path`, opened for reading: an llm-route usage log this version knows, or why not. */
export function openUsageDb(path: string): OpenedLog {
  if (!existsSync(path))
    return { ok: false, message: `no usage log at ${path}: llm-route serve creates it with the first request (usage.enabled is on by default)` };
  let db: Db;
  try {
    db = new Database(path, { fileMustExist: true, timeout: 5_000 });
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version === 0 || version > SCHEMA_VERSION) {
      db.close();
      return {
        ok: false,
        message:
          version === 0
            ? `${path} is not an llm-route usage log`
            : `${path} has schema version ${version}, newer than this llm-route knows (${SCHEMA_VERSION})`,
      };
    }
  } catch (err) {
    return { ok: false, message: `cannot read the usage log ${path}: ${describeDbError(err)}` };
  }
  return { ok: true, db, path };
}
