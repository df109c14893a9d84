import { describe, expect, it, vi } from 'vitest';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { logLine, openaiError, useHarness } from '../../helpers/harness.js';
import { chat, sseText } from '../../helpers/proxy.js';
import { answer } from '../../helpers/control-kit.js';

/**
 * A bug in llm-route (here: a control-plane call that throws) must cost the one request it
 * hit: a clean 500 in the client's protocol, the stack on stderr, and a server that goes on
 * serving, streams in flight included.
 */

const h = useHarness();

/** Captures stderr for the rest of the test (the 500 path writes the stack there). */
function captureStderr(): () => string {
  let text = '';
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  });
  h.defer(() => spy.mockRestore());
  return () => text;
}

describe('an internal error', () => {
  it('answers that request 500 internal_error, logs it, and the next requests are served', async () => {
    const up = await h.fake();
    up.always(answer('fine'));
    const p = await h.proxy({ tiers: [{ name: 'local', url: up.url }] });
    const stderr = captureStderr();
    const gate = p.server.app.gate;
    const weight = gate.weight;
    gate.weight = () => {
      throw new Error('a bug in the weight lookup');
    };

    const res = await chat(p, { stream: true }, { headers: { 'x-request-id': 'bug-1' } });
    expect(res.status).toBe(500);
    expect(res.headers.get('x-request-id')).toBe('bug-1');
    const error = openaiError(await res.json());
    expect(error).toMatchObject({ type: 'internal_error', code: 'internal_error', message: 'internal error in llm-route' });
    expect(JSON.stringify(error)).not.toContain('weight lookup'); // the stack stays on our side
    expect(stderr()).toMatch(/llm-route: internal error on POST \/v1\/chat\/completions: Error: a bug in the weight lookup\n\s+at /);
    expect(await logLine(p, 'bug-1')).toMatchObject({ status: 500, outcome: 'failed', error: 'internal error' });
    expect(up.requests).toHaveLength(0);

    gate.weight = weight;
    for (const stream of [true, false]) {
      const ok = await chat(p, { stream });
      expect(ok.status).toBe(200);
      expect(stream ? sseText(await ok.text()) : ((await ok.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe(
        'fine',
      );
    }
    expect(p.server.app.inFlight.size).toBe(0);
  });

  it('does not touch a stream already in flight, and other endpoints go on answering', async () => {
    const up = await h.fake();
    up.always(healthyStream(['slow', ' but', ' whole'], { delayMs: 150 }));
    const p = await h.proxy({ tiers: [{ name: 'local', url: up.url }] });
    captureStderr();
    const streaming = chat(p, { stream: true });
    await vi.waitFor(() => expect(up.requests).toHaveLength(1));

    const render = p.server.app.metrics.render;
    p.server.app.metrics.render = () => Promise.reject(new Error('a bug in /metrics'));
    const metrics = await fetch(`${p.origin}/metrics`);
    expect(metrics.status).toBe(500);
    expect(openaiError(await metrics.json()).code).toBe('internal_error');
    const health = p.server.app.health;
    const view = health.view;
    health.view = () => {
      throw new Error('a bug in /healthz');
    };
    expect((await fetch(`${p.origin}/healthz`)).status).toBe(500);

    const res = await streaming;
    expect(res.status).toBe(200);
    expect(sseText(await res.text())).toBe('slow but whole');
    p.server.app.metrics.render = render;
    health.view = view;
    expect((await fetch(`${p.origin}/metrics`)).status).toBe(200);
    expect((await fetch(`${p.origin}/healthz`)).status).toBe(200);
  });
});
