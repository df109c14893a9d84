import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../src/config/schema.js';
import type { ServerAnswer, ServerAsk } from '../../../src/protocols/core/provider-profile.js';
import { profileOf } from '../../../src/protocols/profiles.js';
import { tier } from '../../helpers/config.js';

// What each provider type's profile answers: where its server is asked, in what order, with
// which key header. The integration tests (test/integration/fit, hedging, control) run the
// same answers against fake servers on real sockets.

const provider = (type: Provider['type'], base_url: string, fields: Partial<Provider> = {}): Provider =>
  ({ ...tier('t').provider, name: type, type, base_url, ...fields }) as Provider;

const paths = (urls: readonly { url: URL }[]): string[] => urls.map(({ url }) => url.pathname);

/** A server that answers each path from a table (404 elsewhere), recording what it was asked. */
function serverOf(table: Record<string, unknown>): { ask: ServerAsk; asked: string[] } {
  const asked: string[] = [];
  const ask: ServerAsk = async (url, post) => {
    asked.push(`${post === undefined ? 'GET' : 'POST'} ${url.pathname}`);
    const json = table[url.pathname];
    return (json === undefined ? { status: 404, json: undefined, message: 'not found' } : { status: 200, json, message: '' }) satisfies ServerAnswer;
  };
  return { ask, asked };
}

describe('provider profiles', () => {
  it('an openai-type server: /health then /api/version, then {base_url}/models decides; Ollama on its usual port is asked as Ollama', () => {
    const llama = provider('openai', 'http://127.0.0.1:8080/v1');
    expect(paths(profileOf(llama).readiness(llama).probes)).toEqual(['/health', '/api/version']);
    expect(profileOf(llama).readiness(llama).list.pathname).toBe('/v1/models');
    expect(paths(profileOf(llama).modelLists(llama))).toEqual(['/v1/models', '/api/tags']);
    const ollamaV1 = provider('openai', 'http://127.0.0.1:11434/v1');
    expect(paths(profileOf(ollamaV1).readiness(ollamaV1).probes)).toEqual(['/api/version', '/health']);
    expect(paths(profileOf(ollamaV1).modelLists(ollamaV1))).toEqual(['/api/tags', '/v1/models']);
    expect(
      profileOf(ollamaV1)
        .discovery(ollamaV1)
        .map((reader) => reader.name),
    ).toEqual(['ollama']);
  });

  it('discovery: a local openai-type server is asked as vLLM, llama.cpp, LM Studio; a cloud one only for its model list; Anthropic for nothing', () => {
    const names = (p: Provider) =>
      profileOf(p)
        .discovery(p)
        .map((reader) => reader.name);
    expect(names(provider('openai', 'http://127.0.0.1:8080/v1'))).toEqual(['vllm', 'llamaCpp', 'lmStudio']);
    expect(names(provider('openai', 'https://api.openai.com/v1', { local: false }))).toEqual(['vllm']);
    expect(names(provider('anthropic', 'https://api.anthropic.com', { local: false }))).toEqual([]);
    expect(names(provider('ollama', 'http://127.0.0.1:11434'))).toEqual(['ollama']);
  });

  it('a behind-a-prefix base keeps its prefix: native paths sit beside the API root, lists under it', () => {
    const gateway = provider('openai', 'https://gw.example/llama/v1', { local: false });
    expect(paths(profileOf(gateway).readiness(gateway).probes)).toEqual(['/llama/health', '/llama/api/version']);
    expect(paths(profileOf(gateway).modelLists(gateway))).toEqual(['/llama/v1/models', '/llama/api/tags']);
  });

  it('keys: a Bearer for openai and ollama types, x-api-key with anthropic-version for Anthropic; none when there is none', () => {
    expect(profileOf({ type: 'openai' }).checkHeaders(provider('openai', 'http://h/v1', { api_key: 'sk-1' }))).toMatchObject({ authorization: 'Bearer sk-1' });
    const anthropic = profileOf({ type: 'anthropic' }).checkHeaders(provider('anthropic', 'https://api.anthropic.com', { api_key: 'sk-ant' }));
    expect(anthropic).toMatchObject({ 'x-api-key': 'sk-ant', 'anthropic-version': '2023-06-01' });
    expect(anthropic.authorization).toBeUndefined();
    expect(profileOf({ type: 'ollama' }).checkHeaders(provider('ollama', 'http://127.0.0.1:11434')).authorization).toBeUndefined();
  });

  it("Ollama's loaded state is /api/ps, its implicit :latest counted; a local llama-swap's /running; a cloud server is not asked", async () => {
    const ollama = serverOf({ '/api/ps': { models: [{ name: 'qwen3:latest' }] } });
    const onOllama = tier('t', { provider: provider('ollama', 'http://127.0.0.1:11434'), model: 'qwen3' });
    expect(await profileOf(onOllama.provider).loadedState(onOllama, ollama.ask)).toEqual({ server: 'ollama', loaded: true });

    const swap = serverOf({ '/running': { running: [{ model: 'm', state: 'starting' }] } });
    const onSwap = tier('t', { provider: provider('openai', 'http://127.0.0.1:8080/v1'), model: 'm' });
    expect(await profileOf(onSwap.provider).loadedState(onSwap, swap.ask)).toEqual({ server: 'llama-swap', loaded: false });

    const cloud = serverOf({});
    const onCloud = tier('t', { provider: provider('openai', 'https://api.openai.com/v1', { local: false }), model: 'gpt' });
    expect(await profileOf(onCloud.provider).loadedState(onCloud, cloud.ask)).toBeUndefined();
    expect(cloud.asked).toEqual([]);
    // A tier check asks it too only where one request of the server's own API says it.
    const oneAsk = (p: Provider) => profileOf(p).loadedInOneAsk(p);
    expect([onOllama.provider, provider('openai', 'http://127.0.0.1:11434/v1'), onSwap.provider].map(oneAsk)).toEqual([true, true, false]);
  });

  it("warm: Ollama's load request; llama.cpp's router only when not loaded; a server with none is named", async () => {
    const ollama = serverOf({ '/api/generate': { done: true, done_reason: 'load' } });
    const onOllama = tier('t', { provider: provider('ollama', 'http://127.0.0.1:11434'), model: 'qwen3', ollama: { keep_alive: '30m' } });
    expect(await profileOf(onOllama.provider).warm(onOllama, ollama.ask)).toMatchObject({ status: 200, loadedNow: true });
    expect(ollama.asked).toEqual(['POST /api/generate']);

    const router = serverOf({ '/models': { data: [{ id: 'm', status: { value: 'unloaded' } }] }, '/models/load': { success: true } });
    const onRouter = tier('t', { provider: provider('openai', 'http://127.0.0.1:8080/v1'), model: 'm' });
    expect(await profileOf(onRouter.provider).warm(onRouter, router.ask)).toMatchObject({ status: 200 });
    expect(router.asked.at(-1)).toBe('POST /models/load');

    const anthropic = tier('t', { provider: provider('anthropic', 'https://api.anthropic.com', { local: false }) });
    expect(await profileOf(anthropic.provider).warm(anthropic, serverOf({}).ask)).toEqual({ noLoad: 'anthropic' });
  });

  it('what its models do: silent truncation on Ollama and local openai-type servers, a window per request on Ollama, reasoning on Anthropic', () => {
    expect(profileOf({ type: 'ollama' }).truncatesSilently(provider('ollama', 'http://10.0.0.2:11434'))).toBe(true);
    expect(profileOf({ type: 'openai' }).truncatesSilently(provider('openai', 'http://127.0.0.1:8080/v1'))).toBe(true);
    expect(profileOf({ type: 'openai' }).truncatesSilently(provider('openai', 'https://api.openai.com/v1', { local: false }))).toBe(false);
    expect(profileOf({ type: 'anthropic' }).truncatesSilently(provider('anthropic', 'http://127.0.0.1:9000'))).toBe(false);
    expect([profileOf({ type: 'ollama' }).windowPerRequest, profileOf({ type: 'openai' }).windowPerRequest]).toEqual([true, false]);
    expect(profileOf({ type: 'ollama' }).configuredWindow(tier('t', { ollama: { num_ctx: 8192 } }))).toBe(8192);
    expect([profileOf({ type: 'anthropic' }).reasons, profileOf({ type: 'openai' }).reasons]).toEqual([true, false]);
  });
});
