import { relative } from 'node:path';
import type { TestCase, TestModule } from 'vitest/node';
import type { Reporter } from 'vitest/reporters';
import { isRealLlamaFile, realLlamaBuilt, realLlamaSkipNote } from './real-llama.js';
import { REDIS_SKIP_NOTE, SKIP_REDIS } from './redis-available.js';

/**
 * Says, after the run's summary (so it is among the last lines, not scrolled away at the top),
 * how many tests were skipped for want of something this machine lacks, and how to run them:
 * the Redis tests without redis-server on PATH, the real-llama tests without a llama-server
 * build (scripts/real-llama/build.sh); and, by name, any other test skipped by a condition of its
 * own (most need a newer Node than this one). Such tests stay registered, as skipped, so the run counts
 * the same tests on every machine.
 */
export default class SkipReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const skipped = testModules.flatMap((module) => [...module.children.allTests('skipped')]);
    const redis = SKIP_REDIS ? skipped.filter(isRedisTest) : [];
    const realLlama = realLlamaBuilt() ? [] : skipped.filter((test) => isRealLlamaFile(test.module.moduleId));
    // The rest skip on a condition written in the test itself, most for an older Node (V8 < 12):
    // named, so none goes unexplained, and first, so the last lines say what to install.
    const others = skipped.filter((test) => !redis.includes(test) && !realLlama.includes(test));
    const notes: string[] = [];
    if (others.length > 0) {
      const names = others.map((test) => `  ${relative(process.cwd(), test.module.moduleId)}: ${test.name}`);
      notes.push(`${others.length} skipped by a condition of their own on this machine (Node ${process.version}; see each test's skipIf):`, ...names);
    }
    if (redis.length > 0) notes.push(`${redis.length} ${REDIS_SKIP_NOTE}`);
    if (realLlama.length > 0) notes.push(`${realLlama.length} ${realLlamaSkipNote()}`);
    if (notes.length > 0) process.stdout.write(`\n${notes.join('\n')}\n`);
  }
}

/** A Redis test: one in a shared-state/redis*.test.ts file, or in a suite over backends named "(redis)" (state-kit.ts). */
export function isRedisTest(test: TestCase): boolean {
  return /[\\/]shared-state[\\/]redis[^\\/]*\.test\.ts$/.test(test.module.moduleId) || test.fullName.includes('(redis)');
}
