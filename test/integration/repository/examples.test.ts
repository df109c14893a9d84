import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { Provider } from '../../../src/config/schema.js';

const dir = join(import.meta.dirname, '../../../examples');
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
const env = { OPENAI_API_KEY: 'sk-example', ANTHROPIC_API_KEY: 'sk-ant-example', GEMINI_API_KEY: 'gemini-example' };

describe('examples/', () => {
  it('holds the documented tier files', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'ollama-then-openai.yaml',
        'vllm-then-openai.yaml',
        'llamacpp-then-openai.yaml',
        'canary-rollback.yaml',
        'demo.yaml',
        'claude-code.yaml',
        'claude-code-subscription.yaml',
        'codex.yaml',
        'gemini-cli.yaml',
        'ollama-native.yaml',
        'shared-redis.yaml',
      ]),
    );
  });

  it('llamacpp-then-openai.yaml: a local llama-server started if needed, then the cloud', () => {
    const config = loadConfig(join(dir, 'llamacpp-then-openai.yaml'), { ...env, LLAMA_MODEL: '/m/qwen.gguf' });
    const llama = config.providers.get('llamacpp');
    expect(llama).toMatchObject({ base_url: 'http://127.0.0.1:8080/v1', local: true, health: { warmup: true, interval_ms: 10000 } });
    expect(llama?.start?.command).toBe('llama-server -m /m/qwen.gguf --alias local --port 8080 -c 8192 --jinja');
    const [local, cloud] = config.routes.get('chat')!.tiers;
    expect(local).toMatchObject({ name: 'local', model: 'local', retry: { attempts: 1 } });
    expect(cloud).toMatchObject({ name: 'cloud', provider: { name: 'openai' } });
  });

  it('fit-small-local-then-cloud.yaml: a small-window local tier with its limits in front of a cloud tier', () => {
    const config = loadConfig(join(dir, 'fit-small-local-then-cloud.yaml'), env);
    const [local, cloud] = config.routes.get('claude')!.tiers;
    expect(local).toMatchObject({
      name: 'local',
      provider: { type: 'ollama' },
      fit: { context: 16384, max_prompt_tokens: 12000, vision: false, tools: 'auto' },
    });
    expect(cloud).toMatchObject({ name: 'cloud', provider: { type: 'anthropic' }, fit: { context: 200000, vision: 'auto' } });
  });

  it("gemini-cli.yaml: Gemini CLI's model names reach a local Ollama tier, a gemini tier behind it, resumed on a stall; an embeddings route on Gemini", () => {
    const config = loadConfig(join(dir, 'gemini-cli.yaml'), env);
    const code = config.routes.get('code')!;
    expect(code).toMatchObject({ aliases: ['gemini-*'], on_break: 'resume', stall: { factor: 20, floor_ms: 2000, after: 16 } });
    expect(code.tiers.map((t) => [t.provider.type, t.model])).toEqual([
      ['ollama', 'qwen2.5-coder:7b'],
      ['gemini', 'gemini-2.5-flash'],
    ]);
    expect(config.routes.get('embed')).toMatchObject({ embedding: { space: 'gemini-embedding-001' }, tiers: [{ provider: { type: 'gemini' } }] });
  });

  it("claude-code-subscription.yaml: local first, the client's own login as the fallback, with no key in the environment", () => {
    const config = loadConfig(join(dir, 'claude-code-subscription.yaml'), {});
    const [local, plan] = config.routes.get('claude')!.tiers;
    expect(local).toMatchObject({ name: 'local', provider: { local: true } });
    expect(local.provider.from_client).toBeUndefined();
    expect(plan).toMatchObject({ name: 'plan', provider: { type: 'anthropic', base_url: 'https://api.anthropic.com', from_client: true } });
    expect(plan.provider.api_key).toBeUndefined();
  });

  it.each(files)('%s loads and has at least one route with tiers', (file) => {
    const config = loadConfig(join(dir, file), env);
    expect(config.routes.size).toBeGreaterThan(0);
    for (const route of config.routes.values()) expect(route.tiers.length).toBeGreaterThan(0);
  });

  it.each(files)('`llm-route validate` accepts %s', (file) => {
    const out = execFileSync(process.execPath, ['bin/llm-route.js', 'validate', '-c', join(dir, file)], {
      cwd: join(dir, '..'),
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    expect(out).toMatch(/^ok: /);
    expect(out).not.toContain('sk-example');
  });

  it('names the missing key in ollama-then-openai.yaml when OPENAI_API_KEY is unset', () => {
    expect(() => loadConfig(join(dir, 'ollama-then-openai.yaml'), {})).toThrow(/OPENAI_API_KEY/);
  });

  /** The text of a file's comments (what a reader is told to run), one line each. */
  const comments = (file: string): string =>
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .flatMap((line) => (line.includes('#') ? [line.slice(line.indexOf('#'))] : []))
      .join('\n');
  const isOllama = (provider: Provider): boolean => provider.type === 'ollama' || new URL(provider.base_url).port === '11434';

  it.each(files)('%s says how to get each local model it uses: `ollama pull MODEL`, or the command that serves it', (file) => {
    const config = loadConfig(join(dir, file), { ...env, LLAMA_MODEL: '/m/model.gguf' });
    const told = comments(file);
    for (const route of config.routes.values()) {
      for (const tier of route.tiers) {
        const { provider } = tier;
        if (!provider.local) continue;
        if (isOllama(provider)) expect(told, `${file}: tier ${tier.name}`).toContain(`ollama pull ${tier.model}`);
        // Any other local server: a comment that runs something on its port, or a start: command.
        else if (!provider.start) expect(told, `${file}: provider ${provider.name}`).toMatch(new RegExp(`--port ${new URL(provider.base_url).port}\\b`));
      }
    }
  });

  it("the Claude Code and Codex examples send Ollama its native API: its /v1 ignores num_ctx and cuts an agent's prompt silently", () => {
    const agentFiles = files.filter((file) => /^(claude-code|codex)/.test(file));
    expect(agentFiles.length).toBeGreaterThanOrEqual(4);
    for (const file of agentFiles) {
      const config = loadConfig(join(dir, file), env);
      for (const route of config.routes.values())
        for (const tier of route.tiers) if (isOllama(tier.provider)) expect(tier.provider.type, `${file}: tier ${tier.name}`).toBe('ollama');
    }
  });
});
