import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TestModule } from 'vitest/node';
import SkipReporter from '../../helpers/skip-reporter.js';

// The suite's last lines (test/helpers/skip-reporter.ts): whatever skips on a condition of its own
// is named. The Redis and real-llama lines are checked by running vitest itself (bare-machine.test.ts).

/** The part of a vitest module the reporter reads: its skipped tests, each with its file and name. */
function moduleWith(moduleId: string, names: string[]): TestModule {
  const tests = names.map((name) => ({ name, fullName: name, module: { moduleId } }));
  return { moduleId, children: { allTests: (state: string) => (state === 'skipped' ? tests : []) } } as unknown as TestModule;
}

afterEach(() => vi.restoreAllMocks());

function reported(modules: TestModule[]): string {
  const written: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  new SkipReporter().onTestRunEnd(modules);
  vi.restoreAllMocks();
  return written.join('');
}

describe('the skip reporter', () => {
  it('names each test skipped by a condition of its own, with its file', () => {
    const out = reported([
      moduleWith(`${process.cwd()}/test/unit/runtime/settle.test.ts`, ['gives back the young generation']),
      moduleWith(`${process.cwd()}/test/integration/server/startup.test.ts`, ['keeps the compile cache', 'settles when quiet']),
    ]);
    expect(out).toContain(`3 skipped by a condition of their own on this machine (Node ${process.version}`);
    expect(out).toContain('  test/unit/runtime/settle.test.ts: gives back the young generation\n');
    expect(out).toContain('  test/integration/server/startup.test.ts: keeps the compile cache\n');
    expect(out).toContain('  test/integration/server/startup.test.ts: settles when quiet\n');
  });

  it('says nothing when nothing was skipped', () => {
    expect(reported([moduleWith(`${process.cwd()}/test/unit/a.test.ts`, [])])).toBe('');
  });
});
