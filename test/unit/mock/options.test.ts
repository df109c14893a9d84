import { describe, expect, it } from 'vitest';
import { MockOptionsError, parseMockOptions } from '../../../src/mock/options.js';
import { createRandom, forkRandom } from '../../../src/mock/random.js';

function problemsOf(raw: Record<string, unknown>): string[] {
  try {
    parseMockOptions(raw);
  } catch (error) {
    if (error instanceof MockOptionsError) return error.problems;
    throw error;
  }
  throw new Error('expected the options to be refused');
}

describe('parseMockOptions', () => {
  it("gives the CLI's defaults for what is not given", () => {
    expect(parseMockOptions({})).toEqual({
      protocol: 'openai',
      host: '127.0.0.1',
      port: 0,
      ttftMs: { min: 0, max: 0 },
      tokensPerS: 0,
      tokens: 20,
      failRate: 0,
      failStatus: 503,
      stallRate: 0,
      dieAfter: undefined,
      dieRate: 0,
      malformedRate: 0,
      name: 'mock',
      seed: undefined,
    });
  });

  it('reads flag strings and numbers alike: a TTFT range, rates, a trimmed name', () => {
    const options = parseMockOptions({ protocol: 'anthropic', ttftMs: '200:1500', failRate: 0.25, tokens: '5', name: '  local-a ', seed: '42' });
    expect(options).toMatchObject({ protocol: 'anthropic', ttftMs: { min: 200, max: 1500 }, failRate: 0.25, tokens: 5, name: 'local-a', seed: 42 });
    expect(parseMockOptions({ ttftMs: 300 }).ttftMs).toEqual({ min: 300, max: 300 });
  });

  it('breaks every answer after --die-after alone; --die-rate picks a share of them', () => {
    expect(parseMockOptions({ dieAfter: '2' })).toMatchObject({ dieAfter: 2, dieRate: 1 });
    expect(parseMockOptions({ dieAfter: '2', dieRate: '0.1' })).toMatchObject({ dieAfter: 2, dieRate: 0.1 });
    expect(parseMockOptions({ dieRate: '0.5' })).toMatchObject({ dieAfter: undefined, dieRate: 0.5 });
  });

  it('refuses every bad flag at once, naming the flag, the value and what it expects', () => {
    expect(problemsOf({ protocol: 'grpc', failRate: '1.5', failStatus: '101', ttftMs: '900:100', port: '70000', name: 'a\nb', speed: 3 })).toEqual([
      'unknown mock option "speed"',
      '--protocol "grpc": expected openai, ollama, anthropic',
      '--port "70000": expected an integer from 0 to 65535',
      '--ttft-ms "900:100": expected milliseconds like 200, or a uniform range like 200:1500 (min <= max)',
      '--fail-rate "1.5": expected a share from 0 to 1, like 0.05',
      '--fail-status "101": expected an HTTP status from 200 to 599, like 503',
      '--name "a\\nb": expected a non-empty single-line text',
    ]);
    expect(problemsOf({ tokens: '-1' })).toEqual(['--tokens "-1": expected an integer from 0 to 1000000']);
    expect(problemsOf({ ttftMs: '1:2:3' })).toEqual(['--ttft-ms "1:2:3": expected milliseconds like 200, or a uniform range like 200:1500']);
  });
});

describe('the fault dice', () => {
  it('give the same numbers for the same seed, in [0, 1), and others for another seed', () => {
    const a = createRandom(7);
    const b = createRandom(7);
    const draws = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(draws);
    for (const x of draws) expect(x >= 0 && x < 1).toBe(true);
    expect(createRandom(8)()).not.toBe(draws[0]);
    // Roughly uniform: each tenth of [0, 1) gets a fair share of 1000 draws.
    const tenths = Array.from({ length: 10 }, (_, i) => draws.filter((x) => Math.floor(x * 10) === i).length);
    for (const count of tenths) expect(count).toBeGreaterThan(50);
  });

  it('fork a request its own sequence, the same from the same parent draws', () => {
    const parent = createRandom(1);
    const first = forkRandom(parent);
    const second = forkRandom(parent);
    const again = createRandom(1);
    const firstAgain = forkRandom(again);
    expect([first(), first()]).toEqual([firstAgain(), firstAgain()]);
    expect(second()).not.toBe(forkRandom(createRandom(1))());
  });
});
