import { ensureBuilt } from './helpers/build.js';

/**
 * CLI tests run bin/llm-route.js, which loads dist/: build it before any test file runs when
 * it is missing or older than src/, so `npx vitest run test/x.test.ts` alone tests the current
 * sources. Nothing writes dist/ while the tests run. (That the Redis tests were skipped, on a
 * machine without redis-server, is said at the end: helpers/skip-reporter.ts.)
 */
export default function setup(): void {
  ensureBuilt();
}
