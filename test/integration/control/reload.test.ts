import { describe, expect, it } from 'vitest';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, readAll, useHarness, waitFor } from '../../helpers/harness.js';
import { errorEvents, sseText } from '../../helpers/proxy.js';
import { admin, adminTiers, answer, ask, type ControlSpec, controlYaml, type FileProxy, startFileProxy } from '../../helpers/control-kit.js';

/**
 * Hot reload from a real tier file: the watcher (watch: true) and POST /admin/reload. A valid
 * change applies to new requests, streams in flight are untouched, an invalid change is
 * rejected with file:line:col problems and the running config keeps serving, overrides
 * survive when their tier still exists.
 */

const h = useHarness();

async function fileProxy(spec: ControlSpec, watch = true): Promise<FileProxy> {
  const p = await startFileProxy(controlYaml(spec), { watch });
  h.defer(() => p.close());
  return p;
}

const reloads = (p: FileProxy, ok: boolean) => p.logs.filter((l) => l.event === 'reload' && l.ok === ok);

/** The problems of a rejected reload name the file, a line and a column. */
function expectPositioned(problems: unknown, file: string): void {
  expect(Array.isArray(problems)).toBe(true);
  const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  expect(
    (problems as string[]).some((line) => new RegExp(`${escaped}:\\d+:\\d+`).test(line)),
    `file:line:col in ${JSON.stringify(problems)}`,
  ).toBe(true);
}

describe('hot reload: watched tier file', () => {
  it('a changed model applies to new requests within a couple of seconds; a reload ok line is logged', async () => {
    const up = await h.fake();
    up.always(answer('up'));
    const spec = (model: string): ControlSpec => ({ tiers: [{ name: 'local', url: up.url, model }] });
    const p = await fileProxy(spec('model-one'));
    await ask(p);
    expect(up.requests.at(-1)?.body.model).toBe('model-one');

    p.write(controlYaml(spec('model-two')));
    const line = await waitFor(() => reloads(p, true)[0], 3_000, 'a reload ok line');
    expect(line).toMatchObject({ event: 'reload', ok: true, file: p.file, routes: 1 });
    await ask(p);
    expect(up.requests.at(-1)?.body.model).toBe('model-two');
    expect((await adminTiers(p)).local.model).toBe('model-two');
  });

  it('an added route shows in /v1/models and serves', async () => {
    const up = await h.fake();
    up.always(answer('up'));
    const p = await fileProxy({ tiers: [{ name: 'local', url: up.url }] });
    p.write(controlYaml({ tiers: [{ name: 'local', url: up.url }], routes: { code: [{ name: 'local', url: up.url, model: 'coder' }] } }));
    const ids = await waitFor(
      async () => {
        const list = (await (await fetch(`${p.origin}/v1/models`)).json()) as { data: Array<{ id: string }> };
        const names = list.data.map((m) => m.id);
        return names.includes('code') ? names : null;
      },
      3_000,
      '/v1/models to list the new route',
    );
    expect(ids.sort()).toEqual(['chat', 'code']);
    const r = await ask(p, { model: 'code' });
    expect(r.status).toBe(200);
    expect(up.requests.at(-1)?.body.model).toBe('coder');
  });

  it('a stream in flight during a reload (even one that moves the provider) finishes normally', async () => {
    const oldUp = await h.fake();
    const newUp = await h.fake();
    const words = Array.from({ length: 12 }, (_, i) => ` w${i}`);
    oldUp.always(healthyStream(words, { delayMs: 100 }));
    newUp.always(answer('new'));
    const p = await fileProxy({ tiers: [{ name: 'local', url: oldUp.url }] });

    const res = await fetch(`${p.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    expect(res.status).toBe(200); // committed: the stream is flowing
    p.write(controlYaml({ tiers: [{ name: 'local', url: newUp.url, model: 'moved-model' }] }));
    await waitFor(() => reloads(p, true)[0], 3_000, 'a reload ok line');

    // New requests use the new provider while the old stream is still going.
    const fresh = await ask(p);
    expect(fresh.tier).toBe('local');
    expect(sseText(fresh.text)).toBe('new');
    expect(newUp.requests[0].body.model).toBe('moved-model');

    const { text, error } = await readAll(res);
    expect(error).toBeNull();
    expect(sseText(text)).toBe(words.join(''));
    expect(errorEvents(text)).toEqual([]);
    expect(text).toContain('data: [DONE]');
    const log = await waitFor(
      () => p.logs.find((l) => l.event === 'request' && l.outcome === 'ok' && (l.duration_ms as number) > 1_000),
      3_000,
      'the long request log line',
    );
    expect(log).toMatchObject({ tier: 'local', status: 200, outcome: 'ok' });
  });

  it('an invalid file is rejected with file:line:col problems and the running config keeps serving', async () => {
    const up = await h.fake();
    up.always(answer('up'));
    const good = controlYaml({ tiers: [{ name: 'local', url: up.url, model: 'model-one' }] });
    const p = await fileProxy({ tiers: [{ name: 'local', url: up.url, model: 'model-one' }] });

    // A schema problem: a misspelt key.
    p.write(good.replace('model: model-one', 'modle: model-two'));
    const rejected = await waitFor(() => reloads(p, false)[0], 3_000, 'a reload line with ok false');
    expect(rejected).toMatchObject({ event: 'reload', ok: false, file: p.file });
    expectPositioned(rejected.problems, p.file);
    expect(reloads(p, true)).toHaveLength(0);
    const r = await ask(p);
    expect(r.status).toBe(200);
    expect(up.requests.at(-1)?.body.model).toBe('model-one');

    // A YAML syntax error.
    p.write(`${good}\n  broken: [unclosed\n`);
    await waitFor(() => reloads(p, false)[1], 3_000, 'a second rejected reload');
    expectPositioned(reloads(p, false)[1].problems, p.file);
    expect((await ask(p)).status).toBe(200);
    expect(up.requests.at(-1)?.body.model).toBe('model-one');

    // Fixed: it applies.
    p.write(good.replace('model: model-one', 'model: model-three'));
    await waitFor(() => reloads(p, true)[0], 3_000, 'a reload ok line after the fix');
    await ask(p);
    expect(up.requests.at(-1)?.body.model).toBe('model-three');
  });

  it('overrides survive a reload when their tier still exists; a removed tier takes its override with it', async () => {
    const canary = await h.fake();
    const stable = await h.fake();
    canary.always(answer('canary'));
    stable.always(answer('stable'));
    const spec = (stableModel: string, withCanary = true): ControlSpec => ({
      tiers: [...(withCanary ? [{ name: 'canary', url: canary.url }] : []), { name: 'stable', url: stable.url, model: stableModel }],
    });
    const p = await fileProxy(spec('s1'));
    expect((await admin(p, 'PUT', '/admin/routes/chat/tiers/canary', { weight: 0 })).status).toBe(200);

    p.write(controlYaml(spec('s2')));
    await waitFor(() => reloads(p, true)[0], 3_000, 'the first reload');
    expect((await adminTiers(p)).canary).toMatchObject({ weight: 0, override: { weight: 0 } });
    expect((await ask(p)).tier).toBe('stable');
    expect(stable.requests.at(-1)?.body.model).toBe('s2');
    expect(canary.requests).toHaveLength(0);

    // Removed, then added back: a new tier, with its configured weight.
    p.write(controlYaml(spec('s3', false)));
    await waitFor(() => reloads(p, true)[1], 3_000, 'the second reload');
    expect(Object.keys(await adminTiers(p))).toEqual(['stable']);
    p.write(controlYaml(spec('s4')));
    await waitFor(() => reloads(p, true)[2], 3_000, 'the third reload');
    expect((await adminTiers(p)).canary).toMatchObject({ weight: 100, override: null });
    expect((await ask(p)).tier).toBe('canary');
  });

  it('a reload keeps the gauges true: a down tier stays llm_tier_state 2, a killed tier stays llm_tier_weight 0', async () => {
    const broken = await h.fake();
    const killed = await h.fake();
    const stable = await h.fake();
    broken.always((ctx) => ctx.error(503, 'broken'));
    killed.always(answer('killed'));
    stable.always(answer('stable'));
    const spec = (model: string): ControlSpec => ({
      tiers: [
        { name: 'broken', url: broken.url, retry: { attempts: 1 } },
        { name: 'killed', url: killed.url },
        { name: 'stable', url: stable.url, model },
      ],
    });
    const p = await fileProxy(spec('s1'));
    expect((await admin(p, 'PUT', '/admin/routes/chat/tiers/killed', { weight: 0 })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await ask(p)).tier).toBe('stable');
    expect((await adminTiers(p)).broken.state).toBe('down');
    let samples = (await fetchMetrics(p)).samples;
    expect(metric(samples, 'llm_tier_state', { route: 'chat', tier: 'broken' })).toBe(2);
    expect(metric(samples, 'llm_tier_weight', { route: 'chat', tier: 'killed' })).toBe(0);

    p.write(controlYaml(spec('s2')));
    await waitFor(() => reloads(p, true)[0], 3_000, 'a reload');
    const view = await adminTiers(p);
    expect(view.broken.state).toBe('down'); // the health history survives
    expect(view.killed.weight).toBe(0); // and the override
    samples = (await fetchMetrics(p)).samples;
    expect.soft(metric(samples, 'llm_tier_state', { route: 'chat', tier: 'broken' }), 'llm_tier_state{tier="broken"} after a reload').toBe(2);
    expect.soft(metric(samples, 'llm_tier_weight', { route: 'chat', tier: 'killed' }), 'llm_tier_weight{tier="killed"} after a reload').toBe(0);
  });
});

describe('POST /admin/reload', () => {
  it('applies a valid file at once (200), rejects a bad one (400 with problems), running config unchanged', async () => {
    const up = await h.fake();
    up.always(answer('up'));
    const spec = (model: string): ControlSpec => ({ tiers: [{ name: 'local', url: up.url, model }] });
    const p = await fileProxy(spec('model-one'), false);
    expect((await admin(p, 'PUT', '/admin/routes/chat/tiers/local', { weight: 100, ttl_s: 60 })).status).toBe(200);

    p.write(controlYaml(spec('model-two')));
    const ok = await admin(p, 'POST', '/admin/reload');
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ ok: true, file: p.file, routes: ['chat'] });
    expect(reloads(p, true)).toHaveLength(1);
    await ask(p);
    expect(up.requests.at(-1)?.body.model).toBe('model-two');
    expect((await adminTiers(p)).local.override).toMatchObject({ weight: 100 });

    p.write(controlYaml(spec('model-three')).replace('version: 1', 'version: 1\nsurprise: true'));
    const bad = await admin(p, 'POST', '/admin/reload');
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/unchanged/);
    expectPositioned(bad.json.error.problems, p.file);
    expect(reloads(p, false)).toHaveLength(1);
    await ask(p);
    expect(up.requests.at(-1)?.body.model).toBe('model-two');
  });

  it('without watch, editing the file changes nothing until POST /admin/reload', async () => {
    const up = await h.fake();
    up.always(answer('up'));
    const p = await fileProxy({ tiers: [{ name: 'local', url: up.url, model: 'model-one' }] }, false);
    p.write(controlYaml({ tiers: [{ name: 'local', url: up.url, model: 'model-two' }] }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await ask(p);
    expect(up.requests.at(-1)?.body.model).toBe('model-one');
    expect(p.logs.some((l) => l.event === 'reload')).toBe(false);
  });
});
