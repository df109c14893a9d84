import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    globalSetup: ['test/global-setup.ts'],
    // The default output, then how many Redis and real-llama tests were skipped and why (its last lines).
    reporters: ['default', './test/helpers/skip-reporter.ts'],
    setupFiles: ['test/setup/state-dir.ts'],
  },
});
