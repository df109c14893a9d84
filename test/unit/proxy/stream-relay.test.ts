import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AttemptError } from '../../../src/proxy/attempt-error.js';
import { ShutdownError } from '../../../src/proxy/shutdown.js';
import { chunk } from '../../helpers/fake-upstream.js';
import { sseEvent } from '../../helpers/proxy-parts.js';
import { errorMessageOf, relayAfter, turn } from '../../helpers/relay-kit.js';

/**
 * StreamRelay, a committed stream, driven through its reader interface (onBody, onEnd,
 * onBroken, onClientGone) with the chat wire's real framer, output and reader, a recording
 * sink, and a recording stand-in for the dispatch side it steers (pause, resume, cancel,
 * linger, finish): test/helpers/relay-kit.ts. Timers are vitest's fake ones: idle and cap
 * timers are checked exactly (what counts as silence: stream-silence.test.ts).
 */

const HI = sseEvent(chunk({ content: 'Hi' }));
const THERE = sseEvent(chunk({ content: ' there' }));
const FINISH = sseEvent(chunk({}, 'stop'));
const DONE = sseEvent('[DONE]');
const UPSTREAM_ERROR = sseEvent({ error: { message: 'model crashed', type: 'server_error' } });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('relaying', () => {
  it('writes what was held at commit first, then each chunk of whole events as the very Buffer that came', async () => {
    const { relay, sink } = relayAfter(HI);
    await turn();
    const whole = Buffer.from(THERE + FINISH);
    relay.onBody(whole);
    await turn();
    expect(sink.writes[0].toString()).toBe(HI);
    expect(sink.writes[1]).toBe(whole);
  });

  it('puts what was held on the wire at commit itself, not at the end of the turn that reads the rest of its chunk', async () => {
    const { relay, sink } = relayAfter(HI);
    // Synchronously, inside the commit: written and sent.
    expect(sink.writes.map(String)).toEqual([HI]);
    expect(sink.sentAfter).toEqual([1]);
    // The rest of a chunk still leaves as one write at the end of its turn, without a send of its own.
    relay.onBody(Buffer.from(THERE + FINISH));
    expect(sink.writes).toHaveLength(1);
    await turn();
    expect(sink.writes.map(String)).toEqual([HI, THERE + FINISH]);
    expect(sink.sentAfter).toEqual([1]);
  });

  it('an event split across chunks goes out once it is whole, its bytes unchanged', async () => {
    const { relay, sink } = relayAfter(HI);
    relay.onBody(Buffer.from(THERE.slice(0, 10)));
    await turn();
    expect(sink.text()).toBe(HI);
    relay.onBody(Buffer.from(THERE.slice(10)));
    await turn();
    expect(sink.text()).toBe(HI + THERE);
  });

  it('the terminator completes the stream at once (the upstream gets a moment to close); what follows is ignored', async () => {
    const { relay, sink, dispatch, end } = relayAfter(HI);
    relay.onBody(Buffer.from(FINISH + DONE));
    await turn();
    expect(end()?.interruption).toBeNull();
    expect(sink.ends).toEqual([null]);
    expect(dispatch.calls).toEqual(['finish', 'linger 2000']);
    relay.onBody(Buffer.from(THERE));
    relay.onEnd();
    await turn();
    expect(sink.text()).toBe(HI + FINISH + DONE);
    expect(sink.ends).toHaveLength(1);
  });

  it('a finished stream that closes without its terminator gets one added', async () => {
    const { relay, sink, end } = relayAfter(HI);
    relay.onBody(Buffer.from(FINISH));
    relay.onEnd();
    await turn();
    expect(end()?.interruption).toBeNull();
    expect(sink.text()).toBe(HI + FINISH + DONE);
  });

  it('a stream that closes before its finish is broken: one error event, counted as a chunk error', async () => {
    const { relay, sink, end } = relayAfter(HI);
    relay.onBody(Buffer.from(THERE));
    relay.onEnd();
    await turn();
    expect(end()).toMatchObject({ interruption: { reason: 'broken_stream', phase: 'body', failover: false }, chunkErrors: 1 });
    expect(sink.ends).toHaveLength(1);
    expect(errorMessageOf(sink.ends[0])).toBe('llm-route: upstream ended the stream without finishing it');
    expect(sink.writes.map(String).join('')).toBe(HI + THERE);
  });
});

describe('failures after commit', () => {
  it("the upstream's own error event is the client's last, after the events before it; the upstream is cut", async () => {
    const { relay, sink, dispatch, end } = relayAfter(HI);
    relay.onBody(Buffer.from(THERE + UPSTREAM_ERROR + FINISH));
    await turn();
    expect(end()?.interruption).toMatchObject({ reason: 'upstream_error', phase: 'body', failover: false });
    expect(sink.text()).toBe(HI + THERE + UPSTREAM_ERROR);
    expect(sink.ends.map(String)).toEqual([UPSTREAM_ERROR]);
    expect(dispatch.calls).toEqual(['cancel', 'finish']);
  });

  it('an upstream break: exactly one error event, however many breaks and ends follow', async () => {
    const { relay, sink, end } = relayAfter(HI);
    const reset = new AttemptError('connection_reset', 'connection broken (ECONNRESET)', { phase: 'body', failover: true, retryable: true });
    relay.onBroken(reset);
    relay.onBroken(reset);
    relay.onEnd();
    await turn();
    expect(end()?.interruption).toMatchObject({ reason: 'broken_stream', failover: false, retryable: false });
    expect(sink.ends).toHaveLength(1);
    expect(errorMessageOf(sink.ends[0])).toBe('llm-route: upstream connection broke after the first token: connection broken (ECONNRESET)');
  });

  it('an event larger than 4 MiB: answer_too_large after the first token (nothing broke), one error event, the upstream cut', async () => {
    const { relay, sink, dispatch, end } = relayAfter(HI);
    relay.onBody(Buffer.from(`data: {"x":"${'x'.repeat(4 * 1024 * 1024 + 16)}`));
    await turn();
    expect(end()?.interruption).toMatchObject({ reason: 'answer_too_large', failover: false });
    expect(errorMessageOf(sink.ends[0])).toBe('llm-route: upstream answer too large: a stream event larger than 4 MiB, after the first token');
    expect(dispatch.calls[0]).toBe('cancel');
  });

  it("with keepOpen (on_break: resume), a break leaves the client's response open for a recovery", async () => {
    const asked: string[] = [];
    const { relay, sink, end } = relayAfter(HI, {
      keepOpen: (err) => {
        asked.push(err.reason);
        return true;
      },
    });
    relay.onBroken(new AttemptError('connection_reset', 'reset', { phase: 'body', failover: true, retryable: true }));
    await turn();
    expect(asked).toEqual(['broken_stream']);
    expect(sink.ends).toEqual([]);
    expect(sink.text()).toBe(HI);
    expect(end()?.open).toBe(sink);
  });
});

describe('the client', () => {
  it('gone: nothing more is written, no error event; the call is finished', async () => {
    const { relay, sink, dispatch, end, client } = relayAfter(HI);
    await turn();
    client.abort();
    relay.onClientGone(new AttemptError('client_abort', 'client disconnected', { phase: 'body', failover: false, retryable: false, blame: null }));
    relay.onBody(Buffer.from(THERE));
    await turn();
    expect(end()?.interruption).toMatchObject({ reason: 'client_abort' });
    expect(sink.ends).toEqual([]);
    expect(sink.text()).toBe(HI);
    expect(dispatch.calls).toEqual(['finish']);
  });

  it('a stopping server still tells its client why the stream ends', async () => {
    const { relay, sink, end } = relayAfter(HI);
    relay.onClientGone(new AttemptError('shutdown', new ShutdownError().message, { phase: 'body', failover: false, retryable: false, blame: null }));
    await turn();
    expect(end()?.interruption).toMatchObject({ reason: 'shutdown' });
    expect(errorMessageOf(sink.ends[0])).toBe('llm-route: llm-route is shutting down');
  });

  it('not keeping up pauses the upstream once, until the sink drains', async () => {
    const { relay, sink, dispatch } = relayAfter(HI);
    sink.full = true;
    await turn();
    relay.onBody(Buffer.from(THERE));
    await turn();
    relay.onBody(Buffer.from(THERE));
    await turn();
    expect(dispatch.calls).toEqual(['pause']);
    expect(sink.waitingForDrain).toBe(1);
    sink.drain();
    expect(dispatch.calls).toEqual(['pause', 'resume']);
  });
});

describe('timers', () => {
  it('idle_ms without content ends the stream with idle_timeout and one error event; each chunk of content restarts it', async () => {
    const { relay, sink, dispatch, end } = relayAfter(HI, { timeouts: { idle_ms: 1_000 } });
    vi.advanceTimersByTime(900);
    relay.onBody(Buffer.from(THERE));
    vi.advanceTimersByTime(900);
    await turn();
    expect(end()).toBeNull();
    vi.advanceTimersByTime(100);
    await turn();
    expect(end()?.interruption).toMatchObject({ reason: 'idle_timeout', phase: 'idle', timedOut: true });
    expect(dispatch.cancelledWith[0]).toBe(end()?.interruption);
    expect(errorMessageOf(sink.ends[0])).toBe('llm-route: no content within 1000 ms');
    expect(sink.ends).toHaveLength(1);
  });

  it("a client that is not reading is not the upstream's silence: no idle timeout while paused", async () => {
    const { relay, sink, end } = relayAfter(HI, { timeouts: { idle_ms: 1_000 } });
    sink.full = true;
    relay.onBody(Buffer.from(THERE));
    await turn();
    vi.advanceTimersByTime(5_000);
    await turn();
    expect(end()).toBeNull();
    sink.drain();
    vi.advanceTimersByTime(999);
    await turn();
    expect(end()).toBeNull();
    vi.advanceTimersByTime(1);
    await turn();
    expect(end()?.interruption).toMatchObject({ reason: 'idle_timeout' });
  });

  it("stream_max_ms counts from the attempt's start: the operator's cap, blaming no one", async () => {
    const { relay, end } = relayAfter(HI, { timeouts: { idle_ms: 10_000, stream_max_ms: 1_000 }, elapsedMs: 400 });
    relay.onBody(Buffer.from(THERE));
    vi.advanceTimersByTime(599);
    await turn();
    expect(end()).toBeNull();
    vi.advanceTimersByTime(1);
    await turn();
    expect(end()?.interruption).toMatchObject({ reason: 'total_timeout', phase: 'total', failover: false, blame: null });
  });
});
