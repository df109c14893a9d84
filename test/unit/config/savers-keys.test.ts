import { describe, expect, it } from 'vitest';
import { ConfigError, formatProblem } from '../../../src/config/errors.js';
import { loadConfigText } from '../../../src/config/load.js';

function file(savers: string, routeExtra = '', tierExtra = ''): string {
  return `version: 1
providers:
  local: { type: openai, base_url: "http://127.0.0.1:11434/v1" }
${savers}
routes:
  chat:
    tiers:
      - provider: local
        model: m
${tierExtra}${routeExtra}
  code:
    tiers:
      - provider: local
        model: m
`;
}

function problems(text: string): string[] {
  try {
    loadConfigText(text, 'llm-route.yaml', {});
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map(formatProblem);
    throw error;
  }
  throw new Error('expected the file to be rejected');
}

describe('savers: in the tier file', () => {
  it('a route without its own list gets the top-level default; `savers: []` turns them off', () => {
    const config = loadConfigText(file('savers: [whitespace, { trim_history: { max_tokens: 8000 } }]', '    savers: []'), 'llm-route.yaml', {});
    expect(config.routes.get('chat')?.savers).toEqual([]);
    expect(config.routes.get('code')?.savers).toEqual([
      { name: 'whitespace', options: { tool_results: false } },
      { name: 'trim_history', options: { max_tokens: 8000, keep_last: 6 } },
    ]);
  });

  it('the docs/savers.md example, in file order with options; a route of its own wins over the default', () => {
    const spec =
      '    savers: [whitespace, dedupe_system, minify_tool_json, { truncate_tool_output: { max_tokens: 2000 } }, { trim_history: { max_tokens: 8000, keep_last: 6 } }]';
    const config = loadConfigText(file('savers: [whitespace]', spec), 'llm-route.yaml', {});
    expect(config.routes.get('chat')?.savers.map((s) => [s.name, s.options])).toEqual([
      ['whitespace', { tool_results: false }],
      ['dedupe_system', {}],
      ['minify_tool_json', {}],
      ['truncate_tool_output', { max_tokens: 2000 }],
      ['trim_history', { max_tokens: 8000, keep_last: 6 }],
    ]);
    expect(config.routes.get('code')?.savers.map((s) => s.name)).toEqual(['whitespace']);
  });

  it('no savers anywhere: every route has none; tiers measure with o200k_base unless they name an encoding', () => {
    const config = loadConfigText(file('', '', '        tokenizer: cl100k_base\n'), 'llm-route.yaml', {});
    expect(config.routes.get('chat')?.savers).toEqual([]);
    expect(config.routes.get('chat')?.tiers[0].tokenizer).toBe('cl100k_base');
    expect(config.routes.get('code')?.tiers[0].tokenizer).toBe('o200k_base');
    expect(problems(file('', '', '        tokenizer: o200k\n'))).toEqual([
      'llm-route.yaml:10:20: expected one of "o200k_base", "cl100k_base", "p50k_base", "r50k_base", "o200k_harmony", got "o200k" (at routes.chat.tiers[0].tokenizer)',
    ]);
  });

  it('an unknown saver name: did you mean, at the entry (a name) or at its key (a map)', () => {
    expect(problems(file('savers: [whitespce, { trim_histroy: { max_tokens: 5 } }, compress]'))).toEqual([
      'llm-route.yaml:4:10: unknown saver "whitespce"; did you mean "whitespace"? (at savers[0])',
      'llm-route.yaml:4:23: unknown saver "trim_histroy"; did you mean "trim_history"? (at savers[1].trim_histroy)',
      'llm-route.yaml:4:58: unknown saver "compress"; the savers are whitespace, dedupe_system, minify_tool_json, truncate_tool_output, trim_history (at savers[2])',
    ]);
  });

  it('bad options: a bad value, an unknown option, a missing one, options that are not a map', () => {
    const text = file(`savers:
  - truncate_tool_output: { max_tokens: -3 }
  - trim_history: { max_tokns: 100 }
  - whitespace: { tool_results: yes please }
  - dedupe_system: { x: 1 }
  - minify_tool_json: 5`);
    expect(problems(text)).toEqual([
      'llm-route.yaml:5:41: expected an integer of at least 32, got -3 (at savers[0].truncate_tool_output.max_tokens)',
      'llm-route.yaml:6:5: saver "trim_history" needs the option max_tokens: a positive integer (at savers[1].trim_history)',
      'llm-route.yaml:6:21: unknown option "max_tokns" of saver "trim_history"; did you mean "max_tokens"? (at savers[1].trim_history.max_tokns)',
      'llm-route.yaml:7:33: expected true or false, got "yes please" (at savers[2].whitespace.tool_results)',
      'llm-route.yaml:8:22: saver "dedupe_system" takes no options, got "x" (at savers[3].dedupe_system.x)',
      'llm-route.yaml:9:23: the options of saver "minify_tool_json" must be a map, got 5 (at savers[4].minify_tool_json)',
    ]);
  });

  it('a bare name of a saver that needs options says how to write them; a saver listed twice; odd entries', () => {
    const text = file('', '    savers: [truncate_tool_output, whitespace, { whitespace: {} }, { a: 1, b: 2 }, 7]');
    expect(problems(text)).toEqual([
      'llm-route.yaml:10:14: saver "truncate_tool_output" needs the option max_tokens: an integer of at least 32; write it as { truncate_tool_output: { max_tokens: ... } } (at routes.chat.savers[0])',
      'llm-route.yaml:10:48: saver "whitespace" is listed twice (also at [1]); each saver runs once (at routes.chat.savers[2])',
      "llm-route.yaml:10:68: a saver is a name or a map with one key, the saver's name, holding its options; got a map with keys a, b (at routes.chat.savers[3])",
      'llm-route.yaml:10:84: expected a saver name or a one-key map { name: options }, got 7 (at routes.chat.savers[4])',
    ]);
  });

  it('`savers:` that is not a list is a schema problem', () => {
    expect(problems(file('savers: whitespace'))).toEqual(['llm-route.yaml:4:9: expected a list, got "whitespace" (at savers)']);
  });
});
