import { describe, expect, it } from 'vitest';
import { geminiCliEnv, isGeminiCli, settingsFor, writeRunSettings } from '../../../src/cli/exec-gemini.js';

describe("exec's setup for Gemini CLI", () => {
  it('names the command gemini by its program, wherever it is', () => {
    expect(isGeminiCli('gemini')).toBe(true);
    expect(isGeminiCli('/opt/node_modules/.bin/gemini')).toBe(true);
    expect(isGeminiCli('gemini.cmd')).toBe(true);
    expect(isGeminiCli('geminix')).toBe(false);
  });

  it("gives it the proxy, a key and the route; the user's own key with llm-route's token in a header of its own", () => {
    expect(geminiCliEnv('http://127.0.0.1:9', 'local', 'llm-route', {})).toEqual({
      GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:9',
      GEMINI_API_KEY: 'llm-route',
      GEMINI_MODEL: 'local',
    });
    const own = geminiCliEnv('http://127.0.0.1:9', 'local', 'tok', { key: 'AIza-own', token: 'tok' });
    expect(own).toMatchObject({ GEMINI_API_KEY: 'AIza-own', GEMINI_CLI_CUSTOM_HEADERS: 'x-llm-route-token: tok' });
  });

  it("its settings choose the auth type that takes the base URL and point every model alias at the route, an administrator's settings kept", () => {
    const settings = JSON.parse(
      settingsFor('local', { ui: { theme: 'x' }, security: { folderTrust: { enabled: true }, auth: { enforcedType: 'gemini-api-key' } } }),
    );
    expect(settings.ui).toEqual({ theme: 'x' });
    expect(settings.security).toEqual({ folderTrust: { enabled: true }, auth: { enforcedType: 'gemini-api-key', selectedType: 'gemini-api-key' } });
    const overrides = settings.modelConfigs.customOverrides as Array<{ match: { model: string }; modelConfig: { model: string } }>;
    expect(overrides[0]).toEqual({ match: { model: 'base' }, modelConfig: { model: 'local@background' } });
    expect(overrides[1]).toEqual({ match: { model: 'chat-base' }, modelConfig: { model: 'local' } });
    expect(overrides.find((o) => o.match.model === 'chat-compression-default')?.modelConfig.model).toBe('local');
  });

  it('writes no settings file where Gemini CLI would skip it (a folder others may write, like /tmp)', () => {
    const written = writeRunSettings('local', { XDG_STATE_HOME: '/tmp/llm-route-unit-never-made' });
    expect(written).toEqual({ problem: expect.stringMatching(/others may write to \/tmp|not owned by root|does not run as root/) });
  });
});
