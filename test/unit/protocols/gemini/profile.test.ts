import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../src/config/schema.js';
import type { ServerAnswer, ServerAsk } from '../../../../src/protocols/core/provider-profile.js';
import { geminiModelNames } from '../../../../src/protocols/gemini/profile.js';
import { profileOf } from '../../../../src/protocols/profiles.js';
import { tier } from '../../../helpers/config.js';
import { geminiModel } from '../../../helpers/gemini-upstream.js';

// What a `type: gemini` provider answers other rooms: its key header, where its model list and
// a model's limits are. test/integration/fit/ and control/ run the same against a fake Gemini
// server on a real socket.

const gemini = (fields: Partial<Provider> = {}): Provider =>
  ({ ...tier('t').provider, name: 'gemini', type: 'gemini', base_url: 'https://generativelanguage.googleapis.com', local: false, ...fields }) as Provider;

/** Answers each path from a table (404 elsewhere), recording what it was asked. */
function serverOf(table: Record<string, ServerAnswer>): { ask: ServerAsk; asked: string[] } {
  const asked: string[] = [];
  const ask: ServerAsk = async (url) => {
    asked.push(`${url.pathname}${url.search}`);
    return table[url.pathname] ?? { status: 404, json: undefined, message: 'not found' };
  };
  return { ask, asked };
}

describe('the gemini profile', () => {
  it("sends the provider's key as x-goog-api-key, never as a Bearer token; none when it has none", () => {
    const headers = profileOf({ type: 'gemini' }).checkHeaders(gemini({ api_key: 'AIza-test', headers: { 'x-extra': '1' } }));
    expect(headers).toEqual({ accept: 'application/json', 'x-extra': '1', 'x-goog-api-key': 'AIza-test' });
    expect(profileOf({ type: 'gemini' }).checkHeaders(gemini())).toEqual({ accept: 'application/json' });
  });

  it('lists models at /v1beta/models (the largest page), names without models/, each next page by its token', () => {
    const provider = gemini({ base_url: 'https://gw.example/google/' });
    const [list] = profileOf(provider).modelLists(provider);
    expect(`${list.url.pathname}${list.url.search}`).toBe('/google/v1beta/models?pageSize=1000');
    expect(list.names({ models: [{ name: 'models/gemini-2.5-flash' }, { name: 'models/gemini-2.5-pro' }], nextPageToken: 'Ch0' })).toEqual([
      'gemini-2.5-flash',
      'gemini-2.5-pro',
    ]);
    expect(list.nextPage?.({ models: [], nextPageToken: 'Ch0' }, list.url)?.search).toBe('?pageSize=1000&pageToken=Ch0');
    expect(list.nextPage?.({ models: [] }, list.url)).toBeUndefined();
    expect(geminiModelNames({})).toEqual([]);
    expect(geminiModelNames({ data: [{ id: 'gpt' }] })).toBeNull();
    expect(`${profileOf(provider).readiness(provider).list.search}`).toBe('?pageSize=1');
    expect(profileOf(provider).readiness(provider).probes).toEqual([]);
  });

  it("discovery reads the model's inputTokenLimit, outputTokenLimit and thinking at /v1beta/models/{model}", async () => {
    const entry = geminiModel('gemini-2.5-flash', 1048576, 65536);
    const server = serverOf({ '/v1beta/models/gemini-2.5-flash': { status: 200, json: entry, message: '' } });
    const onGemini = tier('g', { provider: gemini({ api_key: 'k' }), model: 'gemini-2.5-flash' });
    const [reader] = profileOf(onGemini.provider).discovery(onGemini.provider);
    expect(await reader.read(onGemini, server.ask)).toEqual({ source: 'gemini /v1beta/models', context: 1048576, outputLimit: 65536, thinking: true });
    expect(server.asked).toEqual(['/v1beta/models/gemini-2.5-flash']);
  });

  it('discovery: an unknown model documents nothing; a refused key is an error; a from_client provider is asked nothing', async () => {
    const onGemini = tier('g', { provider: gemini({ api_key: 'k' }), model: 'no-such-model' });
    const [reader] = profileOf(onGemini.provider).discovery(onGemini.provider);
    expect(await reader.read(onGemini, serverOf({}).ask)).toBeNull();
    const refused = serverOf({
      '/v1beta/models/no-such-model': { status: 400, json: { error: { code: 400 } }, message: 'API key not valid. Please pass a valid API key.' },
    });
    await expect(reader.read(onGemini, refused.ask)).rejects.toThrow('HTTP 400: API key not valid');
    expect(profileOf({ type: 'gemini' }).discovery(gemini({ from_client: true }))).toEqual([]);
  });

  it('a cloud: no loaded state, no load request, nothing cut silently, no window per request; its models reason', async () => {
    const profile = profileOf({ type: 'gemini' });
    const onGemini = tier('g', { provider: gemini() });
    const server = serverOf({});
    expect(await profile.loadedState(onGemini, server.ask)).toBeUndefined();
    expect(await profile.warm(onGemini, server.ask)).toEqual({ noLoad: 'gemini' });
    expect(server.asked).toEqual([]);
    expect([profile.truncatesSilently(gemini()), profile.windowPerRequest, profile.configuredWindow(onGemini)]).toEqual([false, false, undefined]);
    expect([profile.reasons, profile.genAiName, profile.credentialApi, profile.wire]).toEqual([true, 'gcp.gemini', 'gemini', 'gemini']);
  });
});
