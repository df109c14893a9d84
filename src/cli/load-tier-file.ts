import { ConfigError } from '../config/errors.js';
import { loadConfig, resolveConfigPath } from '../config/load.js';
import type { Config } from '../config/schema.js';

/** The tier file of a command that only reads it; null after printing its problems (the command exits 2). */
export function loadTierFileOrReport(path: string | undefined): Config | null {
  try {
    return loadConfig(resolveConfigPath(path));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.format()}\n`);
    return null;
  }
}
