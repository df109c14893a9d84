import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import type { AttemptRecord } from '../../../src/telemetry/events.js';
import { Metrics } from '../../../src/telemetry/metrics.js';
import { tokenCounter } from '../../../src/tokens/count.js';
import { costUsd } from '../../../src/usage/cost.js';
import { UsageLog } from '../../../src/usage/usage-log.js';
import { completion, healthyStream } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, readAll, useHarness, waitFor } from '../../helpers/harness.js';
import { chat, configYaml, DEAD_URL } from '../../helpers/proxy.js';
import { finished, readAttempts, readRequests, useTempDirs } from '../../helpers/usage-kit.js';

const h = useHarness();
const tempDir = useTempDirs();

const CLOUD_PRICE = { input_per_mtok: 0.15, output_per_mtok: 0.6, cached_input_per_mtok: 0.075 };

describe('the usage log through a real proxy', () => {
  it('stores one row per request with the tokens the upstream reported, stream and non-stream, priced as docs/usage.md says', async () => {
    const dir = tempDir();
    const db = join(dir, 'usage.db');
    const fake = await h.fake();
    fake.next(
      (ctx) => ctx.json(200, completion('hello', { prompt_tokens: 1234, completion_tokens: 56 })),
      async (ctx) => {
        ctx.startStream();
        ctx.role();
        ctx.content('hi');
        ctx.finish();
        ctx.event({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 2000, completion_tokens: 300 } });
        ctx.done();
      },
    );
    const proxy = await h.proxy({ tiers: [{ name: 'cloud', url: fake.url, price: CLOUD_PRICE }], top: { usage: { path: db } } });

    const unary = await chat(proxy, {});
    expect(unary.status).toBe(200);
    await unary.text();
    const stream = await chat(proxy, { stream: true });
    expect((await readAll(stream)).error).toBeNull();
    await proxy.server.usage.flush();

    const rows = readRequests(db);
    expect(rows).toHaveLength(2);
    const [u, s] = rows;
    expect(u).toMatchObject({
      route: 'chat',
      tier: 'cloud',
      provider: 'p_cloud',
      model: 'cloud-model',
      protocol: 'chat',
      status: 200,
      outcome: 'ok',
      stream: 0,
      prompt_tokens: 1234,
      completion_tokens: 56,
      cached_tokens: 0,
      token_source: 'upstream',
      ttft_ms: null,
      failover: 0,
    });
    expect(s).toMatchObject({ stream: 1, prompt_tokens: 2000, completion_tokens: 300, cached_tokens: 0, token_source: 'upstream' });
    expect(s.ttft_ms as number).toBeGreaterThan(0);
    // Cost = (prompt − cached) × in + cached × cached_in + completion × out, per million.
    expect(u.cost_usd as number).toBeCloseTo((1234 * 0.15 + 56 * 0.6) / 1e6, 12);
    expect(s.cost_usd as number).toBeCloseTo((2000 * 0.15 + 300 * 0.6) / 1e6, 12);
    expect(u.id).toMatch(/\S/);
    expect(readAttempts(db).map((a) => [a.request_id, a.tier, a.outcome])).toEqual([
      [u.id, 'cloud', 'ok'],
      [s.id, 'cloud', 'ok'],
    ]);
    expect(readAttempts(db)[0].status).toBe(200);

    const { samples } = await fetchMetrics(proxy);
    expect(metric(samples, 'llm_cost_usd_total', { route: 'chat', tier: 'cloud' })).toBeCloseTo((u.cost_usd as number) + (s.cost_usd as number), 12);
  });

  it("records failed attempts without billing them; saved_usd prices a local tier's tokens at the route's first priced tier", async () => {
    const db = join(tempDir(), 'usage.db');
    const local = await h.fake();
    const cloud = await h.fake();
    local.next((ctx) => ctx.error(503, 'busy'), healthyStream(['a', 'b', 'c']));
    cloud.always(healthyStream(['x', 'y']));
    const proxy = await h.proxy({
      tiers: [
        { name: 'dead', url: DEAD_URL, retry: { attempts: 1 } },
        { name: 'local', url: local.url, retry: { attempts: 1 } },
        { name: 'cloud', url: cloud.url, price: { input_per_mtok: 1, output_per_mtok: 2 } },
      ],
      top: { usage: { path: db } },
    });
    // 1st: dead ✗, local 503 ✗, cloud ✓ (billed). 2nd: dead ✗, local ✓ (unpriced: saved).
    for (let i = 0; i < 2; i++) expect((await readAll(await chat(proxy, { stream: true }))).error).toBeNull();
    await proxy.server.usage.flush();

    const [first, second] = readRequests(db);
    expect(first).toMatchObject({ tier: 'cloud', failover: 1, prompt_tokens: 7, completion_tokens: 2, saved_usd: 0 });
    expect(first.cost_usd as number).toBeCloseTo((7 * 1 + 2 * 2) / 1e6, 12);
    expect(second).toMatchObject({ tier: 'local', failover: 1, prompt_tokens: 7, completion_tokens: 3, cost_usd: 0 });
    expect(second.saved_usd as number).toBeCloseTo((7 * 1 + 3 * 2) / 1e6, 12);
    const attempts = readAttempts(db).map((a) => `${a.tier}:${a.outcome}`);
    expect(attempts).toEqual(['dead:connection_refused', 'local:server_error', 'cloud:ok', 'dead:connection_refused', 'local:ok']);
  });

  it('a request no tier answered is stored with no tokens and no cost', async () => {
    const db = join(tempDir(), 'usage.db');
    const proxy = await h.proxy({ tiers: [{ name: 'cloud', url: DEAD_URL, price: CLOUD_PRICE, retry: { attempts: 1 } }], top: { usage: { path: db } } });
    expect((await chat(proxy, {})).status).toBe(502);
    await proxy.server.usage.flush();
    expect(readRequests(db)).toMatchObject([
      { tier: null, provider: null, status: 502, outcome: 'failed', prompt_tokens: 0, completion_tokens: 0, cost_usd: 0, token_source: null },
    ]);
  });

  it('usage.enabled: false writes nothing', async () => {
    const db = join(tempDir(), 'usage.db');
    const fake = await h.fake();
    fake.always((ctx) => ctx.json(200, completion('x')));
    const proxy = await h.proxy({ tiers: [{ name: 'cloud', url: fake.url }], top: { usage: { path: db, enabled: false } } });
    expect((await chat(proxy, {})).status).toBe(200);
    await proxy.close();
    const { existsSync } = await import('node:fs');
    expect(existsSync(db)).toBe(false);
  });
});

describe('the usage writer (synthetic events)', () => {
  const CONFIG = (db: string): string =>
    configYaml({
      tiers: [
        { name: 'local', url: 'http://127.0.0.1:9/v1' },
        { name: 'cloud', url: 'http://127.0.0.1:9/v1', price: CLOUD_PRICE },
      ],
      top: { usage: { path: db } },
    });

  it('counts tokens with o200k_base when the upstream reported none, and marks the row estimated', async () => {
    const db = join(tempDir(), 'usage.db');
    const config = loadConfigText(CONFIG(db), '/t/llm-route.yaml', {});
    const bus = new TelemetryBus();
    const metrics = new Metrics(bus, config);
    const log = new UsageLog(bus, config, { registry: metrics.registry });
    const promptText = 'Summarise the quarterly report in three bullet points, please.';
    const completionText = 'Revenue grew 12%. Costs fell. Margins improved to 31%.';
    bus.emit(finished({ usage: undefined, estimate: { promptText, completionText } }));
    bus.emit(finished({ tier: 'local', provider: 'p_local', usage: undefined, estimate: { promptText, completionText } }));
    bus.emit(finished({ tier: null, provider: null, model: null, usage: undefined, status: 502, outcome: 'failed' }));
    await log.close();

    const counter = await tokenCounter('o200k_base');
    const prompt = counter.count(promptText);
    const done = counter.count(completionText);
    expect(prompt).toBeGreaterThan(5);
    const rows = readRequests(db);
    expect(rows.map((r) => [r.tier, r.token_source, r.prompt_tokens, r.completion_tokens])).toEqual([
      ['cloud', 'estimated:o200k_base', prompt, done],
      ['local', 'estimated:o200k_base', prompt, done],
      [null, null, 0, 0],
    ]);
    const expected = costUsd(CLOUD_PRICE, { prompt, completion: done, cached: 0 });
    expect(rows[0].cost_usd as number).toBeCloseTo(expected, 12);
    expect(rows[1].saved_usd as number).toBeCloseTo(expected, 12);
    // The metric learns the estimated cost from the usage engine.
    const text = await metrics.registry.metrics();
    expect(Number(/llm_cost_usd_total\{route="chat",tier="cloud"\} (\S+)/.exec(text)?.[1])).toBeCloseTo(expected, 12);
  });

  it('a batch of estimates is counted a row at a time with the event loop running between: streams being relayed do not wait for the whole batch', async () => {
    const db = join(tempDir(), 'usage.db');
    const config = loadConfigText(CONFIG(db), '/t/llm-route.yaml', {});
    const bus = new TelemetryBus();
    const log = new UsageLog(bus, config);
    // Every count is made to take 12 ms of this thread (a long prompt), past the engine's time
    // slice; the spy notes how many event-loop turns had run when each count began.
    const counter = await tokenCounter('o200k_base');
    const realCount = counter.count;
    const turnsAtCount: number[] = [];
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    counter.count = (text) => {
      turnsAtCount.push(turns);
      const until = performance.now() + 12;
      while (performance.now() < until) {
        /* a long prompt's worth of work */
      }
      return realCount(text);
    };
    try {
      for (let i = 0; i < 5; i++) bus.emit(finished({ usage: undefined, estimate: { promptText: `prompt ${i}`, completionText: `answer ${i}` } }));
      await log.close();
    } finally {
      counter.count = realCount;
      ticking = false;
    }
    expect(turnsAtCount).toHaveLength(10); // a prompt and an answer per row
    // A row's two counts share a turn; each row has its own.
    expect(new Set(turnsAtCount).size).toBe(5);
    expect(readRequests(db).map((r) => r.token_source)).toEqual(Array(5).fill('estimated:o200k_base'));
  });

  it("estimates through a real proxy when the upstream reports no usage: the prompt's texts and the answer's, stream and not, any protocol", async () => {
    const dir = tempDir();
    const db = join(dir, 'usage.db');
    const fake = await h.fake();
    const answer = 'The quick brown fox jumps over the lazy dog.';
    fake.always(async (ctx) => {
      if (ctx.body.stream !== true)
        return ctx.json(200, {
          id: 'x',
          object: 'chat.completion',
          created: 1,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
        });
      ctx.startStream();
      for (const word of answer.split(/(?= )/)) ctx.content(word);
      ctx.finish();
      ctx.done(); // no usage chunk, whatever stream_options says (some servers do this)
    });
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: fake.url }], top: { usage: { path: db } } });
    const prompt = 'Tell me about foxes and dogs, briefly.';
    await (await chat(proxy, { messages: [{ role: 'user', content: prompt }] })).text();
    await readAll(await chat(proxy, { stream: true, messages: [{ role: 'user', content: prompt }] }));
    const messages = await fetch(`${proxy.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', max_tokens: 50, stream: true, messages: [{ role: 'user', content: prompt }] }),
    });
    await readAll(messages);
    await proxy.server.usage.flush();
    const counter = await tokenCounter();
    const rows = readRequests(db);
    expect(rows.map((r) => [r.protocol, r.stream, r.token_source, r.prompt_tokens, r.completion_tokens])).toEqual([
      ['chat', 0, 'estimated:o200k_base', counter.count(prompt), counter.count(answer)],
      ['chat', 1, 'estimated:o200k_base', counter.count(prompt), counter.count(answer)],
      ['messages', 1, 'estimated:o200k_base', counter.count(prompt), counter.count(answer)],
    ]);
  });

  it('cached tokens are priced at the cached input price and counted in llm_tokens_total{kind="cached"}', async () => {
    const db = join(tempDir(), 'usage.db');
    const config = loadConfigText(CONFIG(db), '/t/llm-route.yaml', {});
    const bus = new TelemetryBus();
    const metrics = new Metrics(bus, config);
    const log = new UsageLog(bus, config, { registry: metrics.registry });
    bus.emit(finished({ usage: { prompt_tokens: 2000, completion_tokens: 300, cached_tokens: 1500 } }));
    await log.close();
    const [row] = readRequests(db);
    expect(row).toMatchObject({ prompt_tokens: 2000, completion_tokens: 300, cached_tokens: 1500 });
    expect(row.cost_usd as number).toBeCloseTo((500 * 0.15 + 1500 * 0.075 + 300 * 0.6) / 1e6, 12);
    const text = await metrics.registry.metrics();
    expect(text).toContain('llm_tokens_total{route="chat",tier="cloud",kind="cached"} 1500');
    expect(text).toContain('llm_tokens_total{route="chat",tier="cloud",kind="prompt"} 2000');
    expect(Number(/llm_cost_usd_total\{route="chat",tier="cloud"\} (\S+)/.exec(text)?.[1])).toBeCloseTo(row.cost_usd as number, 12);
  });

  it('batches: nothing is written before the flush interval, everything after it; a clean close flushes the rest', async () => {
    const db = join(tempDir(), 'usage.db');
    const config = loadConfigText(CONFIG(db), '/t/llm-route.yaml', {});
    const bus = new TelemetryBus();
    const log = new UsageLog(bus, config, { flushMs: 150, maxRows: 1_000 });
    await log.flush(); // opened
    for (let i = 0; i < 20; i++) bus.emit(finished());
    expect(readRequests(db)).toHaveLength(0);
    await waitFor(() => readRequests(db).length === 20, 3000, '20 rows after the flush interval');
    for (let i = 0; i < 5; i++) bus.emit(finished());
    await log.close();
    expect(readRequests(db)).toHaveLength(25);
  });

  it('in a large batch (written 20 rows per INSERT) every attempt stays with its own request', async () => {
    const db = join(tempDir(), 'usage.db');
    const config = loadConfigText(CONFIG(db), '/t/llm-route.yaml', {});
    const bus = new TelemetryBus();
    const log = new UsageLog(bus, config, { maxRows: 10_000, flushMs: 10_000 });
    for (let i = 0; i < 67; i++) {
      const attempts = Array.from(
        { length: i % 4 },
        (_, n): AttemptRecord => ({ tier: `t${i}`, attempt: n + 1, outcome: n === (i % 4) - 1 ? 'ok' : 'server_error', ms: i * 10 + n }),
      );
      bus.emit(finished({ id: `r${i}`, attempts }));
    }
    await log.close();
    expect(readRequests(db).map((r) => r.id)).toEqual(Array.from({ length: 67 }, (_, i) => `r${i}`));
    const attempts = readAttempts(db);
    expect(attempts).toHaveLength(Array.from({ length: 67 }, (_, i) => i % 4).reduce((a, b) => a + b, 0));
    for (const a of attempts) expect(a.tier).toBe(`t${String(a.request_id).slice(1)}`);
    expect(attempts.filter((a) => a.request_id === 'r7').map((a) => [a.n, a.attempt, a.outcome, a.ms])).toEqual([
      [0, 1, 'server_error', 70],
      [1, 2, 'server_error', 71],
      [2, 3, 'ok', 72],
    ]);
  });

  it('a reload moves the log to a new path, turns it off and on, and re-prices', async () => {
    const dir = tempDir();
    const first = join(dir, 'a.db');
    const second = join(dir, 'b.db');
    const withPrice = (db: string, enabled: boolean, input: number): string =>
      configYaml({
        tiers: [{ name: 'cloud', url: 'http://127.0.0.1:9/v1', price: { input_per_mtok: input, output_per_mtok: 0 } }],
        top: { usage: { path: db, enabled } },
      });
    const bus = new TelemetryBus();
    const log = new UsageLog(bus, loadConfigText(withPrice(first, true, 1), '/t/llm-route.yaml', {}));
    bus.emit(finished({ id: 'one', usage: { prompt_tokens: 1_000_000, completion_tokens: 0 } }));
    await log.flush();
    log.configure(loadConfigText(withPrice(second, true, 2), '/t/llm-route.yaml', {}));
    bus.emit(finished({ id: 'two', usage: { prompt_tokens: 1_000_000, completion_tokens: 0 } }));
    await log.flush();
    log.configure(loadConfigText(withPrice(second, false, 2), '/t/llm-route.yaml', {}));
    bus.emit(finished({ id: 'off' }));
    await log.flush();
    log.configure(loadConfigText(withPrice(second, true, 3), '/t/llm-route.yaml', {}));
    bus.emit(finished({ id: 'three', usage: { prompt_tokens: 1_000_000, completion_tokens: 0 } }));
    await log.close();
    expect(readRequests(first).map((r) => [r.id, r.cost_usd])).toEqual([['one', 1]]);
    expect(readRequests(second).map((r) => [r.id, r.cost_usd])).toEqual([
      ['two', 2],
      ['three', 3],
    ]);
  });

  it('prunes rows older than retention_days when it opens', async () => {
    const db = join(tempDir(), 'usage.db');
    const config = loadConfigText(CONFIG(db), '/t/llm-route.yaml', {});
    const first = new UsageLog(new TelemetryBus(), config);
    await first.flush(); // opened (and pruned) now, not when it is closed after the rows below
    const bus = new TelemetryBus();
    const log = new UsageLog(bus, config);
    const day = 86_400_000;
    bus.emit(finished({ id: 'old', startedAt: Date.now() - 91 * day }));
    bus.emit(finished({ id: 'recent', startedAt: Date.now() - 89 * day }));
    await log.close();
    await first.close();
    expect(readRequests(db).map((r) => r.id)).toEqual(['old', 'recent']);
    const reopened = new UsageLog(new TelemetryBus(), config);
    await reopened.flush();
    await reopened.close();
    expect(readRequests(db).map((r) => r.id)).toEqual(['recent']);
    expect(readAttempts(db).map((a) => a.request_id)).toEqual(['recent']);
  });
});
