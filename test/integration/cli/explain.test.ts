import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPrivateCli, explainRunner } from '../../helpers/cli.js';
import { llamaProps, openaiServer } from '../../helpers/fit-servers.js';
import { useHarness } from '../../helpers/harness.js';
import { configYaml } from '../../helpers/proxy.js';

const h = useHarness();

interface Plan {
  route: string;
  protocol: string;
  prompt_tokens: number;
  tiers: Array<{ tier: string; decision: string; reason: string | null; context: number | null; need: number }>;
}

describe('the real CLI: llm-route explain FILE.json', () => {
  let cli: ReturnType<typeof buildPrivateCli>;
  beforeAll(() => {
    cli = buildPrivateCli();
  }, 60_000);
  afterAll(() => cli?.remove());

  const explain = explainRunner(() => cli, 'explain');

  async function servers() {
    const llama = await h.fake();
    llama.always(openaiServer({ '/props': llamaProps(1024) }));
    const cloud = await h.fake();
    cloud.always(openaiServer({ '/v1/models': { object: 'list', data: [{ id: 'cloud-model', object: 'model' }] } }));
    const yaml = configYaml({
      tiers: [
        { name: 'local', url: llama.url, model: 'tiny', extra: { vision: false } },
        { name: 'off', url: cloud.url, weight: 0 },
        { name: 'cloud', url: cloud.url },
      ],
    });
    return { llama, cloud, yaml };
  }

  it('--json: discovery runs, the long prompt skips the 1,024-token tier as too_long, and no model request goes out', async () => {
    const { llama, cloud, yaml } = await servers();
    const run = await explain(yaml, { model: 'chat', max_tokens: 100, messages: [{ role: 'user', content: 'word '.repeat(2000) }] }, ['--json']);
    expect(run.code, run.stderr).toBe(0);
    const plan = JSON.parse(run.stdout) as Plan;
    expect(plan).toMatchObject({ route: 'chat', protocol: 'chat' });
    expect(plan.prompt_tokens).toBeGreaterThan(1900);
    expect(plan.tiers).toEqual([
      {
        tier: 'local',
        decision: 'skip',
        reason: 'too_long',
        context: 1024,
        need: plan.prompt_tokens + 100,
        message: expect.stringMatching(/1024-token window \(llama\.cpp \/props\)/),
      },
      { tier: 'off', decision: 'skip', reason: 'weight', context: null, need: plan.prompt_tokens + 100, message: 'weight 0: switched off' },
      { tier: 'cloud', decision: 'try', reason: null, context: null, need: plan.prompt_tokens + 100, message: 'window unknown: sent without a pre-check' },
    ]);
    expect([...llama.requests, ...cloud.requests].filter((r) => r.url.includes('/chat/completions'))).toEqual([]);
    expect(llama.requests.map((r) => r.url)).toContain('/props');
  });

  it('an image for a vision: false tier: unsupported:vision; a short Anthropic body is guessed as messages and fits', async () => {
    const { yaml } = await servers();
    const image = await explain(
      yaml,
      {
        model: 'chat',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ],
          },
        ],
      },
      ['--json'],
    );
    expect((JSON.parse(image.stdout) as Plan).tiers[0]).toMatchObject({ decision: 'skip', reason: 'unsupported:vision' });
    const short = await explain(yaml, { model: 'chat', max_tokens: 64, system: 'be brief', messages: [{ role: 'user', content: 'hi' }] });
    expect(short.code, short.stderr).toBe(0);
    expect(short.stdout).toMatch(/^route "chat" \(messages\): \d+ prompt tokens/);
    expect(short.stdout).toMatch(/try\s+local\s+\(window 1024, needs \d+\): fits/);
  });

  it('an Ollama body: guessed from its own fields, or named with --protocol ollama; its images and num_predict count', async () => {
    const { yaml } = await servers();
    const body = { model: 'chat', options: { num_predict: 100 }, messages: [{ role: 'user', content: 'what?', images: ['iVBORw0KGgo='] }] };
    const guessed = await explain(yaml, body, ['--json']);
    expect(guessed.code, guessed.stderr).toBe(0);
    const plan = JSON.parse(guessed.stdout) as Plan;
    expect(plan.protocol).toBe('ollama');
    expect(plan.tiers[0]).toMatchObject({ tier: 'local', decision: 'skip', reason: 'unsupported:vision', need: plan.prompt_tokens + 100 });
    const named = await explain(yaml, { model: 'chat', messages: [{ role: 'user', content: 'hi' }] }, ['--protocol', 'ollama']);
    expect(named.code, named.stderr).toBe(0);
    expect(named.stdout).toMatch(/^route "chat" \(ollama\): \d+ prompt tokens/);
    const wrong = await explain(yaml, { model: 'chat', messages: [{ role: 'user', content: 'hi' }] }, ['--protocol', 'bogus']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--protocol must be one of chat, responses, messages, ollama, gemini');
  });

  it("a Gemini body: guessed from its contents, its route named with --route (Gemini's API names it in the path); its image and maxOutputTokens count", async () => {
    const { yaml } = await servers();
    const body = {
      contents: [{ role: 'user', parts: [{ text: 'what?' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] }],
      generationConfig: { maxOutputTokens: 100 },
    };
    const unnamed = await explain(yaml, body, ['--json']);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain('say which route with --route');
    const planned = await explain(yaml, body, ['--json', '--route', 'chat']);
    expect(planned.code, planned.stderr).toBe(0);
    const plan = JSON.parse(planned.stdout) as Plan;
    expect(plan.protocol).toBe('gemini');
    expect(plan.tiers[0]).toMatchObject({ tier: 'local', decision: 'skip', reason: 'unsupported:vision', need: plan.prompt_tokens + 100 });
  });

  it('a tier whose server answers nothing is still tried, as serve would: try, reason unreachable', async () => {
    const yaml = configYaml({ tiers: [{ name: 'gone', url: 'http://127.0.0.1:1/v1' }] });
    const run = await explain(yaml, { model: 'chat', messages: [{ role: 'user', content: 'hi' }] }, ['--json']);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as Plan).tiers).toEqual([expect.objectContaining({ tier: 'gone', decision: 'try', reason: 'unreachable' })]);
    const text = await explain(yaml, { model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(text.stdout).toMatch(/try\s+gone\s+\(window unknown, needs \d+\): its server did not answer discovery: serve still tries it/);
    expect(text.stdout).not.toMatch(/skip/);
  });

  it('when every tier is skipped: a one-line summary last, exit 1 (text and --json)', async () => {
    const { llama } = await servers();
    // Too long for the 1,024-token local tier; the other one switched off by weight.
    const onlyLocal = configYaml({
      tiers: [
        { name: 'local', url: llama.url, model: 'tiny' },
        { name: 'off', url: 'http://127.0.0.1:1/v1', weight: 0 },
      ],
    });
    const body = { model: 'chat', max_tokens: 100, messages: [{ role: 'user', content: 'word '.repeat(2000) }] };
    const text = await explain(onlyLocal, body);
    expect(text.code, text.stderr).toBe(1);
    const lines = text.stdout.split('\n');
    expect(lines.at(-1)).toBe('no tier would be tried (local: too_long, off: weight): serve would answer this request with an error');
    expect(lines.filter((l) => /^\s+skip\s/.test(l))).toHaveLength(2);
    const json = await explain(onlyLocal, body, ['--json']);
    expect(json.code).toBe(1);
    expect((JSON.parse(json.stdout) as Plan).tiers.map((t) => t.decision)).toEqual(['skip', 'skip']);
    expect(json.stderr).toBe('no tier would be tried (local: too_long, off: weight): serve would answer this request with an error\n');
  });

  it('exits 2 on bad input: not JSON, an unknown route, a body the protocol refuses', async () => {
    const { yaml } = await servers();
    const notJson = await explain(yaml, '{"model": ');
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/cannot read .* as JSON/);
    const unknown = await explain(yaml, { model: 'nope', messages: [] });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown route "nope" \(known: chat\)/);
    const invalid = await explain(yaml, { model: 'chat', messages: 'hello' });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/not a valid chat request/);
  });
  it("a from_client tier: skipped without the client's own credential, tried with it (given by --header)", async () => {
    const cloud = await h.fake();
    cloud.always(openaiServer({}));
    const yaml = configYaml({ tiers: [{ name: 'plan', url: `http://127.0.0.1:${cloud.port}`, type: 'anthropic', api_key: 'from_client' }] });
    const body = { model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
    const without = await explain(yaml, body, ['--json', '--protocol', 'messages']);
    expect(without.code).toBe(1);
    const skipped = (JSON.parse(without.stdout) as Plan).tiers[0];
    expect(skipped).toMatchObject({ tier: 'plan', decision: 'skip', reason: 'no_client_credential' });
    const withLogin = await explain(yaml, body, ['--json', '--protocol', 'messages', '--header', 'authorization: Bearer sk-ant-oat01-explain']);
    expect(withLogin.code, withLogin.stderr).toBe(0);
    const tried = (JSON.parse(withLogin.stdout) as Plan).tiers[0] as Plan['tiers'][number] & { message: string };
    expect(tried).toMatchObject({ tier: 'plan', decision: 'try', reason: null });
    expect(tried.message).toContain("sent the client's own key or login (api_key: from_client)");
    expect(withLogin.stdout + withLogin.stderr).not.toContain('sk-ant-oat01-explain');
  });

  it('an embeddings body: each input against the window; cut when the client allows it (Ollama), else too_long; nothing is sent', async () => {
    const box = await h.fake();
    box.always(openaiServer({}));
    const yaml = configYaml({
      route: 'embed',
      routeKeys: { kind: 'embeddings' },
      tiers: [{ name: 'box', url: box.url, model: 'nomic', extra: { context: 16 } }],
    });
    const body = { model: 'embed', input: ['short', 'word '.repeat(60).trim()] };
    const openai = await explain(yaml, body, ['--json']);
    expect(openai.code).toBe(1);
    const skipped = JSON.parse(openai.stdout) as Plan & { tiers: { message: string }[] };
    expect(skipped.protocol).toBe('chat');
    expect(skipped.tiers[0]).toMatchObject({ tier: 'box', decision: 'skip', reason: 'too_long', context: 16, need: 60 });
    expect(skipped.tiers[0].message).toContain('input 1 of 60 tokens does not fit tier "box"\'s 16-token window');
    const ollama = await explain(yaml, body, ['--json', '--protocol', 'ollama']);
    expect(ollama.code, ollama.stderr).toBe(0);
    expect((JSON.parse(ollama.stdout) as Plan).tiers[0]).toMatchObject({
      decision: 'try',
      message: '1 input(s) cut to its 16-token window (the client allows it)',
    });
    // Gemini's two shapes: :embedContent's one request and :batchEmbedContents' list, the route named with --route.
    const long = { content: { parts: [{ text: 'word '.repeat(60).trim() }] } };
    for (const gemini of [long, { requests: [{ content: { parts: [{ text: 'short' }] } }, long] }]) {
      const run = await explain(yaml, gemini, ['--json', '--protocol', 'gemini', '--route', 'embed']);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout) as Plan).toMatchObject({
        protocol: 'gemini',
        tiers: [{ decision: 'try', message: '1 input(s) cut to its 16-token window (the client allows it)' }],
      });
    }
    expect(box.requests.filter((r) => r.url.includes('/embeddings'))).toEqual([]);
  });
});
