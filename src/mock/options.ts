export const MOCK_PROTOCOLS = ['openai', 'ollama', 'anthropic'] as const;
export type MockProtocol = (typeof MOCK_PROTOCOLS)[number];

/** The fault flags of `llm-route mock`, validated once so the server never sees a bad value. */
export interface MockOptions {
  /** The API it speaks: OpenAI Chat Completions, Ollama's native API (and its /v1), Anthropic Messages. */
  protocol: MockProtocol;
  host: string;
  /** 0 = any free port. */
  port: number;
  /** Delay before the first content chunk, drawn uniformly from [min, max] (equal for a fixed delay). */
  ttftMs: { min: number; max: number };
  /** Content chunks per second after the first; 0 = back to back. */
  tokensPerS: number;
  /** Content chunks per completion. */
  tokens: number;
  failRate: number;
  failStatus: number;
  stallRate: number;
  /** Break the socket after this many content chunks (of the answers `dieRate` picks); undefined = after a random one. */
  dieAfter: number | undefined;
  /** Share of answers whose socket breaks mid-body: 1 when only --die-after is given, 0 when neither is. */
  dieRate: number;
  malformedRate: number;
  /** Written into every completion so a reader can tell who answered; also the one model it lists. */
  name: string;
  /** Seed for the fault dice; undefined = a fresh random seed. */
  seed: number | undefined;
}

export class MockOptionsError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'MockOptionsError';
  }
}

/** The same defaults as the CLI flags, so tests can pass only what they care about. */
const DEFAULTS: Record<keyof MockOptions, unknown> = {
  protocol: 'openai',
  host: '127.0.0.1',
  port: 0,
  ttftMs: '0',
  tokensPerS: '0',
  tokens: '20',
  failRate: '0',
  failStatus: '503',
  stallRate: '0',
  dieAfter: undefined,
  dieRate: undefined,
  malformedRate: '0',
  name: 'mock',
  seed: undefined,
};

const FLAG: Record<keyof MockOptions, string> = {
  protocol: '--protocol',
  host: '--host',
  port: '--port',
  ttftMs: '--ttft-ms',
  tokensPerS: '--tokens-per-s',
  tokens: '--tokens',
  failRate: '--fail-rate',
  failStatus: '--fail-status',
  stallRate: '--stall-rate',
  dieAfter: '--die-after',
  dieRate: '--die-rate',
  malformedRate: '--malformed-rate',
  name: '--name',
  seed: '--seed',
};

const NUMBER = /^\s*\d+(\.\d+)?\s*$/;
const INTEGER = /^\s*\d+\s*$/;

/**
 * Validates raw flag values (commander gives strings, tests may give numbers).
 * Throws a MockOptionsError listing every bad flag, each naming the flag and what was expected.
 */
export function parseMockOptions(raw: Record<string, unknown>): MockOptions {
  const problems: string[] = [];
  for (const key of Object.keys(raw)) {
    if (!(key in FLAG)) problems.push(`unknown mock option "${key}"`);
  }
  const value = (key: keyof MockOptions): unknown => raw[key] ?? DEFAULTS[key];
  const fail = (key: keyof MockOptions, expected: string): undefined => {
    problems.push(`${FLAG[key]} ${JSON.stringify(String(value(key)))}: expected ${expected}`);
    return undefined;
  };

  const number = (key: keyof MockOptions, pattern: RegExp, min: number, max: number, expected: string) => {
    const text = String(value(key));
    const n = Number(text);
    return pattern.test(text) && n >= min && n <= max ? n : fail(key, expected);
  };
  const rate = (key: keyof MockOptions) => number(key, NUMBER, 0, 1, 'a share from 0 to 1, like 0.05') ?? 0;

  const options: MockOptions = {
    protocol: MOCK_PROTOCOLS.find((p) => p === value('protocol')) ?? fail('protocol', MOCK_PROTOCOLS.join(', ')) ?? 'openai',
    host: text('host') ?? '127.0.0.1',
    port: number('port', INTEGER, 0, 65535, 'an integer from 0 to 65535') ?? 0,
    ttftMs: range('ttftMs') ?? { min: 0, max: 0 },
    tokensPerS: number('tokensPerS', NUMBER, 0, 1_000_000, 'tokens per second, 0 for no pacing') ?? 0,
    tokens: number('tokens', INTEGER, 0, 1_000_000, 'an integer from 0 to 1000000') ?? 20,
    failRate: rate('failRate'),
    // 1xx are informational, never a final answer, so they cannot stand for a failure.
    failStatus: number('failStatus', INTEGER, 200, 599, 'an HTTP status from 200 to 599, like 503') ?? 503,
    stallRate: rate('stallRate'),
    dieAfter: value('dieAfter') === undefined ? undefined : number('dieAfter', INTEGER, 0, 1_000_000, 'a number of content chunks, like 2'),
    dieRate: value('dieRate') === undefined ? (value('dieAfter') === undefined ? 0 : 1) : rate('dieRate'),
    malformedRate: rate('malformedRate'),
    name: text('name') ?? 'mock',
    seed: value('seed') === undefined ? undefined : number('seed', INTEGER, 0, 2 ** 32 - 1, 'an integer from 0 to 4294967295'),
  };
  if (problems.length > 0) throw new MockOptionsError(problems);
  return options;

  function text(key: 'host' | 'name'): string | undefined {
    const v = value(key);
    return typeof v === 'string' && v.trim() !== '' && !/[\r\n]/.test(v) ? v.trim() : fail(key, 'a non-empty single-line text');
  }

  function range(key: 'ttftMs'): { min: number; max: number } | undefined {
    const expected = 'milliseconds like 200, or a uniform range like 200:1500';
    const parts = String(value(key)).split(':');
    if (parts.length > 2 || !parts.every((p) => NUMBER.test(p))) return fail(key, expected);
    const [min, max = min] = parts.map(Number);
    return min <= max ? { min, max } : fail(key, `${expected} (min <= max)`);
  }
}
