import { describe, expect, it } from 'vitest';
import { chunk, healthyStream, type Script } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, requestLog, useHarness } from '../../helpers/harness.js';
import { streamWith } from '../../helpers/resume-clients.js';
import { breakAfter, FULL, lastMessage, PROTOCOLS, resumeRoute as resumeOn, taggedStream, WORDS } from '../../helpers/resume-scripts.js';

const h = useHarness();
const resumeRoute = (first: Script, second: Script, opts?: Parameters<typeof resumeOn>[3]) => resumeOn(h, first, second, opts);

describe.each(PROTOCOLS)('mid-stream recovery, %s client', (protocol) => {
  it('continues on the next tier: the delivered text as a trailing assistant message, the rest as the same message', async () => {
    const { b, proxy } = await resumeRoute(breakAfter(4), taggedStream(WORDS.slice(4), 'second'));
    const seen = await streamWith(protocol, proxy);
    expect(seen.failed).toBeNull();
    expect(seen.text).toBe(FULL);
    expect(seen.finalText).toBe(FULL);
    // One message: one id (Chat's chunk id; Messages' message id; Responses' response and item ids), one content index.
    expect(seen.ids.size).toBe(protocol === 'responses' ? 2 : 1);
    expect(seen.indexes.size).toBe(1);
    // Chat from a Chat tier stays a byte relay: the id is the first upstream's, and the recovery carries it on.
    if (protocol === 'chat') expect([...seen.ids]).toEqual(['chatcmpl-fake']);
    expect(lastMessage(b.requests[0].body)).toEqual({ role: 'assistant', content: 'The quick brown fox ' });
    // What is left of the answer's length limit: the client's (or the tier's default) less a token per delivered delta.
    const limit = protocol === 'messages' ? 200 : undefined;
    if (limit !== undefined) expect(b.requests[0].body.max_tokens).toBe(limit - 4);
    const line = await requestLog(proxy);
    expect(line.outcome).toBe('ok');
    expect(line.resumed).toEqual({ from: 'a', to: 'b', how: 'continue', why: 'break', at_chars: 20, result: 'ok' });
    const { samples } = await fetchMetrics(proxy);
    expect(metric(samples, 'llm_stream_resumes_total', { route: 'chat', how: 'continue', result: 'ok', why: 'break' })).toBe(1);
  });

  it('falls back to a verified replay when the recovery tier refuses the prefill (400); an identical replay is seamless', async () => {
    const { b, proxy } = await resumeRoute(breakAfter(3), async (ctx) => {
      if (ctx.index === 0)
        return ctx.error(400, 'This model does not support assistant message prefill. The conversation must end with a user message.', {
          type: 'invalid_request_error',
        });
      return healthyStream(WORDS)(ctx);
    });
    const seen = await streamWith(protocol, proxy);
    expect(seen.failed).toBeNull();
    expect(seen.text).toBe(FULL);
    expect(seen.finalText).toBe(FULL);
    expect(seen.indexes.size).toBe(1);
    expect(b.requests).toHaveLength(2);
    expect((lastMessage(b.requests[1].body) as { role: string }).role).toBe('user'); // the same request again
    const line = await requestLog(proxy);
    expect(line.resumed).toEqual({ from: 'a', to: 'b', how: 'replay', why: 'break', at_chars: 'The quick brown '.length, result: 'ok' });
  });

  it('replays on a tier without prefill, and a replay that differs from what the client has ends with the error event', async () => {
    const { b, proxy } = await resumeRoute(breakAfter(3), healthyStream(['The ', 'quick ', 'red ', 'fox.']), { prefill: false });
    const seen = await streamWith(protocol, proxy);
    expect(seen.failed).not.toBeNull();
    expect(seen.text).toBe('The quick brown '); // never a second text
    expect(seen.finalText).toBeNull();
    expect(b.requests).toHaveLength(1);
    expect((lastMessage(b.requests[0].body) as { role: string }).role).toBe('user');
    const line = await requestLog(proxy);
    expect(line.outcome).toBe('interrupted');
    expect(line.resumed).toEqual({ from: 'a', to: 'b', how: 'replay', why: 'break', at_chars: 16, result: 'diverged' });
    const { samples } = await fetchMetrics(proxy);
    expect(metric(samples, 'llm_stream_resumes_total', { route: 'chat', how: 'replay', result: 'diverged', why: 'break' })).toBe(1);
  });

  it('an identical replay on a tier without prefill is seamless (only the text past the delivered prefix is relayed)', async () => {
    // The replay's chunks are cut elsewhere than the first stream's: the comparison is by characters.
    const { proxy } = await resumeRoute(breakAfter(3), healthyStream(['The quick', ' brown fox', ' jumps over the lazy dog.']), { prefill: false });
    const seen = await streamWith(protocol, proxy);
    expect(seen.failed).toBeNull();
    expect(seen.text).toBe(FULL);
    expect(seen.finalText).toBe(FULL);
  });

  it("a break inside a tool call's arguments ends with the error event, no recovery", async () => {
    const toolBreak: Script = async (ctx) => {
      ctx.startStream();
      ctx.event(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'ls', arguments: '' } }] }));
      ctx.event(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"pa' } }] }));
      await ctx.wait(30);
      ctx.destroy();
    };
    const { b, proxy } = await resumeRoute(toolBreak, healthyStream(WORDS));
    const seen = await streamWith(protocol, proxy);
    expect(seen.failed).not.toBeNull();
    expect(b.requests).toHaveLength(0);
    const line = await requestLog(proxy);
    expect(line.outcome).toBe('interrupted');
    expect(line.resumed).toBeUndefined();
  });

  it('a second break ends with the error event (at most one recovery)', async () => {
    const { b, proxy } = await resumeRoute(breakAfter(3), breakAfter(2, WORDS.slice(3)));
    const seen = await streamWith(protocol, proxy);
    expect(seen.failed).not.toBeNull();
    expect(seen.text).toBe('The quick brown fox jumps ');
    expect(b.requests).toHaveLength(1);
    const line = await requestLog(proxy);
    expect(line.outcome).toBe('interrupted');
    expect(line.resumed).toMatchObject({ how: 'continue', result: 'failed' });
  });

  it('with the default on_break: error, a break is the error event as before and the next tier is never asked', async () => {
    const { b, proxy } = await resumeRoute(breakAfter(3), healthyStream(WORDS), { onBreak: 'error' });
    const seen = await streamWith(protocol, proxy);
    expect(seen.failed).not.toBeNull();
    expect(seen.text).toBe('The quick brown ');
    expect(b.requests).toHaveLength(0);
    const line = await requestLog(proxy);
    expect(line.outcome).toBe('interrupted');
    expect(line.resumed).toBeUndefined();
  });
});
