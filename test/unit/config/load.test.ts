import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runValidate } from '../../../src/cli/validate.js';
import { expandString } from '../../../src/config/env.js';
import { ConfigError, formatPath, formatProblem } from '../../../src/config/errors.js';
import { loadConfig, loadConfigText, resolveConfigPath } from '../../../src/config/load.js';
import { closestMatch } from '../../../src/config/suggest.js';
import { problemsOf } from '../../helpers/config.js';

const SPEC_EXAMPLE = `version: 1
server:
  host: 127.0.0.1
  port: 4141
  auth_token: \${LLM_ROUTE_TOKEN:-}
  max_body_bytes: 10485760
providers:
  ollama:
    type: openai
    base_url: http://127.0.0.1:11434/v1
  openai:
    type: openai
    base_url: https://api.openai.com/v1
    api_key: \${OPENAI_API_KEY}
routes:
  chat:
    tiers:
      - name: local
        provider: ollama
        model: qwen2.5:7b
        timeouts: { connect_ms: 1000, ttft_ms: 2500, idle_ms: 10000, total_ms: 300000 }
      - name: cloud
        provider: openai
        model: gpt-4o-mini
        weight: 100
        retry: { attempts: 2, base_ms: 250, max_ms: 4000 }
`;

const SECRET = 'sk-test-0123456789abcdef';

/** A minimal valid file with `body` spliced in under routes.chat's first tier. */
function withTier(extra: string): string {
  return `version: 1
providers:
  ollama: { type: openai, base_url: "http://127.0.0.1:11434/v1" }
routes:
  chat:
    tiers:
      - provider: ollama
        model: m
${extra}`;
}

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'llm-route-config-'));
  tempDirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

function errorText(text: string, env: Record<string, string> = {}): string {
  return problemsOf(text, env).map(formatProblem).join('\n');
}

describe('loading a valid tier file', () => {
  it('resolves the spec example with defaults merged', () => {
    const dir = tempDir();
    const file = join(dir, 'llm-route.yaml');
    writeFileSync(file, SPEC_EXAMPLE);
    const config = loadConfig(file, { OPENAI_API_KEY: SECRET });

    expect(config.file).toBe(file);
    expect(config.server).toEqual({
      host: '127.0.0.1',
      port: 4141,
      max_body_bytes: 10485760,
      max_header_bytes: 16384,
      request_timeout_ms: 30000,
      max_streams: 1000,
      allowed_hosts: [],
      cors_origins: [],
    });
    expect(config.server.auth_token).toBeUndefined(); // ${LLM_ROUTE_TOKEN:-} means "no token"
    expect([...config.providers.keys()]).toEqual(['ollama', 'openai']);
    expect(config.providers.get('openai')).toMatchObject({ name: 'openai', api_key: SECRET });
    expect(config.providers.get('ollama')?.api_key).toBeUndefined();

    const chat = config.routes.get('chat');
    expect(chat?.deadline_ms).toBe(120_000);
    const [local, cloud] = chat?.tiers ?? [];
    expect(local).toMatchObject({ route: 'chat', name: 'local', index: 0, model: 'qwen2.5:7b', weight: 100 });
    expect(local.provider).toBe(config.providers.get('ollama'));
    expect(local.timeouts).toEqual({
      connect_ms: 1000,
      ttft_ms: 2500,
      idle_ms: 10000,
      total_ms: 300000,
      stream_max_ms: 0,
      cold_ttft_ms: 2500,
      cold_after_ms: 300000,
    });
    expect(local.retry).toEqual({ attempts: 2, base_ms: 250, max_ms: 4000 });
    expect(cloud).toMatchObject({ name: 'cloud', index: 1 });
    expect(cloud.timeouts).toEqual({
      connect_ms: 2000,
      ttft_ms: 10000,
      idle_ms: 30000,
      total_ms: 300000,
      stream_max_ms: 0,
      cold_ttft_ms: 10000,
      cold_after_ms: 300000,
    });
  });

  it('merges defaults ← route ← tier for timeouts and retry, and names a tier after its provider', () => {
    const config = loadConfigText(
      `version: 1
providers:
  ollama: { type: openai, base_url: "http://127.0.0.1:11434/v1" }
routes:
  chat:
    timeouts: { ttft_ms: 3000, idle_ms: 5000 }
    retry: { attempts: 3 }
    deadline_ms: 60000
    tiers:
      - provider: ollama
        model: m
        timeouts: { idle_ms: 7000 }
        retry: { max_ms: 1000 }
`,
      'llm-route.yaml',
      {},
    );
    const [tier] = config.routes.get('chat')?.tiers ?? [];
    expect(tier.name).toBe('ollama');
    expect(tier.timeouts).toEqual({
      connect_ms: 2000,
      ttft_ms: 3000,
      idle_ms: 7000,
      total_ms: 300000,
      stream_max_ms: 0,
      cold_ttft_ms: 3000,
      cold_after_ms: 300000,
    });
    expect(tier.retry).toEqual({ attempts: 3, base_ms: 250, max_ms: 1000 });
    expect(config.routes.get('chat')?.deadline_ms).toBe(60000);
  });
});

describe('control-plane keys', () => {
  const yaml = `version: 1
server: { admin_token: "adm" }
providers:
  ollama:
    type: openai
    base_url: "http://127.0.0.1:11434/v1"
    health: { interval_ms: 5000, ttft_check: true }
    start: { command: "ollama serve" }
  cloud: { type: openai, base_url: "https://api.example.com/v1" }
routes:
  chat:
    circuit: { failures: 5 }
    tiers:
      - provider: ollama
        model: m
        timeouts: { ttft_ms: 2000, cold_ttft_ms: 30000 }
        circuit: { cooldown_ms: 500 }
      - provider: cloud
        model: c
        weight: 5
        rollback: { ttft_p99_ms: 3000, error_rate: 0.2 }
`;

  it('resolves health, warm-up, start, circuit and rollback with their defaults', () => {
    const config = loadConfigText(yaml, 'llm-route.yaml', {});
    expect(config.server.admin_token).toBe('adm');
    const ollama = config.providers.get('ollama');
    expect(ollama?.local).toBe(true);
    expect(ollama?.health).toEqual({ interval_ms: 5000, timeout_ms: 2000, ttft_check: true, warmup: true, keepalive_ms: 240000 });
    expect(ollama?.start).toEqual({ command: 'ollama serve', ready_timeout_ms: 60000 });
    const cloud = config.providers.get('cloud');
    expect(cloud?.local).toBe(false);
    expect(cloud?.health.warmup).toBe(false); // warm-ups are for local models only
    const [local, remote] = config.routes.get('chat')?.tiers ?? [];
    expect(local.timeouts.cold_ttft_ms).toBe(30000);
    expect(local.circuit).toEqual({ failures: 5, cooldown_ms: 500, max_cooldown_ms: 8000, slow_ttft_ms: 1600 });
    expect(local.rollback).toBeNull();
    expect(remote.rollback).toEqual({ ttft_p99_ms: 3000, error_rate: 0.2, window_s: 60, min_requests: 20 });
    expect(remote.weight).toBe(5);
  });

  it('rejects a misspelt control key with a suggestion', () => {
    const problems = problemsOf(yaml.replace('error_rate: 0.2', 'eror_rate: 0.2'));
    expect(problems.map((p) => p.message).join('\n')).toContain('did you mean "error_rate"');
  });
});

describe('YAML syntax', () => {
  it('reports a syntax error with its line and column', () => {
    const problems = problemsOf('version: 1\nproviders:\n  a: [1, 2\nroutes: {}\n');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: 'llm-route.yaml', line: 4, col: 1 });
    expect(problems[0].message).toMatch(/^invalid YAML: /);
  });

  it('rejects duplicate keys, naming the key', () => {
    const [problem] = problemsOf('version: 1\nproviders: {}\nversion: 1\nroutes: {}\n');
    expect(problem).toMatchObject({ line: 3, col: 1 });
    expect(problem.message).toContain('duplicate key "version"');
  });

  it('hints at quoting ${...} inside flow maps', () => {
    const text = errorText('version: 1\nproviders:\n  a: { type: openai, base_url: ${URL} }\nroutes: {}\n');
    expect(text).toContain('quote ${...} inside { } maps');
  });
});

describe('schema problems', () => {
  it('reports several problems at once, in file order', () => {
    const problems = problemsOf(`version: 1
server:
  port: fast
providers:
  ollama: { type: openai, base_url: "ftp://x" }
routes:
  chat:
    tiers:
      - provider: ollama
        weight: 200
`);
    expect(problems.map((p) => [p.line, p.path])).toEqual([
      [3, 'server.port'],
      [5, 'providers.ollama.base_url'],
      [9, 'routes.chat.tiers[0].model'],
      [10, 'routes.chat.tiers[0].weight'],
    ]);
    expect(problems[0].message).toBe('expected an integer from 0 to 65535, got "fast"');
    expect(problems[1].message).toBe('expected an http:// or https:// URL, got "ftp://x"');
    expect(problems[2].message).toBe('missing key "model": expected a non-empty string');
    expect(problems[3].message).toBe('expected a number from 0 to 100, got 200');
  });

  it('points a missing key at the map that should hold it', () => {
    const [problem] = problemsOf(withTier('').replace('        model: m\n', ''));
    expect(problem).toMatchObject({ line: 7, col: 9, path: 'routes.chat.tiers[0].model' });
  });

  it('says what type was expected', () => {
    const [problem] = problemsOf(withTier('        timeouts: { ttft_ms: fast }\n'));
    expect(problem.message).toBe('expected a positive integer, got "fast"');
    expect(problem).toMatchObject({ line: 9, col: 30, path: 'routes.chat.tiers[0].timeouts.ttft_ms' });
  });

  it('suggests the key an unknown key was probably meant to be', () => {
    const [problem] = problemsOf(withTier('        timeouts: { ttft: 5 }\n'));
    expect(problem.message).toBe('unknown key "ttft" in routes.chat.tiers[0].timeouts; did you mean "ttft_ms"?');
    expect(problem).toMatchObject({ line: 9, col: 21, path: 'routes.chat.tiers[0].timeouts.ttft' });
  });

  it('reports a misspelt required key once, as a typo', () => {
    const problems = problemsOf(`version: 1
providers: {}
routes:
  chat:
    tierz: []
`);
    expect(problems).toHaveLength(1);
    expect(problems[0].message).toBe('unknown key "tierz" in routes.chat; did you mean "tiers"?');
    expect(problems[0]).toMatchObject({ line: 5, col: 5 });
  });

  it('lists the allowed keys when nothing is close', () => {
    const [problem] = problemsOf('version: 1\nproviders: {}\nroutes: {}\nbananas: 3\n');
    expect(problem.message).toBe(
      'unknown key "bananas" in the top level; expected one of: version, server, providers, routes, default_route, rules, savers, usage, budgets, idempotency, state, telemetry',
    );
  });

  it('explains an empty file', () => {
    const [problem] = problemsOf('# nothing yet\n');
    expect(problem.message).toMatch(/^the file is empty; expected a map with keys version/);
  });
});

describe('environment variables', () => {
  it('names the missing variable and the key that uses it', () => {
    const problems = problemsOf(SPEC_EXAMPLE, {});
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: 14, col: 14, path: 'providers.openai.api_key' });
    expect(problems[0].message).toContain('OPENAI_API_KEY is not set');
    expect(formatProblem(problems[0])).toContain('(at providers.openai.api_key)');
  });

  it('uses ${VAR:-default} and ${VAR:-} when the variable is unset', () => {
    const config = loadConfigText(
      `${withTier('').replace('model: m', 'model: ${MODEL:-qwen2.5:7b}')}server:\n  auth_token: \${TOKEN:-}\n`,
      'llm-route.yaml',
      {},
    );
    expect(config.routes.get('chat')?.tiers[0].model).toBe('qwen2.5:7b');
    expect(config.server.auth_token).toBeUndefined();
  });

  it('turns a whole-scalar integer substitution into a number, except for string fields', () => {
    const text = `${withTier('')}server:\n  port: \${PORT:-4141}\n`;
    expect(loadConfigText(text, 'f.yaml', {}).server.port).toBe(4141);
    expect(loadConfigText(text, 'f.yaml', { PORT: '8080' }).server.port).toBe(8080);
    const numericKey = text.replace('ollama: { type: openai,', 'ollama: { type: openai, api_key: "${KEY}",');
    expect(loadConfigText(numericKey, 'f.yaml', { KEY: '12345' }).providers.get('ollama')?.api_key).toBe('12345');
  });

  it('substitutes inside longer strings, never in keys, and $${ escapes', () => {
    expect(expandString('http://${HOST:-localhost}:${P}/v1', { P: '11434' }).text).toBe('http://localhost:11434/v1');
    expect(expandString('$${NOT_A_VAR}', {}).text).toBe('${NOT_A_VAR}');
    expect(expandString('${EMPTY}', { EMPTY: '' })).toMatchObject({ text: '', missing: [] });
    expect(expandString('${EMPTY:-x}', { EMPTY: '' }).text).toBe('x');
    expect(expandString('${1BAD}', {}).malformed).toEqual(['${1BAD}']);
    // The key stays "${NAME}" while the value becomes "ollama", so they no longer match.
    const keyed = withTier('').replace('ollama:', '"${NAME}":').replace('provider: ollama', 'provider: "${NAME}"');
    expect(problemsOf(keyed, { NAME: 'ollama' }).map((p) => p.message)).toEqual(['unknown provider "ollama"; defined providers: ${NAME}']);
  });
});

describe('cross-checks', () => {
  it('rejects an unknown provider and suggests the close one', () => {
    const [problem] = problemsOf(withTier('').replace('provider: ollama', 'provider: olama'));
    expect(problem.message).toBe('unknown provider "olama"; did you mean "ollama"?');
    expect(problem).toMatchObject({ line: 7, col: 19, path: 'routes.chat.tiers[0].provider' });
  });

  it('rejects duplicate tier names, explicit or defaulted', () => {
    const defaulted = problemsOf(withTier('      - provider: ollama\n        model: other\n'));
    expect(defaulted).toHaveLength(1);
    expect(defaulted[0].message).toContain('tier name "ollama"');
    expect(defaulted[0].message).toContain('give this tier a distinct `name`');
    expect(defaulted[0]).toMatchObject({ line: 9, path: 'routes.chat.tiers[1]' });

    const explicit = problemsOf(withTier('        name: a\n      - provider: ollama\n        model: other\n        name: a\n'));
    expect(explicit[0].message).toContain('duplicate tier name "a" in route "chat"');
    expect(explicit[0]).toMatchObject({ line: 12, path: 'routes.chat.tiers[1].name' });
  });

  it('hedge_ms: a positive number of ms on a route with a tier to hedge to', () => {
    expect(problemsOf(`${withTier('')}    hedge_ms: 500\n`).map((p) => p.message)).toEqual([
      'hedge_ms starts the next tier as well: a route with one tier has none to start',
    ]);
    expect(problemsOf(`${withTier('      - provider: ollama\n        model: n\n        name: b\n')}    hedge_ms: 0\n`).map((p) => p.path)).toEqual([
      'routes.chat.hedge_ms',
    ]);
    const two = loadConfigText(`${withTier('      - provider: ollama\n        model: n\n        name: b\n')}    hedge_ms: 800\n`, 'f.yaml', {});
    expect(two.routes.get('chat')?.hedge_ms).toBe(800);
    expect(loadConfigText(withTier(''), 'f.yaml', {}).routes.get('chat')?.hedge_ms).toBeNull();
  });

  it('rejects an empty route name', () => {
    const text = withTier('').replace('  chat:', '  "":');
    expect(problemsOf(text).map((p) => p.message)).toEqual(['a route name must not be empty']);
  });

  it('rejects route, tier and provider names a response header cannot carry (they go out in x-llm-route-*)', () => {
    expect(problemsOf(withTier('        name: "local→gpu"\n')).map((p) => [p.line, p.message])).toEqual([
      [9, 'tier name "local→gpu" has a character outside printable ASCII (names are sent in response headers); use letters, digits, - _ . :'],
    ]);
    expect(problemsOf(withTier('').replace('  chat:', '  "chat—fast":')).map((p) => p.message)).toEqual([
      'route name "chat—fast" has a character outside printable ASCII (names are sent in response headers); use letters, digits, - _ . :',
    ]);
    const provider = withTier('').replace('  ollama: {', '  "ollama\u00e9": {').replace('provider: ollama', 'provider: "ollama\u00e9"');
    expect(problemsOf(provider).map((p) => p.message)).toEqual([
      'provider name "ollamaé" has a character outside printable ASCII (names are sent in response headers); use letters, digits, - _ . :',
    ]);
    expect(() => loadConfigText(withTier('        name: "local gpu:0 (a.b_c-d)"\n'), 'llm-route.yaml', {})).not.toThrow();
  });
});

describe('secrets', () => {
  it('never puts an api_key value into an error message', () => {
    const text = `version: 1
providers:
  a: { type: openai, base_url: "\${OPENAI_API_KEY}", api_key: "\${OPENAI_API_KEY}" }
  b: { type: openai, base_url: "http://x", api_key: 12345678, apikey: ${SECRET} }
  c: { type: nope, base_url: "http://x", api_key: ${SECRET}x }
routes:
  chat:
    tiers: [{ provider: a, model: m, ttft: ${SECRET} }]
`;
    const problems = problemsOf(text, { OPENAI_API_KEY: SECRET });
    expect(problems.length).toBeGreaterThanOrEqual(4);
    const all = new ConfigError(problems).format();
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain('12345678');
    expect(all).toContain('providers.a.base_url');
  });
});

describe('config discovery', () => {
  it('prefers -c, then $LLM_ROUTE_CONFIG, then ./llm-route.yaml', () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, 'conf'));
    writeFileSync(join(cwd, 'llm-route.yaml'), '');
    writeFileSync(join(cwd, 'conf', 'from-env.yaml'), '');
    writeFileSync(join(cwd, 'conf', 'from-cli.yaml'), '');
    const env = { LLM_ROUTE_CONFIG: 'conf/from-env.yaml' };

    expect(resolveConfigPath('conf/from-cli.yaml', env, cwd)).toBe(join(cwd, 'conf', 'from-cli.yaml'));
    expect(resolveConfigPath(undefined, env, cwd)).toBe(join(cwd, 'conf', 'from-env.yaml'));
    expect(resolveConfigPath(undefined, {}, cwd)).toBe(join(cwd, 'llm-route.yaml'));
    expect(resolveConfigPath(undefined, { LLM_ROUTE_CONFIG: '' }, cwd)).toBe(join(cwd, 'llm-route.yaml'));
  });

  it('does not fall back when the named file is missing', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'llm-route.yaml'), '');
    expect(() => resolveConfigPath('missing.yaml', {}, cwd)).toThrow(/tier file not found \(given with -c\/--config\)/);
    expect(() => resolveConfigPath(undefined, { LLM_ROUTE_CONFIG: 'gone.yaml' }, cwd)).toThrow(/\$LLM_ROUTE_CONFIG/);
  });

  it('says where it looked when there is no file', () => {
    const cwd = tempDir();
    expect(() => resolveConfigPath(undefined, {}, cwd)).toThrow(ConfigError);
    expect(() => resolveConfigPath(undefined, {}, cwd)).toThrow(
      `no -c/--config was given, $LLM_ROUTE_CONFIG is not set, and ${join(cwd, 'llm-route.yaml')} does not exist`,
    );
    // And how to get one.
    expect(() => resolveConfigPath(undefined, {}, cwd)).toThrow('run `llm-route init` to write one for this machine');
    expect(() => resolveConfigPath('missing.yaml', {}, cwd)).toThrow(`\`llm-route init -c ${join(cwd, 'missing.yaml')}\` writes one`);
  });

  it('turns an unreadable file into a ConfigError', () => {
    const dir = tempDir();
    expect(() => loadConfig(dir, {})).toThrow(/cannot read the tier file: it is a directory/);
  });
});

describe('llm-route validate', () => {
  it('prints one summary line and returns 0 for a valid file', async () => {
    const dir = tempDir();
    const file = join(dir, 'llm-route.yaml');
    writeFileSync(file, SPEC_EXAMPLE.replace('${OPENAI_API_KEY}', 'literal'));
    const out = vi.spyOn(process.stdout, 'write').mockReturnValue(true);
    expect(await runValidate({ config: file })).toBe(0);
    expect(out).toHaveBeenCalledWith(`ok: ${file} — 1 route (chat: local → cloud), 2 providers\n`);
  });

  it('prints every problem to stderr and returns 2 for an invalid file', async () => {
    const dir = tempDir();
    const file = join(dir, 'llm-route.yaml');
    writeFileSync(file, 'version: 2\nproviders: {}\nroutes: {}\nextra: 1\n');
    const err = vi.spyOn(process.stderr, 'write').mockReturnValue(true);
    expect(await runValidate({ config: file })).toBe(2);
    const written = String(err.mock.calls[0]?.[0]);
    expect(written.trimEnd().split('\n')).toEqual([
      `${file}:1:10: expected version: 1, got 2 (at version)`,
      `${file}:4:1: unknown key "extra" in the top level; expected one of: version, server, providers, routes, default_route, rules, savers, usage, budgets, idempotency, state, telemetry (at extra)`,
    ]);
  });
});

describe('helpers', () => {
  it('finds close matches and ignores far ones', () => {
    expect(closestMatch('tierz', ['tiers', 'timeouts'])).toBe('tiers');
    expect(closestMatch('ttft', ['connect_ms', 'ttft_ms'])).toBe('ttft_ms');
    expect(closestMatch('Model', ['model'])).toBe('model');
    expect(closestMatch('bananas', ['version', 'routes'])).toBeUndefined();
  });

  it('formats paths and problems', () => {
    expect(formatPath(['routes', 'chat', 'tiers', 0, 'timeouts', 'ttft_ms'])).toBe('routes.chat.tiers[0].timeouts.ttft_ms');
    expect(formatPath(['routes', 'qwen2.5:7b'])).toBe('routes["qwen2.5:7b"]');
    expect(formatProblem({ file: 'f.yaml', line: 0, col: 0, path: '', message: 'gone' })).toBe('f.yaml: gone');
  });
});

describe('warnings speak English', () => {
  it('an anthropic / an ollama base_url with /v1 (not "a anthropic")', () => {
    const yaml = [
      'version: 1',
      'providers:',
      '  a: { type: anthropic, base_url: "https://api.anthropic.com/v1" }',
      '  o: { type: ollama, base_url: "http://127.0.0.1:11434/v1" }',
      'routes:',
      '  chat: { tiers: [{ provider: a, model: m }, { provider: o, model: m }] }',
      '',
    ].join('\n');
    const warnings = loadConfigText(yaml, 'llm-route.yaml', {}).warnings;
    expect(warnings.some((w) => w.includes('warning: an anthropic base_url usually has no /v1'))).toBe(true);
    expect(warnings.some((w) => w.includes('warning: an ollama base_url usually has no /v1'))).toBe(true);
  });
});
