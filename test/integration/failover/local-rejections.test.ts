import { describe, expect, it } from 'vitest';
import { healthyStream, type Script } from '../../helpers/fake-upstream.js';
import { IMAGE_NOT_SUPPORTED } from '../../helpers/fake-llama-server.js';
import { requestLog, sleep, useHarness } from '../../helpers/harness.js';
import { ask, healthzTiers } from '../../helpers/control-kit.js';
import { sseText } from '../../helpers/proxy.js';

/**
 * What llama.cpp answers a payload it cannot carry, through the proxy: the next tier serves it,
 * no retry, and the local tier's health is untouched (docs/routing.md, "An input the tier cannot take").
 */

const h = useHarness();

/** llama.cpp's error answers: always `Connection: close`. */
const llamaError =
  (status: number, message: string, type: string, extra: Record<string, unknown> = {}): Script =>
  (ctx) =>
    ctx.json(status, { error: { code: status, message, type, ...extra } }, { connection: 'close' });

const overflow = llamaError(400, 'request (870 tokens) exceeds the available context size (256 tokens), try increasing it', 'exceed_context_size_error', {
  n_prompt_tokens: 870,
  n_ctx: 256,
});
const decodeOverflow = llamaError(500, 'Context size has been exceeded.', 'server_error');
const noVision = llamaError(500, IMAGE_NOT_SUPPORTED, 'server_error');

async function localThenCloud(local: Record<string, unknown> = {}) {
  const llama = await h.fake();
  const cloud = await h.fake();
  cloud.always(healthyStream(['from', ' cloud']));
  const p = await h.proxy({
    tiers: [
      { name: 'local', url: llama.url, retry: { attempts: 3, base_ms: 5 }, ...local },
      { name: 'cloud', url: cloud.url },
    ],
  });
  return { llama, cloud, p };
}

describe('a payload the local tier cannot carry goes to the next tier, once', () => {
  it.each([
    ['400 exceed_context_size_error', overflow, 'context_length', 400],
    ['500 Context size has been exceeded.', decodeOverflow, 'context_length', 500],
    ['500 image input is not supported', noVision, 'unsupported', 500],
  ])('%s: cloud answers, one local request, no retry', async (_name, script, outcome, status) => {
    const { llama, cloud, p } = await localThenCloud();
    llama.always(script);
    const r = await ask(p);
    expect(r.status).toBe(200);
    expect(r.tier).toBe('cloud');
    expect(sseText(r.text)).toBe('from cloud');
    expect(llama.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
    const log = await requestLog(p);
    expect(log.attempts).toMatchObject([
      { tier: 'local', attempt: 1, outcome, status },
      { tier: 'cloud', outcome: 'ok' },
    ]);
  });

  it('ten of them leave the local tier healthy: no degraded, no down, no tier_state line', async () => {
    const { llama, p } = await localThenCloud();
    llama.always((ctx) => (ctx.index % 2 === 0 ? noVision(ctx) : overflow(ctx)));
    for (let i = 0; i < 10; i++) expect((await ask(p)).tier).toBe('cloud');
    expect(llama.requests).toHaveLength(10);
    const local = (await healthzTiers(p)).local;
    expect(local.state).toBe('healthy');
    expect(p.logs.filter((l) => l.event === 'tier_state')).toEqual([]);
  });
});

describe('a half-open local tier that answers a payload error is alive', () => {
  it.each([
    ['a context overflow (400)', overflow],
    ['a payload fault (400 invalid temperature)', llamaError(400, "Invalid value for 'temperature'", 'invalid_request_error')],
  ])('%s closes its circuit; the next request goes to it', async (_name, trialAnswer) => {
    const { llama, p } = await localThenCloud({ retry: { attempts: 1 }, circuit: { failures: 3, cooldown_ms: 100 } });
    const down = llamaError(503, 'Loading model', 'unavailable_error');
    llama.next(down, down, down, trialAnswer).always(healthyStream(['from', ' local']));
    for (let i = 0; i < 3; i++) expect((await ask(p)).tier).toBe('cloud');
    expect((await healthzTiers(p)).local.state).toBe('down');
    await sleep(150); // the cooldown is over: the next request is the half-open trial

    const trial = await ask(p);
    expect(llama.requests).toHaveLength(4);
    expect((await healthzTiers(p)).local.state).toBe('healthy');
    const lines = p.logs.filter((l) => l.event === 'tier_state').map((l) => `${l.from}->${l.to}`);
    expect(lines).toEqual(['healthy->degraded', 'degraded->down', 'down->healthy']);
    expect(String(p.logs.filter((l) => l.event === 'tier_state').at(-1)?.reason)).toMatch(
      /^it answered the half-open trial \((context_length|bad_request) 400\)$/,
    );
    expect([200, 400]).toContain(trial.status);

    const next = await ask(p);
    expect(next.tier).toBe('local');
    expect(sseText(next.text)).toBe('from local');
  });
});
