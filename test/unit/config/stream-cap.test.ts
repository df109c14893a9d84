import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { problemsOf } from '../../helpers/config.js';

/** timeouts.stream_max_ms: the opt-in wall-clock cap on a streaming attempt (0 = none, the default). */

function file(routeTimeouts: string, tierTimeouts: string): string {
  return `version: 1
providers:
  ollama: { type: openai, base_url: "http://127.0.0.1:11434/v1" }
routes:
  chat:
${routeTimeouts ? `    timeouts: ${routeTimeouts}\n` : ''}    tiers:
      - name: a
        provider: ollama
        model: m
${tierTimeouts ? `        timeouts: ${tierTimeouts}\n` : ''}      - name: b
        provider: ollama
        model: m
`;
}

describe('timeouts.stream_max_ms', () => {
  it('is off by default, inherited from the route, overridden (0 too) by a tier', () => {
    const caps = (text: string) =>
      loadConfigText(text, 'llm-route.yaml', {})
        .routes.get('chat')
        ?.tiers.map((t) => t.timeouts.stream_max_ms);
    expect(caps(file('', ''))).toEqual([0, 0]);
    expect(caps(file('{ stream_max_ms: 900000 }', ''))).toEqual([900000, 900000]);
    expect(caps(file('{ stream_max_ms: 900000 }', '{ stream_max_ms: 0 }'))).toEqual([0, 900000]);
  });

  it('rejects a negative or fractional value, at its line', () => {
    expect(problemsOf(file('', '{ stream_max_ms: -1 }'))).toMatchObject([
      { line: 10, path: 'routes.chat.tiers[0].timeouts.stream_max_ms', message: 'expected a non-negative integer, got -1' },
    ]);
    expect(problemsOf(file('', '{ stream_max_ms: 1.5 }'))).toMatchObject([{ line: 10, path: 'routes.chat.tiers[0].timeouts.stream_max_ms' }]);
  });

  it("rejects a cap below the tier's ttft_ms, once where it is set", () => {
    const onTier = problemsOf(file('', '{ ttft_ms: 5000, stream_max_ms: 4000 }'));
    expect(onTier.map((p) => [p.path, p.message])).toEqual([
      [
        'routes.chat.tiers[0].timeouts.stream_max_ms',
        "stream_max_ms 4000 is below ttft_ms 5000: it counts from the attempt's start, so streams would end at their first token; use 0 (no cap) or at least ttft_ms",
      ],
    ]);
    // A route's cap below the default ttft_ms (10 s), shared by both tiers: one problem.
    expect(problemsOf(file('{ stream_max_ms: 2000 }', '')).map((p) => [p.line, p.path])).toEqual([[6, 'routes.chat.timeouts.stream_max_ms']]);
    // A tier's own ttft_ms under the route's cap is fine.
    expect(() => loadConfigText(file('{ ttft_ms: 1000, stream_max_ms: 2000 }', ''), 'llm-route.yaml', {})).not.toThrow();
  });
});
