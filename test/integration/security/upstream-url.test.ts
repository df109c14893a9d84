import { describe, expect, it } from 'vitest';
import { completion, healthyStream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { rawExchange, useHarness } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';

const h = useHarness();
const UPSTREAM_KEY = 'sk-upstream-key-0123456789';

/** Sends one raw HTTP/1.1 request, so that Host and the request target are exactly as given. */
async function send(proxy: RunningProxy, target: string, headers: Record<string, string>, body: Record<string, unknown>): Promise<number> {
  const payload = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body });
  const lines = [
    `POST ${target} HTTP/1.1`,
    ...Object.entries({ host: new URL(proxy.origin).host, ...headers }).map(([name, value]) => `${name}: ${value}`),
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(payload)}`,
    'connection: close',
  ];
  const answer = await rawExchange(Number(new URL(proxy.origin).port), `${lines.join('\r\n')}\r\n\r\n${payload}`, { waitMs: 5_000 });
  const status = /^HTTP\/1\.1 (\d{3})/.exec(answer);
  if (!status) throw new Error(`no HTTP answer to POST ${target}: ${JSON.stringify(answer.slice(0, 200))}`);
  return Number(status[1]);
}

function answerAll(fake: FakeUpstream): void {
  const stream = healthyStream(['ok']);
  fake.always((ctx) => (ctx.body.stream === true ? stream(ctx) : ctx.json(200, completion('ok'))));
}

describe('the upstream URL comes only from the tier file', () => {
  it('no model, path, query, Host or forwarding header a client sends reaches another upstream or path', async () => {
    const upstream = await h.fake();
    const elsewhere = await h.fake();
    answerAll(upstream);
    answerAll(elsewhere);
    const proxy = await h.proxy({
      tiers: [{ name: 'only', url: `http://127.0.0.1:${upstream.port}/tenant-a/v1`, api_key: UPSTREAM_KEY, model: 'tier-model' }],
    });
    const evilHost = `127.0.0.1:${elsewhere.port}`;
    const evilUrl = `http://${evilHost}/v1`;

    const targets = [
      '/v1/chat/completions',
      `/v1/chat/completions?base_url=${encodeURIComponent(evilUrl)}&model=x`,
      `${evilUrl}/chat/completions`, // absolute form, as sent to a forward proxy
      `//${evilHost}/v1/chat/completions`,
      '/v1/chat/completions/../../v1/chat/completions',
      '/v1/../v1/chat/completions',
    ];
    const headerSets: Array<Record<string, string>> = [
      {},
      { host: evilHost },
      { 'x-forwarded-host': evilHost, 'x-forwarded-proto': 'http', 'x-forwarded-port': String(elsewhere.port), 'x-forwarded-prefix': '/evil' },
      { forwarded: `for=1.2.3.4;host=${evilHost};proto=http`, 'x-forwarded-for': '1.2.3.4', 'x-real-ip': '1.2.3.4' },
      { 'x-original-url': `${evilUrl}/chat/completions`, 'x-rewrite-url': '/evil', 'x-llm-route-tier': 'elsewhere', via: `1.1 ${evilHost}` },
    ];
    const bodies: Array<Record<string, unknown>> = [
      { model: 'chat' },
      { model: evilUrl },
      { model: `chat/../../${evilHost}` },
      { model: 'chat', base_url: evilUrl, api_base: evilUrl, baseURL: evilUrl, url: evilUrl, provider: 'elsewhere', extra_headers: { host: evilHost } },
    ];

    let answered = 0;
    const statuses = new Map<number, number>();
    for (const target of targets) {
      for (const headers of headerSets) {
        for (const body of bodies) {
          for (const stream of [false, true]) {
            const status = await send(proxy, target, headers, { ...body, stream });
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
            if (status === 200) answered++;
            else expect(status, `${target} ${JSON.stringify(headers)} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
          }
        }
      }
    }

    expect(elsewhere.requests).toHaveLength(0);
    // Only the exact path routes (query ignored), and only model "chat": 2 targets × 5 header sets × 2 bodies × 2.
    expect(answered).toBe(40);
    expect(upstream.requests).toHaveLength(answered);
    for (const seen of upstream.requests) {
      expect(seen.url).toBe('/tenant-a/v1/chat/completions');
      expect(seen.headers.host).toBe(`127.0.0.1:${upstream.port}`);
      expect(seen.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
      expect(seen.body.model).toBe('tier-model');
      for (const name of ['x-forwarded-host', 'x-forwarded-proto', 'forwarded', 'x-original-url', 'x-rewrite-url', 'via']) {
        expect(seen.headers[name], name).toBeUndefined();
      }
    }
    expect([...statuses.keys()].sort()).toEqual([200, 404]);
  });
});
