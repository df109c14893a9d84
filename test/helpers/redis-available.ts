import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Whether `redis-server` is an executable on PATH (what `spawn('redis-server')` would find). */
export function redisServerOnPath(path = process.env.PATH ?? ''): boolean {
  return path.split(delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      accessSync(join(dir, 'redis-server'), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * The Redis tests are skipped on a machine without redis-server, so `npm test` passes on a bare
 * clone; under CI (CI=true) they always run, and a missing redis-server fails them.
 */
export const SKIP_REDIS = process.env.CI !== 'true' && !redisServerOnPath();

export const REDIS_SKIP_NOTE =
  'Redis tests skipped: redis-server is not on PATH. To run them, install it (e.g. `apt-get install redis-server`, `brew install redis`) or run `CI=true npm test` to require it.';
