import type { TestCase, TestModule } from 'vitest/node';
import type { Reporter } from 'vitest/reporters';
import { REDIS_SKIP_NOTE, SKIP_REDIS } from './redis-available.js';

/**
 * Says, after the run's summary (so it is among the last lines, not scrolled away at the top),
 * how many Redis tests were skipped and why. Redis tests stay registered without redis-server,
 * as skipped, so the run counts the same tests on every machine. A Redis test: one in a
 * state-redis*.test.ts file, or in a suite over backends named "(redis)" (state-kit.ts).
 */
export default class RedisSkipReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (!SKIP_REDIS) return;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests('skipped')) if (isRedisTest(test)) skipped++;
    }
    if (skipped > 0) process.stdout.write(`\n${skipped} ${REDIS_SKIP_NOTE}\n`);
  }
}

export function isRedisTest(test: TestCase): boolean {
  return /[\\/]state-redis[^\\/]*\.test\.ts$/.test(test.module.moduleId) || test.fullName.includes('(redis)');
}
