import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { completion } from '../../helpers/fake-upstream.js';
import { sleep, useHarness, waitFor } from '../../helpers/harness.js';

const h = useHarness();

describe('shutdown while a request is still uploading its body', () => {
  it('the drain waits for it (it has not begun routing yet): it is answered', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('answered in the drain')));
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const body = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'slow upload' }] });
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        `${proxy.baseURL}/chat/completions`,
        { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      // The rest comes 2 s into the drain: later than its last second (which resets what is left).
      setTimeout(() => req.end(body.slice(10)), 2_500);
    });
    await waitFor(() => proxy.server.app.handling === 1, 3000, 'the request to arrive');
    await sleep(200);
    const closing = proxy.server.close(10_000);
    const got = await answer;
    expect(got.status).toBe(200);
    expect(got.text).toContain('answered in the drain');
    await closing;
  }, 20_000);
});
