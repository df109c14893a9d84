import { ensureBuilt } from './helpers/build.js';
import { REDIS_SKIP_NOTE, SKIP_REDIS } from './helpers/redis-available.js';

/**
 * CLI tests run bin/llm-route.js, which loads dist/: build it before any test file runs when
 * it is missing or older than src/, so `npx vitest run test/x.test.ts` alone tests the current
 * sources. Nothing writes dist/ while the tests run. Also says, once per run, when the Redis
 * tests are skipped (no redis-server on a developer's machine).
 */
export default function setup(): void {
  ensureBuilt();
  if (SKIP_REDIS) process.stdout.write(`${REDIS_SKIP_NOTE}\n`);
}
