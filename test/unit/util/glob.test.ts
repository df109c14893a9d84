import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { loadConfigText } from '../../../src/config/load.js';
import { compileGlobs, compileHeaderGlobs, isHeaderGlob, matchesGlob } from '../../../src/util/glob.js';

describe('globs', () => {
  it('* matches any run of characters, none included; the rest is literal', () => {
    expect(matchesGlob('claude-*', 'claude-sonnet-4-5')).toBe(true);
    expect(matchesGlob('claude-*', 'claude-')).toBe(true);
    expect(matchesGlob('claude-*', 'claude')).toBe(false);
    expect(matchesGlob('gpt-5*', 'gpt-5.1-codex')).toBe(true);
    expect(matchesGlob('*-mini', 'gpt-4o-mini')).toBe(true);
    expect(matchesGlob('a*b*c', 'a-x-b-y-c')).toBe(true);
    expect(matchesGlob('a*b*c', 'a-x-c')).toBe(false);
    // Regex characters are literal: a dot is a dot, not any character.
    expect(matchesGlob('gpt-4.1', 'gpt-4x1')).toBe(false);
    expect(matchesGlob('qwen2.5:7b', 'qwen2.5:7b')).toBe(true);
    expect(matchesGlob('(x)+', '(x)+')).toBe(true);
    expect(matchesGlob('m?', 'mx')).toBe(false);
  });

  it('model names match as written; header names ignore case', () => {
    expect(matchesGlob('Claude-*', 'claude-opus')).toBe(false);
    const headers = compileHeaderGlobs(['x-custom-*', 'x-trace-id']);
    expect(headers('X-Custom-Team')).toBe(true);
    expect(headers('x-trace-id')).toBe(true);
    expect(headers('X-TRACE-ID')).toBe(true);
    expect(headers('x-trace-idx')).toBe(false);
    expect(headers('authorization')).toBe(false);
  });

  it('any of several patterns; none never matches', () => {
    const aliases = compileGlobs(['claude-*', 'gpt-5*']);
    expect(['claude-haiku', 'gpt-5', 'gpt-4o'].map(aliases)).toEqual([true, true, false]);
    expect(compileGlobs([])('anything')).toBe(false);
  });

  it('header globs are header-name characters plus *', () => {
    expect(isHeaderGlob('x-custom-*')).toBe(true);
    expect(isHeaderGlob('X_Weird.Name~1')).toBe(true);
    expect(isHeaderGlob('x custom')).toBe(false);
    expect(isHeaderGlob('x-a:b')).toBe(false);
    expect(isHeaderGlob('')).toBe(false);
  });
});

describe('forward_headers on a provider', () => {
  const file = (entries: string) => `version: 1
providers:
  local:
    type: openai
    base_url: http://127.0.0.1:8081/v1
    forward_headers: ${entries}
routes:
  chat:
    tiers:
      - provider: local
        model: tiny
`;
  const problems = (entries: string): string[] => {
    try {
      loadConfigText(file(entries), '/t/llm-route.yaml', {});
      return [];
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      return error.format().split('\n');
    }
  };

  it('takes names and globs, kept as written on the provider', () => {
    const config = loadConfigText(file('[x-custom-*, X-Request-Source]'), '/t/llm-route.yaml', {});
    expect(config.providers.get('local')?.forward_headers).toEqual(['x-custom-*', 'X-Request-Source']);
    expect(loadConfigText(file('[]'), '/t/llm-route.yaml', {}).providers.get('local')?.forward_headers).toEqual([]);
  });

  it('refuses what is not a header name, every header, credentials and per-hop headers, with file:line:col', () => {
    expect(problems('["x custom"]')).toEqual([
      expect.stringMatching(/^\/t\/llm-route\.yaml:6:\d+: .*expected a header name or a glob of header names like x-custom-\*/),
    ]);
    expect(problems('["*"]')[0]).toMatch(/^\/t\/llm-route\.yaml:6:\d+: .*forwarding every client header is not allowed/);
    expect(problems('[Authorization]')[0]).toMatch(/^\/t\/llm-route\.yaml:6:\d+: .*authorization is never forwarded/);
    expect(problems('[x-api-key]')[0]).toMatch(/x-api-key is never forwarded/);
    expect(problems('[host]')[0]).toMatch(/host is never forwarded/);
    expect(problems('x-custom-*')[0]).toMatch(/^\/t\/llm-route\.yaml:6:\d+: .*expected/);
    expect(problems('[x-ok, "bad header"]')).toHaveLength(1);
  });

  it('is an unknown key elsewhere (on a tier)', () => {
    const text = file('[x-a]').replace('        model: tiny\n', '        model: tiny\n        forward_headers: [x-a]\n');
    expect(() => loadConfigText(text, '/t/llm-route.yaml', {})).toThrow(/forward_headers/);
  });
});
