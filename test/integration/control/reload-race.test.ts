import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { completion } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { configYaml } from '../../helpers/proxy.js';

const h = useHarness();

/** POSTs a chat body in two halves with a pause between them; `between` runs in the pause. */
function slowUpload(port: number, body: string, between: () => void): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/chat/completions',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    const half = Math.floor(body.length / 2);
    req.write(body.slice(0, half));
    setTimeout(() => {
      between();
      setTimeout(() => req.end(body.slice(half)), 50);
    }, 100);
  });
}

describe('a reload while a client is still uploading', () => {
  it('sends the request with the host and key of one config: the one it arrived under (never the old key to the new host)', async () => {
    const oldHost = await h.fake();
    const newHost = await h.fake();
    for (const fake of [oldHost, newHost]) fake.always((ctx) => ctx.json(200, completion(`answer from ${fake === oldHost ? 'old' : 'new'} host`)));
    const yaml = (url: string, key: string) => configYaml({ tiers: [{ name: 'cloud', url, api_key: key }] });
    const proxy = await h.proxy(yaml(oldHost.url, 'sk-old-key'));
    const port = Number(new URL(proxy.origin).port);

    const body = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'x'.repeat(20_000) }] });
    const answer = await slowUpload(port, body, () => {
      proxy.server.applyConfig(loadConfigText(yaml(newHost.url, 'sk-new-key'), '/test/llm-route.yaml', {}));
    });
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('answer from old host');
    expect(oldHost.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-old-key']);
    expect(newHost.requests).toHaveLength(0);

    // A request arriving after the reload uses the new config whole.
    const after = await fetch(`${proxy.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(await after.text()).toContain('answer from new host');
    expect(newHost.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-new-key']);
  });
});
