import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clientSetup } from '../../../../src/cli/exec-env.js';
import { ConfigError } from '../../../../src/config/errors.js';
import { loadConfigText } from '../../../../src/config/load.js';
import { tierFileText } from '../../../../src/init/tier-file.js';
import { CLOUD_PROVIDERS } from '../../../../src/init/cloud-keys.js';
import { captureCredential, missingCredential } from '../../../../src/protocols/core/credential.js';
import { clientCodec } from '../../../../src/protocols/registry.js';
import { redactSecrets } from '../../../../src/providers/redact-secrets.js';

const messages = clientCodec('messages').credential;
const chat = clientCodec('chat').credential;
const LOGIN = 'sk-ant-oat01-unit-login';

function fileWith(providerType: string, server = ''): string {
  return `version: 1
${server}providers:
  local:
    type: openai
    base_url: http://127.0.0.1:11434/v1
  own:
    type: ${providerType}
    base_url: ${providerType === 'openai' ? 'https://api.openai.com/v1' : providerType === 'ollama' ? 'http://10.0.0.5:11434' : 'https://api.anthropic.com'}
    api_key: from_client
routes:
  chat:
    aliases: ["claude-*"]
    tiers:
      - { name: local, provider: local, model: m }
      - { name: own, provider: own, model: claude-sonnet-4-5 }
`;
}

describe('captureCredential', () => {
  it('takes Authorization or x-api-key as received, with the headers of its API', () => {
    const login = captureCredential({ authorization: `Bearer ${LOGIN}`, 'anthropic-beta': 'oauth-2025-04-20', 'openai-project': 'p' }, messages, undefined);
    expect(login?.api).toBe('anthropic');
    expect(login?.headers).toEqual({ authorization: `Bearer ${LOGIN}`, 'anthropic-beta': 'oauth-2025-04-20' });
    expect(login?.secrets).toEqual([LOGIN]);
    const key = captureCredential(
      { authorization: 'Bearer sk-proj-x1', 'openai-organization': 'org-1', 'openai-project': 'proj-1', 'anthropic-beta': 'b' },
      chat,
      undefined,
    );
    expect(key?.api).toBe('openai');
    expect(key?.headers).toEqual({ authorization: 'Bearer sk-proj-x1', 'openai-organization': 'org-1', 'openai-project': 'proj-1' });
    expect(captureCredential({ 'x-api-key': 'sk-ant-api03-k' }, messages, undefined)?.headers).toEqual({ 'x-api-key': 'sk-ant-api03-k' });
  });

  it('finds none in empty values (VS Code sends `Authorization: Bearer `), nor in headers of its API alone', () => {
    for (const authorization of ['Bearer ', 'Bearer', 'bearer   ', '', '  ']) expect(captureCredential({ authorization }, chat, undefined)).toBeUndefined();
    expect(captureCredential({ 'x-api-key': ' ' }, messages, undefined)).toBeUndefined();
    expect(captureCredential({ 'anthropic-beta': 'oauth-2025-04-20' }, messages, undefined)).toBeUndefined();
  });

  it("never takes llm-route's own token: with auth_token, only beside x-llm-route-token, and never a value equal to it", () => {
    const token = 'llm-route-token-1';
    expect(captureCredential({ authorization: `Bearer ${token}` }, messages, token)).toBeUndefined();
    expect(captureCredential({ authorization: `Bearer ${LOGIN}` }, messages, token)).toBeUndefined();
    expect(captureCredential({ 'x-llm-route-token': token, authorization: `Bearer ${token}`, 'x-api-key': token }, messages, token)).toBeUndefined();
    const own = captureCredential({ 'x-llm-route-token': token, authorization: `Bearer ${LOGIN}` }, messages, token);
    expect(own?.headers).toEqual({ authorization: `Bearer ${LOGIN}` });
    // Without auth_token the header means nothing: Authorization is the client's as always.
    expect(captureCredential({ 'x-llm-route-token': 'x', authorization: `Bearer ${LOGIN}` }, messages, undefined)?.secrets).toEqual([LOGIN]);
  });

  it("Gemini's: x-goog-api-key, else ?key= (sent on as x-goog-api-key), never Authorization; llm-route's token in either is no credential", () => {
    const gemini = clientCodec('gemini').credential;
    const byHeader = captureCredential({ 'x-goog-api-key': 'AIza-own', authorization: 'Bearer other' }, gemini, undefined);
    expect(byHeader?.api).toBe('gemini');
    expect(byHeader?.headers).toEqual({ 'x-goog-api-key': 'AIza-own' });
    expect(byHeader?.secrets).toEqual(['AIza-own']);
    const byQuery = captureCredential({}, gemini, undefined, new URLSearchParams('alt=sse&key=AIza-query'));
    expect(byQuery?.headers).toEqual({ 'x-goog-api-key': 'AIza-query' });
    expect(captureCredential({ authorization: 'Bearer AIza' }, gemini, undefined)).toBeUndefined();
    expect(captureCredential({ 'x-goog-api-key': '' }, gemini, undefined, new URLSearchParams('key='))).toBeUndefined();
    // With auth_token, the key is the token's place unless x-llm-route-token carries the token.
    expect(captureCredential({ 'x-goog-api-key': 'tok' }, gemini, 'tok')).toBeUndefined();
    expect(captureCredential({ 'x-goog-api-key': 'AIza-own', 'x-llm-route-token': 'tok' }, gemini, 'tok')?.headers).toEqual({ 'x-goog-api-key': 'AIza-own' });
    expect(captureCredential({ 'x-llm-route-token': 'tok' }, gemini, 'tok', new URLSearchParams('key=tok'))).toBeUndefined();
  });

  it('never shows its secrets when serialized or inspected', () => {
    const credential = captureCredential({ authorization: `Bearer ${LOGIN}` }, messages, undefined);
    expect(JSON.stringify({ headers: { credential } })).not.toContain(LOGIN);
    expect(inspect({ credential }, { depth: 5 })).not.toContain(LOGIN);
  });

  it('says why a from_client provider cannot be sent a request, and nothing for any other provider', () => {
    const config = loadConfigText(fileWith('anthropic'), 'x.yaml', {});
    const [local, own] = config.routes.get('chat')?.tiers ?? [];
    const login = captureCredential({ authorization: `Bearer ${LOGIN}` }, messages, undefined);
    const openaiKey = captureCredential({ authorization: 'Bearer sk-proj-1' }, chat, undefined);
    expect(missingCredential(local.provider, undefined)).toBeNull();
    expect(missingCredential(own.provider, login)).toBeNull();
    expect(missingCredential(own.provider, undefined)).toMatch(/carries no credential of the client/);
    expect(missingCredential(own.provider, openaiKey)).toMatch(/credential is for OpenAI's API; this api_key: from_client provider is type anthropic/);
  });

  it('redacts the client credential from upstream words with the provider key', () => {
    const config = loadConfigText(fileWith('anthropic'), 'x.yaml', {});
    const own = config.providers.get('own');
    if (!own) throw new Error('no provider');
    expect(redactSecrets(`bad token ${LOGIN} (again: ${LOGIN})`, own, [LOGIN])).toBe('bad token [redacted] (again: [redacted])');
  });
});

describe('api_key: from_client in the tier file', () => {
  it('is no key: the provider has none of its own and is marked from_client', () => {
    const config = loadConfigText(fileWith('anthropic'), 'x.yaml', {});
    const own = config.providers.get('own');
    expect(own?.from_client).toBe(true);
    expect(own?.api_key).toBeUndefined();
    expect(config.providers.get('local')?.from_client).toBeUndefined();
  });

  it('is refused on an ollama provider, naming the types that take it', () => {
    let error: unknown;
    try {
      loadConfigText(fileWith('ollama'), 'x.yaml', {});
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).format()).toContain('api_key: from_client is for anthropic, openai and gemini providers');
  });
});

describe('exec on a route with a from_client tier', () => {
  afterEach(() => vi.unstubAllEnvs());

  it("keeps Claude Code's own login: no ANTHROPIC_AUTH_TOKEN, ANTHROPIC_API_KEY and CLAUDE_CODE_OAUTH_TOKEN left alone", () => {
    const setup = clientSetup('http://127.0.0.1:5000', loadConfigText(fileWith('anthropic'), 'x.yaml', {}), ['claude']);
    expect(setup.env.ANTHROPIC_BASE_URL).toBe('http://127.0.0.1:5000');
    expect(setup.env.ANTHROPIC_MODEL).toBe('chat');
    expect(setup.env.ANTHROPIC_AUTH_TOKEN).toBeUndefined();
    expect(setup.env.ANTHROPIC_CUSTOM_HEADERS).toBeUndefined();
    expect(setup.unset).toEqual([]);
    expect(Object.keys(setup.env)).not.toContain('CLAUDE_CODE_OAUTH_TOKEN');
    expect(Object.keys(setup.env)).not.toContain('ANTHROPIC_API_KEY');
  });

  it("sends llm-route's token in x-llm-route-token (ANTHROPIC_CUSTOM_HEADERS, after the user's own)", () => {
    vi.stubEnv('ANTHROPIC_CUSTOM_HEADERS', 'x-team: blue');
    const config = loadConfigText(fileWith('anthropic', 'server:\n  auth_token: tok-1234\n'), 'x.yaml', {});
    const setup = clientSetup('http://127.0.0.1:5000', config, ['claude']);
    expect(setup.env.ANTHROPIC_AUTH_TOKEN).toBeUndefined();
    expect(setup.env.ANTHROPIC_CUSTOM_HEADERS).toBe('x-team: blue\nx-llm-route-token: tok-1234');
  });

  // A gemini provider needs its profile (the wire half of Gemini's work): until it is built here, this waits.
  it("gives Gemini CLI the user's own GEMINI_API_KEY for a from_client gemini provider, and the token in GEMINI_CLI_CUSTOM_HEADERS", () => {
    vi.stubEnv('GEMINI_API_KEY', 'AIza-users-own');
    vi.stubEnv('GEMINI_CLI_CUSTOM_HEADERS', 'x-team: blue');
    const config = loadConfigText(fileWith('gemini', 'server:\n  auth_token: tok-1234\n'), 'x.yaml', {});
    const setup = clientSetup('http://127.0.0.1:5000', config, ['gemini', '-p', 'hi']);
    expect(setup.env).toMatchObject({ GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:5000', GEMINI_API_KEY: 'AIza-users-own', GEMINI_MODEL: 'chat' });
    expect(setup.env.GEMINI_CLI_CUSTOM_HEADERS).toBe('x-team: blue, x-llm-route-token: tok-1234');
    expect(setup.geminiRoute).toBe('chat');
    // Without a from_client gemini provider the user's key stays home: the token is the key.
    const plain = clientSetup('http://127.0.0.1:5000', loadConfigText(fileWith('openai', 'server:\n  auth_token: tok-1234\n'), 'x.yaml', {}), ['gemini']);
    expect(plain.env.GEMINI_API_KEY).toBe('tok-1234');
    expect(plain.env.GEMINI_CLI_CUSTOM_HEADERS).toBeUndefined();
  });

  it("gives Codex the user's own OPENAI_API_KEY for a from_client OpenAI provider, and the token in a header read from its environment", () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-proj-users-own');
    const config = loadConfigText(fileWith('openai', 'server:\n  auth_token: tok-1234\n'), 'x.yaml', {});
    const setup = clientSetup('http://127.0.0.1:5000', config, ['codex', 'exec', 'hi']);
    expect(setup.env.LLM_ROUTE_API_KEY).toBe('sk-proj-users-own');
    expect(setup.env.LLM_ROUTE_TOKEN).toBe('tok-1234');
    expect(setup.command).toContain('model_providers.llm-route.env_http_headers={"x-llm-route-token"="LLM_ROUTE_TOKEN"}');
    expect(setup.command.join(' ')).not.toContain('tok-1234');
    // Claude Code is not concerned: the token as today, its own key unset.
    expect(setup.env.ANTHROPIC_AUTH_TOKEN).toBe('tok-1234');
    expect(setup.unset).toEqual(['ANTHROPIC_API_KEY']);
  });

  it('changes nothing for a tier file without one', () => {
    const config = loadConfigText(fileWith('anthropic').replace('api_key: from_client', 'api_key: sk-ant-file-key'), 'x.yaml', {});
    const setup = clientSetup('http://127.0.0.1:5000', config, ['claude']);
    expect(setup.env.ANTHROPIC_AUTH_TOKEN).toBe('llm-route');
    expect(setup.unset).toEqual(['ANTHROPIC_API_KEY']);
  });
});

describe('init', () => {
  const server = { label: 'Ollama', type: 'openai' as const, baseUrl: 'http://127.0.0.1:11434/v1', models: ['qwen2.5:7b'] };

  it('offers the Claude plan as a commented provider and tier when no ANTHROPIC_API_KEY is set', () => {
    const text = tierFileText([server] as never, []);
    expect(text).toContain('#   api_key: from_client');
    expect(text).toContain('# - { name: claude, provider: claude, model: "claude-sonnet-4-5" }');
    const config = loadConfigText(text, 'x.yaml', {});
    expect(config.providers.has('claude')).toBe(false);
    // Uncommented, it is a working tier file with the plan as the fallback.
    const uncommented = text
      .split('\n')
      .map((line) => line.replace(/^( {2})# {1,2}(claude:| {2}type: anthropic| {2}base_url: "https:\/\/api\.anthropic| {2}api_key: from_client)/, '$1$2'))
      .map((line) => line.replace(/^( {6})# (- \{ name: claude)/, '$1$2'))
      .join('\n');
    const tiers = loadConfigText(uncommented, 'x.yaml', {}).routes.get('chat')?.tiers;
    expect(tiers?.map((t) => [t.name, t.provider.from_client ?? false])).toEqual([
      ['ollama', false],
      ['claude', true],
    ]);
  });

  it('offers nothing of the kind when ANTHROPIC_API_KEY is set', () => {
    const anthropic = CLOUD_PROVIDERS.filter((cloud) => cloud.envVar === 'ANTHROPIC_API_KEY');
    expect(tierFileText([server] as never, anthropic)).not.toContain('from_client');
  });
});
