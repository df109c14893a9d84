import { defineConfig } from 'vitest/config';

/**
 * `npm run test:unit`, the inner loop's fast lane: test/unit only (no server, no process, no
 * network; src/ is imported as it is, so dist/ is not rebuilt), its files sharing the module
 * graph of each worker thread instead of loading it anew per file: one process instead of a
 * hundred, most of a unit run's time. The few files that need a process of their own (a module
 * mocked, a lazy load that must not have happened yet, a main thread's stack) run apart, as
 * `npm test` runs every file. docs/development.md, "Tests".
 */
export const RUN_APART = [
  'test/unit/util/bearer.test.ts', // mocks node:crypto
  'test/unit/cli/serve-args.test.ts', // mocks a module
  'test/unit/savers/route-savers.test.ts', // the tokenizer must not be loaded yet
  'test/unit/proxy/request-holds.test.ts', // the estimate without the tokenizer
  'test/unit/config/fuzz.test.ts', // "nested too deeply" is the stack of a process's main thread running out (a worker's is larger)
];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    reporters: ['default'],
    setupFiles: ['test/setup/state-dir.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts', 'test/unit/**/*.test.tsx'], exclude: RUN_APART, pool: 'threads', isolate: false },
      },
      { extends: true, test: { name: 'unit (apart)', include: RUN_APART, pool: 'forks' } },
    ],
  },
});
