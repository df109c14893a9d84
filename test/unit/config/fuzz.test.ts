import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { parse, stringify } from 'yaml';
import { ConfigError } from '../../../src/config/errors.js';
import { loadConfigText } from '../../../src/config/load.js';

const EXAMPLES = join(import.meta.dirname, '../../../examples');
const examples = readdirSync(EXAMPLES)
  .filter((name) => name.endsWith('.yaml'))
  .map((name) => readFileSync(join(EXAMPLES, name), 'utf8'));
const FILE = '/fuzz/tier-file.yaml';
const SECRET = 'sk-fuzz-secret-0123456789';
// Longer than the 60 characters a message quotes of a value before cutting it short.
const LONG_SECRET = `sk-proj-${'0123456789abcdef'.repeat(5)}`;

/**
 * What the loader may do with any text: return a config, or throw a ConfigError whose every
 * problem says file:line:col inside the text, and never shows a secret from the environment.
 */
function expectCleanOutcome(text: string, env: Record<string, string>): void {
  // A warning from a library would go to stderr, under the dashboard.
  const warn = vi.spyOn(process, 'emitWarning');
  let error: unknown;
  try {
    loadConfigText(text, FILE, env);
    return;
  } catch (caught) {
    error = caught;
  } finally {
    expect(warn.mock.calls.map((call) => String(call[0]))).toEqual([]);
    warn.mockRestore();
  }
  if (!(error instanceof ConfigError)) throw new Error(`not a ConfigError for ${JSON.stringify(text)}: ${String(error)}`, { cause: error });
  const lines = text.split(/\r\n|\r|\n/).length;
  expect(error.problems.length).toBeGreaterThan(0);
  for (const problem of error.problems) {
    expect(problem.file).toBe(FILE);
    expect(problem.line, problem.message).toBeGreaterThanOrEqual(1);
    expect(problem.line, problem.message).toBeLessThanOrEqual(lines);
    expect(problem.col, problem.message).toBeGreaterThanOrEqual(1);
    expect(problem.message).not.toBe('');
  }
  for (const secret of [SECRET, LONG_SECRET, LONG_SECRET.slice(0, 40)]) expect(error.message).not.toContain(secret);
}

// Pieces that mean something to YAML, to the schema or to the ${ENV} substitution.
const SNIPPETS = [
  ':',
  ': ',
  '- ',
  '\n',
  '\n  ',
  '  ',
  '\t',
  '{',
  '}',
  '[',
  ']',
  ',',
  '&a ',
  '*a',
  '*b',
  '<<: *a\n',
  '<<: [*a]\n',
  '!!str ',
  '!!int ',
  '!!map ',
  '!!binary ',
  '!!set ',
  '!tag ',
  '|',
  '>-',
  '"',
  "'",
  '#',
  '?',
  '? ',
  '%YAML 1.2\n',
  '---\n',
  '...\n',
  '~',
  'null',
  '-1',
  '0',
  '1e999',
  '0x10',
  '.inf',
  '.nan',
  'true',
  '""',
  '[]',
  '{}',
  '\u00e9',
  '\u0000',
  '\r',
  '\uFEFF',
  '\u2028',
  '${',
  '${X}',
  '${X:-}',
  '${X:-7}',
  '${OPENAI_API_KEY}',
  '$${',
  '${1}',
  'version: 2\n',
  'tiers: []\n',
  'weight: -5\n',
  'unknown_key: 1\n',
  'x'.repeat(300),
  '[[[[[[[[[[',
  '{a: {b: {c: ',
];

type Mutation = (text: string) => string;

const at = (text: string, n: number): number => (text.length === 0 ? 0 : n % (text.length + 1));
const lineIndex = (lines: string[], n: number): number => n % Math.max(1, lines.length);

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.nat(), fc.constantFrom(...SNIPPETS)).map(
    ([n, piece]) =>
      (t: string) =>
        t.slice(0, at(t, n)) + piece + t.slice(at(t, n)),
  ),
  fc.tuple(fc.nat(), fc.string({ unit: 'binary', maxLength: 8 })).map(
    ([n, s]) =>
      (t: string) =>
        t.slice(0, at(t, n)) + s + t.slice(at(t, n)),
  ),
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 40 })).map(
    ([n, size]) =>
      (t: string) =>
        t.slice(0, at(t, n)) + t.slice(at(t, n) + size),
  ),
  fc.nat().map((n) => (t: string) => t.slice(0, at(t, n))),
  fc.nat().map((n) => (t: string) => {
    const lines = t.split('\n');
    lines.splice(lineIndex(lines, n), 0, lines[lineIndex(lines, n)]); // a duplicate key, or a repeated item
    return lines.join('\n');
  }),
  fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => (t: string) => {
    const lines = t.split('\n');
    const i = lineIndex(lines, a);
    const j = lineIndex(lines, b);
    [lines[i], lines[j]] = [lines[j], lines[i]];
    return lines.join('\n');
  }),
  fc.tuple(fc.nat(), fc.integer({ min: -4, max: 4 })).map(([n, shift]) => (t: string) => {
    const lines = t.split('\n');
    const i = lineIndex(lines, n);
    lines[i] = shift >= 0 ? ' '.repeat(shift) + lines[i] : lines[i].replace(new RegExp(`^ {0,${-shift}}`), '');
    return lines.join('\n');
  }),
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom(
        '',
        '0',
        '-1',
        '1.5',
        '99999999999999999999',
        'true',
        'null',
        '[]',
        '{}',
        '"x"',
        '${MISSING}',
        '${OPENAI_API_KEY}',
        'ftp://x',
        'http://',
        '[1, 2]',
        '{ a: 1 }',
      ),
    )
    .map(([n, value]) => (t: string) => {
      const lines = t.split('\n');
      const i = lineIndex(lines, n);
      lines[i] = lines[i].replace(/:\s.*$/, `: ${value}`);
      return lines.join('\n');
    }),
);

// Secret by name (KEY, TOKEN) or not (X); a value from X is not a secret, so it is never one.
const env = fc
  .record({
    OPENAI_API_KEY: fc.constantFrom(SECRET, LONG_SECRET, ''),
    ANTHROPIC_API_KEY: fc.constantFrom(SECRET, LONG_SECRET, ''),
    GEMINI_API_KEY: fc.constantFrom(SECRET, LONG_SECRET, ''),
    LLM_ROUTE_TOKEN: fc.constantFrom(SECRET, LONG_SECRET, ''),
    X: fc.constantFrom('7', 'text', ''),
  })
  .map((vars) => Object.fromEntries(Object.entries(vars).filter(([, value]) => value !== '')));

/** A value of any JSON-ish shape the schema does not expect, for mutations of the parsed data. */
const strangeValue = fc.oneof(
  fc.constantFrom(null, true, 0, -1, 1.5, 1e300, '', 'x', '${OPENAI_API_KEY}', [], {}, { unknown: 1 }),
  fc.string({ maxLength: 10 }),
  fc.integer(),
  fc.array(fc.integer(), { maxLength: 3 }),
);

/** Sets (or deletes, for undefined) the value at a random path of `data`, chosen by `steps`. */
function mutateData(data: unknown, steps: number[], value: unknown): unknown {
  const root = structuredClone(data);
  let node: unknown = root;
  for (const step of steps) {
    if (node === null || typeof node !== 'object') break;
    const keys = Object.keys(node);
    if (keys.length === 0) break;
    const key = keys[step % keys.length];
    const child = (node as Record<string, unknown>)[key];
    if (child === null || typeof child !== 'object' || step % 3 === 0) {
      if (value === undefined) delete (node as Record<string, unknown>)[key];
      else (node as Record<string, unknown>)[key] = value;
      return root;
    }
    node = child;
  }
  return root;
}

describe('config loader under fuzzing', { timeout: 120_000 }, () => {
  it('loads every example as it is (the mutations start from valid files)', () => {
    for (const text of examples)
      expect(() => loadConfigText(text, FILE, { OPENAI_API_KEY: SECRET, ANTHROPIC_API_KEY: SECRET, GEMINI_API_KEY: SECRET })).not.toThrow();
  });

  it('answers random text mutations of the examples with a config or a ConfigError at file:line:col', () => {
    fc.assert(
      fc.property(fc.constantFrom(...examples), fc.array(mutation, { minLength: 1, maxLength: 4 }), env, (text, mutations, vars) => {
        expectCleanOutcome(
          mutations.reduce((t, mutate) => mutate(t), text),
          vars,
        );
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 1_500) },
    );
  });

  it('answers random changes to the parsed examples with a config or a ConfigError at file:line:col', () => {
    const parsed = examples.map((text) => parse(text) as unknown);
    fc.assert(
      fc.property(
        fc.constantFrom(...parsed),
        fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
        fc.option(strangeValue, { nil: undefined }),
        env,
        (data, steps, value, vars) => {
          expectCleanOutcome(stringify(mutateData(data, steps, value)), vars);
        },
      ),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 800) },
    );
  });

  it('answers deep nesting, alias bombs and huge files with a ConfigError, each in a few seconds at most', () => {
    const deep = 20_000;
    const letter = (i: number): string => String.fromCharCode(97 + i);
    const cases: Array<[string, string]> = [
      [`${'['.repeat(deep)}${']'.repeat(deep)}`, 'nested too deeply'],
      // A long line of `{`: its "quote ${} in { }" hint once backtracked for over a minute.
      [`version: 1\nproviders: ${'{a: '.repeat(deep)}1${'}'.repeat(deep)}\n`, 'nested too deeply'],
      [`version: 1\nroutes:\n${Array.from({ length: 3_000 }, (_, i) => `${' '.repeat(i + 1)}k${i}:`).join('\n')}\n`, 'nested too deeply'],
      [`${'- '.repeat(deep)}x\n`, 'nested too deeply'],
      [
        `a: &a [x, x, x, x, x, x, x, x, x, x]\n${Array.from(
          { length: 12 },
          (_, i) =>
            `${letter(i + 1)}: &${letter(i + 1)} [${Array(10)
              .fill(`*${letter(i)}`)
              .join(', ')}]`,
        ).join('\n')}\n`,
        'resource exhaustion',
      ],
      [`version: 1\nproviders: {}\nroutes: { chat: { tiers: [] } }\n${'# comment\n'.repeat(100_000)}`, 'a route needs at least one tier'],
    ];
    for (const [text, message] of cases) {
      const started = performance.now();
      expectCleanOutcome(text, {});
      expect(() => loadConfigText(text, FILE, {})).toThrow(message);
      // Generous for a busy machine (7 s seen on 2 shared cores): what it guards against took minutes.
      expect(performance.now() - started).toBeLessThan(15_000);
    }
  }, 120_000);
});

describe('config loader: what fuzzing found', () => {
  const base = `version: 1
providers:
  openai: { type: openai, base_url: "https://api.openai.com/v1", api_key: "\${OPENAI_API_KEY}" }
routes:
  chat:
    tiers:
      - provider: openai
        model: m
`;

  it('hides a long secret in a value it quotes, also where the quote is cut short', () => {
    const text = base.replace('model: m', 'model: m\n        weight: ${OPENAI_API_KEY}');
    const load = () => loadConfigText(text, FILE, { OPENAI_API_KEY: LONG_SECRET });
    expect(load).toThrow('got "***" (at routes.chat.tiers[0].weight)');
    expect(load).not.toThrow(LONG_SECRET.slice(0, 20));
  });

  it('refuses a map as a key, at its line and column, without a warning on stderr', () => {
    const warn = vi.spyOn(process, 'emitWarning');
    const text = base.replace('  chat:\n', '  ? { a: 1 }\n  : { tiers: [] }\n  chat:\n');
    expect(() => loadConfigText(text, FILE, { OPENAI_API_KEY: SECRET })).toThrow(
      `${FILE}:5:5: a key must be a plain name, not a map, a list or a tagged value`,
    );
    expect(warn).not.toHaveBeenCalled();
    warn.mockRestore();
  });
});
