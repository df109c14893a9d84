import { ensureBuilt } from './helpers/build.js';

/**
 * CLI tests run bin/llm-route.js, which loads dist/: build it before any test file runs when
 * it is missing or older than src/, so `npx vitest run test/x.test.ts` alone tests the current
 * sources. Nothing writes dist/ while the tests run.
 */
export default function setup(): void {
  ensureBuilt();
}
