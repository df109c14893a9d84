import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { problemsOf } from '../../helpers/config.js';

/** routes.<r>.stall: the learned stall of a resume route (docs/recovery.md). */

function file(routeKeys: string): string {
  return `version: 1
providers:
  llama: { type: openai, base_url: "http://127.0.0.1:8080/v1" }
routes:
  code:
    tiers:
      - provider: llama
        model: m
${routeKeys}`;
}

const stallOf = (text: string) => loadConfigText(text, 'llm-route.yaml', {}).routes.get('code')?.stall;

describe('routes.<r>.stall', () => {
  it('defaults to factor 20, floor_ms 2000, after 16; each key set alone keeps the others', () => {
    expect(stallOf(file('    on_break: resume\n'))).toEqual({ factor: 20, floor_ms: 2_000, after: 16 });
    expect(stallOf(file('    on_break: resume\n    stall: { floor_ms: 5000 }\n'))).toEqual({ factor: 20, floor_ms: 5_000, after: 16 });
    expect(stallOf(file('    on_break: resume\n    stall: { factor: 12.5, after: 32 }\n'))).toEqual({ factor: 12.5, floor_ms: 2_000, after: 32 });
  });

  it('rejects an unknown key with "did you mean", at its line and column', () => {
    const [problem] = problemsOf(file('    on_break: resume\n    stall: { factor: 20, floor: 3000 }\n'));
    expect(problem).toMatchObject({ file: 'llm-route.yaml', line: 10, col: 26, path: 'routes.code.stall.floor' });
    expect(problem.message).toMatch(/floor_ms/);
  });

  it('rejects values that would cut healthy streams or make no sense, each at its own key', () => {
    const problems = problemsOf(file('    on_break: resume\n    stall:\n      factor: 1\n      floor_ms: 0\n      after: 2.5\n'));
    expect(problems.map((p) => [p.line, p.path, p.message])).toEqual([
      [11, 'routes.code.stall.factor', 'expected a number of at least 2, got 1'],
      [12, 'routes.code.stall.floor_ms', 'expected a positive integer, got 0'],
      [13, 'routes.code.stall.after', 'expected a positive integer, got 2.5'],
    ]);
    expect(problemsOf(file('    on_break: resume\n    stall: 20\n'))).toMatchObject([{ line: 10, path: 'routes.code.stall' }]);
  });

  it('warns when set on a route that does not resume: nothing could mend a stream cut on a guess there', () => {
    const { warnings, routes } = loadConfigText(file('    stall: { floor_ms: 3000 }\n'), 'llm-route.yaml', {});
    expect(warnings).toEqual([expect.stringMatching(/^llm-route\.yaml:9:5: warning: stall is read only on a route with on_break: resume/)]);
    expect(routes.get('code')?.on_break).toBe('error');
    expect(loadConfigText(file('    on_break: resume\n    stall: { floor_ms: 3000 }\n'), 'llm-route.yaml', {}).warnings).toEqual([]);
  });
});
