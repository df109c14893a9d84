import { afterEach, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigText } from '../../../src/config/load.js';
import type { Tier } from '../../../src/config/schema.js';
import { loadedOf, readLoaded, resetLoadedModels } from '../../../src/health/loaded-models.js';
import { runProbe } from '../../../src/cli/probe.js';
import { healthyStream, type Script } from '../../helpers/fake-upstream.js';
import { llamaRouterModels, llamaSwapRunning, lmStudioModels, ollamaPs, ollamaServer, openaiServer, pathOf } from '../../helpers/fit-servers.js';
import { requestLog, useHarness, waitFor } from '../../helpers/harness.js';
import { chat } from '../../helpers/proxy.js';
import { streamWith } from '../../helpers/resume-clients.js';
import { WORDS } from '../../helpers/resume-scripts.js';
import { useTempDirs } from '../../helpers/usage-kit.js';
import { ManualClock } from '../../helpers/clock.js';

// Loaded or cold from the server (docs/hedging.md).

const h = useHarness();
const tempDir = useTempDirs();
afterEach(() => resetLoadedModels());

function tierAt(url: string, model: string, type: 'openai' | 'ollama' = 'openai'): Tier {
  const config = loadConfigText(
    stringify({ version: 1, providers: { p: { type, base_url: url } }, routes: { chat: { tiers: [{ provider: 'p', model }] } } }),
    'f.yaml',
    {},
  );
  return config.routes.get('chat')!.tiers[0];
}

const ask = (tier: Tier) => readLoaded(tier, { signal: AbortSignal.timeout(3000), dispatcher: undefined });

describe('what each server says is loaded', () => {
  it('Ollama /api/ps, llama-swap /running, llama.cpp router /models, LM Studio /api/v0/models; nothing from a server that documents none', async () => {
    const ollama = await h.fake();
    ollama.always(ollamaServer('{}', ollamaPs('qwen3:8b', 8192)));
    expect(await ask(tierAt(ollama.url, 'qwen3:8b', 'ollama'))).toBe(true);
    expect(await ask(tierAt(ollama.url, 'llama3.2', 'ollama'))).toBe(false);

    const swap = await h.fake();
    swap.always(
      openaiServer({
        '/running': llamaSwapRunning([
          { model: 'qwen', state: 'ready' },
          { model: 'gemma', state: 'starting' },
        ]),
      }),
    );
    expect(await ask(tierAt(swap.url, 'qwen'))).toBe(true);
    expect(await ask(tierAt(swap.url, 'gemma'))).toBe(false);
    expect(await ask(tierAt(swap.url, 'mistral'))).toBe(false);

    const router = await h.fake();
    router.always(
      openaiServer({
        '/models': llamaRouterModels([
          { id: 'a', value: 'loaded' },
          { id: 'b', value: 'loading' },
          { id: 'c', value: 'unloaded' },
        ]),
      }),
    );
    expect(await Promise.all(['a', 'b', 'c'].map((m) => ask(tierAt(router.url, m))))).toEqual([true, false, false]);

    const lms = await h.fake();
    lms.always(openaiServer({ '/api/v0/models': lmStudioModels() }));
    expect(await ask(tierAt(lms.url, 'meta-llama-3.1-8b-instruct'))).toBe(true);
    expect(await ask(tierAt(lms.url, 'qwen2-vl-7b-instruct'))).toBe(false);

    // A single-model llama-server: /models without a status says nothing.
    const plain = await h.fake();
    plain.always(openaiServer({ '/models': { object: 'list', data: [{ id: 'tiny', object: 'model' }] } }));
    expect(await ask(tierAt(plain.url, 'tiny'))).toBeUndefined();
  });
});

/** llama-swap in front of a model whose state the test sets; chat completions stream after `delayMs`. */
function swapServer(state: { value: 'ready' | 'starting' }, delayMs: number): Script {
  return async (ctx) => {
    const path = pathOf(ctx);
    if (path === '/running') return ctx.json(200, llamaSwapRunning([{ model: 'local-model', state: state.value }]));
    if (path.endsWith('/chat/completions')) {
      await ctx.wait(delayMs);
      return healthyStream(WORDS)(ctx);
    }
    return ctx.json(404, { error: { message: `no ${path}` } });
  };
}

describe("the server's word sets the TTFT budget, both ways", () => {
  const spec = (local: string, cloud: string) => ({
    tiers: [
      { name: 'local', url: local, timeouts: { ttft_ms: 300, cold_ttft_ms: 5000, cold_after_ms: 600_000 } },
      { name: 'cloud', url: cloud },
    ],
  });

  it('a model the server says is still starting gets cold_ttft_ms (it loads, then answers)', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    const state = { value: 'starting' as 'ready' | 'starting' };
    local.always(swapServer(state, 800));
    cloud.always(healthyStream(['from cloud']));
    const proxy = await h.proxy(spec(local.url, cloud.url));
    proxy.server.startActiveChecks();
    await waitFor(() => loadedOf(tierAt(local.url, 'local-model')) === false, 3000, 'the loaded state');
    const seen = await streamWith('chat', proxy);
    expect(seen.text).toBe(WORDS.join(''));
    expect((await requestLog(proxy)).attempts).toEqual([expect.objectContaining({ tier: 'local', outcome: 'ok' })]);
  });

  it('a model the server lists as loaded gets ttft_ms before its first answer (the guess would say cold)', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always(swapServer({ value: 'ready' }, 800));
    cloud.always(healthyStream(['from cloud']));
    const proxy = await h.proxy(spec(local.url, cloud.url));
    proxy.server.startActiveChecks();
    await waitFor(() => loadedOf(tierAt(local.url, 'local-model')) === true, 3000, 'the loaded state');
    const seen = await streamWith('chat', proxy);
    expect(seen.text).toBe('from cloud');
    expect((await requestLog(proxy)).attempts).toEqual([
      expect.objectContaining({ tier: 'local', outcome: 'ttft_timeout' }),
      expect.objectContaining({ tier: 'cloud', outcome: 'ok' }),
    ]);
  });

  it('requests arriving refresh it in the background: a model that finished loading is seen as loaded', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    const state = { value: 'starting' as 'ready' | 'starting' };
    local.always(swapServer(state, 0));
    cloud.always(healthyStream(['from cloud']));
    const clock = new ManualClock();
    const proxy = await h.proxy(spec(local.url, cloud.url), { clock });
    proxy.server.startActiveChecks();
    const tier = tierAt(local.url, 'local-model');
    await waitFor(() => loadedOf(tier) === false, 3000, 'the loaded state');
    const reads = () => local.requests.filter((r) => r.url === '/running').length;
    const before = reads();
    state.value = 'ready';
    // Within 5 s of the last read, requests ask nothing.
    for (let i = 0; i < 3; i++) expect((await streamWith('chat', proxy)).text).toBe(WORDS.join(''));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(reads() - before).toBe(0);
    expect(loadedOf(tier)).toBe(false);
    // 5 s on: the next request is followed by one read (off its path), however many arrive.
    clock.advance(5_000);
    for (let i = 0; i < 3; i++) expect((await streamWith('chat', proxy)).text).toBe(WORDS.join(''));
    await waitFor(() => loadedOf(tier) === true, 3000, 'the refreshed state');
    expect(reads() - before).toBe(1);
  });

  it('a server that documents none (each ask a 404) is not asked every 5 s while requests arrive: again only after a long while', async () => {
    const local = await h.fake();
    // A single-model llama-server, vLLM, SGLang…: chat completions, and 404 for all three.
    local.always(openaiServer({}));
    const clock = new ManualClock();
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: local.url }] }, { clock });
    proxy.server.startActiveChecks();
    const LOADED_PATHS = ['/running', '/models', '/api/v0/models'];
    const asks = () => local.requests.filter((r) => LOADED_PATHS.includes(r.url.split('?')[0])).length;
    const answered = async (): Promise<void> => {
      const res = await chat(proxy, {});
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    };
    // Discovery asks each at start (fit's discovery asks LM Studio's list too).
    await waitFor(() => asks() >= 3, 3000, 'discovery to ask');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const atStart = asks();
    // A minute of requests, 5 s apart: not asked again.
    for (let i = 0; i < 12; i++) {
      clock.advance(5_000);
      await answered();
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(asks()).toBe(atStart);
    // Ten minutes on, the next request is followed by one more round (a server swapped for one that says is seen).
    clock.advance(10 * 60_000);
    await answered();
    await waitFor(() => asks() === atStart + 3, 3000, 'the round after the long wait');
    clock.advance(5_000);
    await answered();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(asks()).toBe(atStart + 3);
    expect(loadedOf(tierAt(local.url, 'local-model'))).toBeUndefined();
  });
});

describe('probe --json says loaded: true|false', () => {
  it('per tier, from its server', async () => {
    const swap = await h.fake();
    swap.always(
      openaiServer({
        '/running': llamaSwapRunning([{ model: 'qwen', state: 'ready' }]),
        '/v1/models': { object: 'list', data: [{ id: 'qwen' }, { id: 'gemma' }] },
      }),
    );
    const file = join(tempDir(), 'probe.yaml');
    writeFileSync(
      file,
      stringify({
        version: 1,
        providers: { swap: { type: 'openai', base_url: swap.url } },
        routes: {
          chat: {
            tiers: [
              { provider: 'swap', model: 'qwen', name: 'warm' },
              { provider: 'swap', model: 'gemma', name: 'cold' },
            ],
          },
        },
      }),
    );
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    try {
      await runProbe({ config: file, json: true, timeout: '3000' });
    } finally {
      spy.mockRestore();
    }
    const report = JSON.parse(out.join('')) as { routes: { chat: Array<{ tier: string; loaded?: boolean }> } };
    expect(report.routes.chat.map((t) => [t.tier, t.loaded])).toEqual([
      ['warm', true],
      ['cold', false],
    ]);
  });
});

describe("llama-swap's loading progress (sendLoadingState) is never first content", () => {
  /** proxy/process.go statusResponseWriter.sendData: a chunk with nothing but the progress text. */
  const progress = (text: string) => ({ choices: [{ delta: { reasoning_content: text } }] });

  it('a tier that only reports loading until its ttft_ms fails over; one that then answers commits on its answer', async () => {
    const loading = await h.fake();
    const cloud = await h.fake();
    loading.always(async (ctx) => {
      ctx.startStream();
      ctx.event(progress('━━━━━\n'));
      ctx.event(progress('llama-swap loading model: local-model\n'));
      for (let i = 0; i < 20 && !ctx.isClosed(); i++) {
        await ctx.wait(50);
        ctx.event(progress('.'));
      }
      if (ctx.isClosed()) return;
      ctx.event(progress('\nDone! (1.02s)\n'));
      ctx.role();
      for (const word of WORDS) ctx.content(word);
      ctx.finish();
      ctx.done();
    });
    cloud.always(healthyStream(['from cloud']));
    const failing = await h.proxy({
      tiers: [
        { name: 'local', url: loading.url, timeouts: { ttft_ms: 400 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    expect((await streamWith('chat', failing)).text).toBe('from cloud');
    expect((await requestLog(failing)).attempts).toEqual([
      expect.objectContaining({ tier: 'local', outcome: 'ttft_timeout' }),
      expect.objectContaining({ tier: 'cloud', outcome: 'ok' }),
    ]);

    const patient = await h.proxy({
      tiers: [
        { name: 'local', url: loading.url, timeouts: { ttft_ms: 5000 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    // Given time, the tier's answer after the progress is what commits (a translated client here).
    const seen = await streamWith('messages', patient);
    expect(seen.text).toBe(WORDS.join(''));
    expect((await requestLog(patient)).tier).toBe('local');
  });
});
