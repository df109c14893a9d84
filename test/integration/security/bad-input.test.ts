import { request } from 'node:http';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { completion, FakeUpstream } from '../../helpers/fake-upstream.js';
import { logLine, openaiError, rawExchange, sleep, waitFor } from '../../helpers/harness.js';
import { type RunningProxy, startProxy } from '../../helpers/proxy.js';

const MAX_BODY = 4096;

let upstream: FakeUpstream;
let p: RunningProxy;
let port: number;

beforeAll(async () => {
  upstream = await FakeUpstream.start();
  upstream.always((ctx) => ctx.json(200, completion('good answer')));
  // Two routes, so the unknown-route message can be checked for both names.
  const yaml = [
    'version: 1',
    'server:',
    '  port: 0',
    `  max_body_bytes: ${MAX_BODY}`,
    'providers:',
    '  fake:',
    '    type: openai',
    `    base_url: ${upstream.url}`,
    'routes:',
    '  chat:',
    '    tiers:',
    '      - { provider: fake, model: m1 }',
    '  code:',
    '    tiers:',
    '      - { provider: fake, model: m2 }',
    '',
  ].join('\n');
  p = await startProxy(yaml);
  port = Number(new URL(p.origin).port);
});

afterAll(async () => {
  await p?.close();
  await upstream?.close();
});

const GOOD = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });

function post(
  body: string | ReadableStream<Uint8Array>,
  headers: Record<string, string> = { 'content-type': 'application/json' },
  path = '/v1/chat/completions',
): Promise<Response> {
  return fetch(`${p.origin}${path}`, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
}

/** The proxy still answers a good request, and the upstream saw it. */
async function stillServes(): Promise<void> {
  const before = upstream.requests.length;
  const res = await post(GOOD);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
  expect(body.choices[0].message.content).toBe('good answer');
  expect(upstream.requests.length).toBe(before + 1);
}

/** Status, OpenAI error shape, x-request-id; nothing reached the upstream. */
async function expectError(res: Response, status: number, code?: string): Promise<ReturnType<typeof openaiError>> {
  const before = upstream.requests.length;
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const error = openaiError(await res.json());
  if (code !== undefined) expect(error.code).toBe(code);
  expect(upstream.requests.length).toBe(before);
  return error;
}

describe('bad input gets an OpenAI-shaped error, and the proxy keeps serving', () => {
  it('invalid JSON → 400', async () => {
    const res = await post('{"model": "chat", "messages": [');
    const error = await expectError(res, 400, 'invalid_json');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(error.type).toBe('invalid_request_error');
    await stillServes();
  });

  it('an empty body → 400', async () => {
    await expectError(await post(''), 400);
    await stillServes();
  });

  it('a JSON array body → 400', async () => {
    await expectError(await post(JSON.stringify([{ model: 'chat', messages: [] }])), 400);
    await stillServes();
  });

  it('a JSON scalar body → 400', async () => {
    await expectError(await post('"chat"'), 400);
    await expectError(await post('null'), 400);
    await stillServes();
  });

  it('missing model → 400', async () => {
    const error = await expectError(await post(JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })), 400);
    expect(error.message).toMatch(/model/);
    await stillServes();
  });

  it('a model that is not a string → 400', async () => {
    await expectError(await post(JSON.stringify({ model: 42, messages: [{ role: 'user', content: 'hi' }] })), 400);
    await stillServes();
  });

  it('missing messages → 400', async () => {
    const error = await expectError(await post(JSON.stringify({ model: 'chat' })), 400);
    expect(error.message).toMatch(/messages/);
    await stillServes();
  });

  it('messages that are not an array → 400', async () => {
    await expectError(await post(JSON.stringify({ model: 'chat', messages: 'hi' })), 400);
    await stillServes();
  });

  it('stream: "yes" → 400', async () => {
    const error = await expectError(await post(JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream: 'yes' })), 400);
    expect(error.message).toMatch(/stream/);
    await stillServes();
  });

  it('a body over max_body_bytes (with content-length) → 413', async () => {
    const big = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'x'.repeat(MAX_BODY * 3) }] });
    const res = await post(big);
    const error = await expectError(res, 413, 'body_too_large');
    expect(error.message).toContain(String(MAX_BODY));
    await stillServes();
  });

  it('a chunked body that grows over max_body_bytes → 413', async () => {
    const piece = new TextEncoder().encode(`{"model":"chat","messages":[{"role":"user","content":"${'y'.repeat(1000)}`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent >= 12) {
          controller.enqueue(new TextEncoder().encode('"}]}'));
          controller.close();
          return;
        }
        sent++;
        controller.enqueue(piece);
        await sleep(5);
      },
    });
    const res = await post(body);
    await expectError(res, 413, 'body_too_large');
    await stillServes();
  });

  it('a body over max_body_bytes sent with node:http (declared length, body written after) → 413', async () => {
    const big = Buffer.from(JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'z'.repeat(MAX_BODY * 50) }] }));
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': big.length },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(big);
    });
    expect(status).toBe(413);
    expect(openaiError(JSON.parse(text)).code).toBe('body_too_large');
    await stillServes();
  });

  it('a body exactly at max_body_bytes is accepted', async () => {
    const base = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: '' }] });
    const exact = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'a'.repeat(MAX_BODY - base.length) }] });
    expect(Buffer.byteLength(exact)).toBe(MAX_BODY);
    const res = await post(exact);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });

  it('unknown route → 404 listing the known routes', async () => {
    const res = await post(JSON.stringify({ model: 'gpt-5-turbo', messages: [{ role: 'user', content: 'hi' }] }));
    const error = await expectError(res, 404);
    expect(error.message).toContain('gpt-5-turbo');
    expect(error.message).toContain('chat');
    expect(error.message).toContain('code');
    const line = await logLine(p, res.headers.get('x-request-id'));
    expect(line.status).toBe(404);
    await stillServes();
  });

  it('unknown route through the OpenAI SDK is a 404 APIError', async () => {
    const client = new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(404);
    expect((err as APIError).message).toContain('chat');
    await stillServes();
  });

  it('GET /v1/chat/completions → 405', async () => {
    const res = await fetch(`${p.origin}/v1/chat/completions`);
    await expectError(res, 405);
    expect(res.headers.get('allow')).toBe('POST');
    await stillServes();
  });

  it('POST /v1/models → 405', async () => {
    await expectError(await post(GOOD, undefined, '/v1/models'), 405);
    await stillServes();
  });

  it('unknown path → 404', async () => {
    await expectError(await fetch(`${p.origin}/v1/completions-typo`), 404);
    await expectError(await post(GOOD, undefined, '/v2/chat/completions'), 404);
    // `/` is Ollama's probe now ("Ollama is running"): another path no endpoint has.
    await expectError(await fetch(`${p.origin}/nothing-here`), 404);
    await stillServes();
  });

  it('a query string does not change the endpoint', async () => {
    const res = await post(GOOD, undefined, '/v1/chat/completions?api-version=1');
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });

  it('content-type text/plain → 415', async () => {
    await expectError(await post(GOOD, { 'content-type': 'text/plain' }), 415);
    await stillServes();
  });

  it('content-type application/x-www-form-urlencoded (curl -d) → 415', async () => {
    await expectError(await post(GOOD, { 'content-type': 'application/x-www-form-urlencoded' }), 415);
    await stillServes();
  });

  it('content-type application/json; charset=utf-8 is accepted', async () => {
    const res = await post(GOOD, { 'content-type': 'application/json; charset=utf-8' });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });
});

describe('garbage on the wire does not crash the server', () => {
  it('a malformed request line gets a 400 and the server keeps serving', async () => {
    const reply = await rawExchange(port, 'THIS IS NOT HTTP AT ALL\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    await stillServes();
  });

  it('binary junk and a bad header line do not crash it', async () => {
    await rawExchange(port, Buffer.from([0, 1, 2, 255, 254, 13, 10, 13, 10]));
    const reply = await rawExchange(port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nthis header has no colon\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    await stillServes();
  });

  it('a client that disconnects halfway through its body does not crash it', async () => {
    await rawExchange(
      port,
      'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"model":"chat","mess',
      { destroyAfterWrite: true },
    );
    await sleep(50);
    await stillServes();
  });

  it('a client that hangs up mid-body is not reported on stderr as an llm-route internal error', async () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      await rawExchange(
        port,
        'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"model":"chat","mess',
        { destroyAfterWrite: true },
      );
      await sleep(100);
    } finally {
      spy.mockRestore();
    }
    // An everyday client disconnect is not a bug in llm-route: no "internal error" stack trace.
    expect(written.join('')).not.toMatch(/internal error/);
    await stillServes();
  });

  it('a bad chunked encoding does not crash it', async () => {
    const reply = await rawExchange(
      port,
      'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nnot a chunk\r\n\r\n',
    );
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    await stillServes();
  });

  it('many bad requests in a row leave the proxy healthy', async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? post('{bad') : rawExchange(port, 'GARBAGE\r\n\r\n')).then(async (r) => {
          if (r instanceof Response) await r.arrayBuffer();
        }),
      ),
    );
    await waitFor(async () => (await fetch(`${p.origin}/healthz`)).status === 200);
    await stillServes();
  });
});
