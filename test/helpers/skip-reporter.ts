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
    const skipped = (belongs: (test: TestCase) => boolean): number => {
      let count = 0;
      for (const module of testModules) for (const test of module.children.allTests('skipped')) if (belongs(test)) count++;
      return count;
    };
    const notes: string[] = [];
    if (SKIP_REDIS) notes.push(`${skipped(isRedisTest)} ${REDIS_SKIP_NOTE}`);
    if (!realLlamaBuilt()) notes.push(`${skipped((test) => isRealLlamaFile(test.module.moduleId))} ${realLlamaSkipNote()}`);
    // The rest skip on a condition written in the test itself, most for an older Node (V8 < 12): named, so none goes unexplained.
    const known = (test: TestCase) => (SKIP_REDIS && isRedisTest(test)) || (!realLlamaBuilt() && isRealLlamaFile(test.module.moduleId));
    const others = testModules.flatMap((module) => [...module.children.allTests('skipped')].filter((test) => !known(test)));
    if (others.length > 0) {
      const names = others.map((test) => `  ${relative(process.cwd(), test.module.moduleId)}: ${test.name}`);
      // First, so the last lines stay the ones that say what to install.
      notes.unshift(
        `${others.length} skipped by a condition of their own on this machine (Node ${process.version}; see each test's skipIf):\n${names.join('\n')}`,
      );
    }
    const said = notes.filter((note) => !note.startsWith('0 '));
    if (said.length > 0) process.stdout.write(`\n${said.join('\n')}\n`);
  }
}

/** A Redis test: one in a shared-state/redis*.test.ts file, or in a suite over backends named "(redis)" (state-kit.ts). */
export function isRedisTest(test: TestCase): boolean {
  return /[\\/]shared-state[\\/]redis[^\\/]*\.test\.ts$/.test(test.module.moduleId) || test.fullName.includes('(redis)');
}
