import { IncomingMessage, type ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { handleAdmin } from '../../../src/control/admin-api.js';
import { ManualClock } from '../../helpers/clock.js';
import { fetchMetrics, metric, openaiError, useHarness } from '../../helpers/harness.js';
import { admin, adminTiers, answer, ask, controlYaml } from '../../helpers/control-kit.js';

/**
 * The admin API under /admin on the proxy's port: the routes view, runtime weight overrides
 * (kill switch, TTL, DELETE), request validation, and access control.
 */

const h = useHarness();

async function twoTiers(opts: { canaryWeight?: number; server?: Record<string, unknown>; clock?: ManualClock } = {}) {
  const canary = await h.fake();
  const stable = await h.fake();
  canary.always(answer('canary'));
  stable.always(answer('stable'));
  const p = await h.proxy(
    controlYaml({
      tiers: [
        { name: 'canary', url: canary.url, weight: opts.canaryWeight },
        { name: 'stable', url: stable.url },
      ],
      server: opts.server,
    }),
    { clock: opts.clock },
  );
  return { canary, stable, p };
}

/** Sends n requests; returns how many each tier answered. */
async function spread(p: { origin: string }, n: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const r = await ask(p);
    expect(r.status).toBe(200);
    counts[r.tier ?? 'none'] = (counts[r.tier ?? 'none'] ?? 0) + 1;
  }
  return counts;
}

const TIER = '/admin/routes/chat/tiers/canary';

describe('GET /admin/routes', () => {
  it('lists tiers with weights, override, state and recent TTFT percentiles', async () => {
    const { p } = await twoTiers();
    await spread(p, 6);
    const { status, json, headers } = await admin(p, 'GET', '/admin/routes');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/application\/json/);
    expect(json.file).toBe('/test/llm-route.yaml');
    expect(Object.keys(json.routes)).toEqual(['chat']);
    const [canary, stable] = json.routes.chat.tiers;
    expect(canary).toMatchObject({
      name: 'canary',
      provider: 'p_canary',
      model: 'canary-model',
      weight: 100,
      configured_weight: 100,
      override: null,
      alerts: [],
      rollback: null,
      state: 'healthy',
      consecutive_failures: 0,
      retry_at: null,
    });
    expect(canary.recent).toMatchObject({ requests: 6, errors: 0 });
    expect(canary.recent.ttft_ms).toMatchObject({ samples: 6 });
    for (const k of ['p50', 'p95', 'p99']) {
      expect(typeof canary.recent.ttft_ms[k]).toBe('number');
      expect(canary.recent.ttft_ms[k]).toBeGreaterThanOrEqual(0);
      expect(canary.recent.ttft_ms[k]).toBeLessThan(2_000);
    }
    expect(canary.recent.ttft_ms.p50).toBeLessThanOrEqual(canary.recent.ttft_ms.p99);
    expect(stable).toMatchObject({ name: 'stable', weight: 100, state: 'healthy' });
    expect(stable.recent).toMatchObject({ requests: 0, errors: 0, ttft_ms: null });
  });
});

describe('weight overrides', () => {
  it('PUT weight 0 is a kill switch: the tier gets no request until DELETE clears it', async () => {
    const { canary, stable, p } = await twoTiers();
    expect(await spread(p, 2)).toEqual({ canary: 2 });

    const put = await admin(p, 'PUT', TIER, { weight: 0 });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ route: 'chat', tier: 'canary', weight: { configured: 100, effective: 0, override: { weight: 0, expires_in_s: null } } });
    const seenBefore = canary.requests.length;
    expect(await spread(p, 5)).toEqual({ stable: 5 });
    expect(canary.requests.length).toBe(seenBefore);
    expect(stable.requests.length).toBe(5);

    const view = await adminTiers(p);
    expect(view.canary).toMatchObject({ weight: 0, configured_weight: 100, override: { weight: 0, expires_in_s: null } });
    expect(metric((await fetchMetrics(p)).samples, 'llm_tier_weight', { route: 'chat', tier: 'canary' })).toBe(0);
    expect(p.logs.find((l) => l.event === 'weight' && l.source === 'admin')).toMatchObject({ route: 'chat', tier: 'canary', weight: 0, configured: 100 });
    // /healthz shows the effective weight too.
    const healthz = (await (await fetch(`${p.origin}/healthz`)).json()) as any;
    expect(healthz.routes.chat.tiers[0]).toMatchObject({ name: 'canary', weight: 0 });

    const del = await admin(p, 'DELETE', TIER);
    expect(del.status).toBe(200);
    expect(del.json.weight).toMatchObject({ configured: 100, effective: 100, override: null });
    expect(await spread(p, 2)).toEqual({ canary: 2 });
    expect((await adminTiers(p)).canary).toMatchObject({ weight: 100, override: null });
    expect(metric((await fetchMetrics(p)).samples, 'llm_tier_weight', { route: 'chat', tier: 'canary' })).toBe(100);
  });

  it('PUT can bring a weight-0 tier in (0 → 100) and a half weight splits traffic', async () => {
    const { canary, p } = await twoTiers({ canaryWeight: 0 });
    expect(await spread(p, 3)).toEqual({ stable: 3 });
    expect(canary.requests).toHaveLength(0);
    expect((await admin(p, 'PUT', TIER, { weight: 100 })).status).toBe(200);
    expect(await spread(p, 3)).toEqual({ canary: 3 });
    expect((await admin(p, 'PUT', TIER, { weight: 50 })).status).toBe(200);
    const counts = await spread(p, 60);
    expect(counts.canary).toBeGreaterThan(10);
    expect(counts.stable).toBeGreaterThan(10);
  });

  it('PUT with ttl_s expires back to the configured weight by itself', async () => {
    const clock = new ManualClock();
    const { p } = await twoTiers({ clock });
    const put = await admin(p, 'PUT', TIER, { weight: 0, ttl_s: 1 });
    expect(put.status).toBe(200);
    expect(put.json.weight).toMatchObject({ effective: 0, override: { weight: 0, expires_in_s: 1 } });
    expect(await spread(p, 2)).toEqual({ stable: 2 });
    clock.advance(999);
    expect((await adminTiers(p)).canary).toMatchObject({ weight: 0, override: { weight: 0, expires_in_s: 0 } });
    clock.advance(1);
    expect((await adminTiers(p)).canary.weight).toBe(100);
    expect((await adminTiers(p)).canary.override).toBeNull();
    expect(await spread(p, 2)).toEqual({ canary: 2 });
    expect(p.logs.find((l) => l.event === 'weight' && l.source === 'expired')).toMatchObject({ tier: 'canary', weight: 100 });
  });

  it('a new PUT replaces the previous override (and its TTL)', async () => {
    const clock = new ManualClock();
    const { p } = await twoTiers({ clock });
    await admin(p, 'PUT', TIER, { weight: 0, ttl_s: 1 });
    await admin(p, 'PUT', TIER, { weight: 0 });
    expect(clock.pending).toBe(0); // the first TTL's timer is gone with it
    clock.advance(1_300);
    expect((await adminTiers(p)).canary).toMatchObject({ weight: 0, override: { weight: 0, expires_in_s: null } });
  });
});

describe('admin API validation', () => {
  it.each([
    ['not JSON', '{weight: 5', /JSON/i],
    ['weight 150', { weight: 150 }, /weight/],
    ['weight -1', { weight: -1 }, /weight/],
    ['weight "x"', { weight: 'x' }, /weight/],
    ['no weight', {}, /weight/],
    ['unknown field', { weight: 10, colour: 'red' }, /colour/],
    ['ttl_s -1', { weight: 10, ttl_s: -1 }, /ttl_s/],
    ['ttl_s "soon"', { weight: 10, ttl_s: 'soon' }, /ttl_s/],
    ['an array', [10], /object/],
  ])('PUT with %s → 400 with a reason, nothing changes', async (_what, body, reason) => {
    const { p } = await twoTiers();
    const res = await admin(p, 'PUT', TIER, body);
    expect(res.status).toBe(400);
    const error = openaiError(res.json);
    expect(error.message).toMatch(reason);
    expect((await adminTiers(p)).canary).toMatchObject({ weight: 100, override: null });
  });

  it('a body over 1 MiB → 413 body_too_large with connection: close (the client still reads it), nothing changes', async () => {
    const { p } = await twoTiers();
    const res = await fetch(`${p.origin}${TIER}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ weight: 0, pad: 'x'.repeat(1_100_000) }),
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('connection')).toBe('close');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('body_too_large');
    expect((await adminTiers(p)).canary).toMatchObject({ weight: 100, override: null });
  });

  it('unknown route, unknown tier, unknown endpoint → 404', async () => {
    const { p } = await twoTiers();
    const route = await admin(p, 'PUT', '/admin/routes/nope/tiers/canary', { weight: 0 });
    expect(route.status).toBe(404);
    expect(openaiError(route.json).message).toMatch(/nope/);
    expect(openaiError(route.json).message).toMatch(/chat/); // lists the known ones
    const tier = await admin(p, 'DELETE', '/admin/routes/chat/tiers/nope');
    expect(tier.status).toBe(404);
    expect(openaiError(tier.json).message).toMatch(/canary/);
    expect((await admin(p, 'GET', '/admin/nothing')).status).toBe(404);
  });

  it('wrong method → 405 with Allow', async () => {
    const { p } = await twoTiers();
    const get = await admin(p, 'GET', TIER);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toMatch(/PUT/);
    openaiError(get.json);
    expect((await admin(p, 'POST', '/admin/routes', {})).status).toBe(405);
    expect((await admin(p, 'GET', '/admin/reload')).status).toBe(405);
    expect((await admin(p, 'GET', '/admin/alerts')).status).toBe(405);
  });
});

describe('admin API access', () => {
  it('with server.admin_token: 401 without it or with a wrong one, 200 with it', async () => {
    const { p } = await twoTiers({ server: { admin_token: 'admin-sekret' } });
    const none = await admin(p, 'GET', '/admin/routes');
    expect(none.status).toBe(401);
    openaiError(none.json);
    expect((await admin(p, 'GET', '/admin/routes', undefined, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await admin(p, 'PUT', TIER, { weight: 0 })).status).toBe(401);
    expect(await adminTiers(p).catch(() => null)).toBeNull();
    const ok = await admin(p, 'GET', '/admin/routes', undefined, { authorization: 'Bearer admin-sekret' });
    expect(ok.status).toBe(200);
    expect(ok.json.routes.chat.tiers[0]).toMatchObject({ weight: 100 });
    const put = await admin(p, 'PUT', TIER, { weight: 0 }, { authorization: 'Bearer admin-sekret' });
    expect(put.status).toBe(200);
    expect(await spread(p, 2)).toEqual({ stable: 2 });
    // The proxy's own endpoints are not affected by the admin token.
    expect((await fetch(`${p.origin}/healthz`)).status).toBe(200);
  });

  it('from a non-loopback address: 403 without admin_token; with it, the token decides', async () => {
    const { p } = await twoTiers();
    const call = async (headers: Record<string, string>, address = '10.0.0.5') => {
      const socket = new Socket();
      Object.defineProperty(socket, 'remoteAddress', { value: address });
      const req = new IncomingMessage(socket);
      req.method = 'GET';
      req.url = '/admin/routes';
      req.headers = headers;
      const answer = { status: 0, body: '' };
      const res = {
        headersSent: false,
        writeHead(status: number) {
          answer.status = status;
          this.headersSent = true;
          return this;
        },
        end(body?: string) {
          answer.body = body ?? '';
          return this;
        },
      };
      await handleAdmin(req, res as unknown as ServerResponse, p.server.app, '/admin/routes');
      socket.destroy();
      return { status: answer.status, json: JSON.parse(answer.body || 'null') };
    };
    const denied = await call({});
    expect(denied.status).toBe(403);
    expect(openaiError(denied.json).message).toMatch(/loopback/);

    // Control: the same fake request from a loopback address passes.
    expect((await call({}, '127.0.0.1')).status).toBe(200);
    expect((await call({}, '::ffff:127.0.0.1')).status).toBe(200);

    // With admin_token set, the token decides wherever the call comes from.
    p.server.app.config.server.admin_token = 'tok';
    try {
      expect((await call({})).status).toBe(401);
      expect((await call({ authorization: 'Bearer tok' })).status).toBe(200);
    } finally {
      delete p.server.app.config.server.admin_token;
    }
  });
});
