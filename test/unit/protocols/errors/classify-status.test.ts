import { describe, expect, it } from 'vitest';
import { parseRetryAfter, transportError } from '../../../../src/proxy/attempt-error.js';
import { retryDelayMs } from '../../../../src/proxy/backoff.js';
import { classifyStatus } from '../../../../src/protocols/errors/classify-status.js';
import { chatWire } from '../../../../src/protocols/chat/wire.js';
import {
  EVENT_CONTENT,
  EVENT_DONE,
  EVENT_ERROR,
  EVENT_FINISH,
  EVENT_PROGRESS,
  EVENT_MALFORMED,
  EVENT_USAGE,
  EVENT_USAGE_ONLY,
  type EventFacts,
  newFacts,
} from '../../../../src/protocols/core/event-facts.js';
import { tier } from '../../../helpers/config.js';

const err = (message: string, code: string | null = null): string => JSON.stringify({ error: { message, type: 'invalid_request_error', code } });
const classify = (status: number, body = '', headers = {}) => classifyStatus(status, body, headers);

describe('status classification (whose fault?)', () => {
  it.each([
    [429, true, true],
    [500, true, true],
    [502, true, true],
    [503, true, true],
    [504, true, true],
    [501, true, false],
    [408, true, false],
    [409, true, false],
    [401, true, false],
    [403, true, false],
    [404, true, false],
    [405, true, false],
    [410, true, false],
    [415, true, false],
  ])('HTTP %i: failover=%s retryable=%s', (status, failover, retryable) => {
    const verdict = classify(status, err('x'));
    expect(verdict.failover).toBe(failover);
    expect(verdict.retryable).toBe(retryable);
  });

  it("a context-length 400 or 413 is the tier's fault", () => {
    for (const message of [
      "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",
      'prompt is too long: 210000 tokens > 200000 maximum',
      'the input exceeds the context window of this model',
    ]) {
      expect(classify(400, err(message))).toMatchObject({ reason: 'context_length', failover: true, retryable: false });
    }
    expect(classify(400, err('too long', 'context_length_exceeded')).failover).toBe(true);
    expect(classify(413, err('Request too large: maximum context length exceeded')).failover).toBe(true);
  });

  it('a payload error whose body echoes the prompt is not mistaken for a context-length one', () => {
    const body = JSON.stringify({
      error: { message: "Invalid value for 'temperature'", type: 'invalid_request_error' },
      echo: 'explain the maximum context length of llama',
    });
    expect(classify(400, body)).toMatchObject({ reason: 'bad_request', failover: false });
  });

  it("other 400s, 413 and 422 are the payload's fault and keep the upstream message", () => {
    expect(classify(400, err("Invalid value for 'temperature': must be <= 2"))).toMatchObject({
      reason: 'bad_request',
      failover: false,
      message: "Invalid value for 'temperature': must be <= 2",
    });
    expect(classify(400, err('Your request was rejected as a result of our safety system.', 'content_policy_violation'))).toMatchObject({
      reason: 'content_policy',
      failover: false,
    });
    expect(classify(413, 'payload too large').failover).toBe(false);
    expect(classify(422, err('unprocessable')).failover).toBe(false);
  });

  it('reads messages from non-OpenAI error bodies too', () => {
    expect(classify(404, JSON.stringify({ error: 'model "qwen2.5:7b" not found, try pulling it first' })).message).toContain('not found');
    expect(classify(502, '<html>bad gateway</html>').message).toContain('bad gateway');
    expect(classify(503, '').message).toBe('HTTP 503');
  });
});

describe('transport errors', () => {
  const withCode = (code: string, cause?: Error): Error => Object.assign(new Error(code), { code, cause });

  it('refused: fail over, no retry; reset: retry', () => {
    expect(transportError(withCode('ECONNREFUSED'), 'connect')).toMatchObject({ reason: 'connection_refused', failover: true, retryable: false });
    expect(transportError(withCode('ECONNRESET'), 'headers')).toMatchObject({ reason: 'connection_reset', retryable: true });
    expect(transportError(withCode('UND_ERR_SOCKET'), 'headers')).toMatchObject({ reason: 'connection_reset', retryable: true });
  });

  it('other transport failures (TLS, bad header values) fail over without a retry', () => {
    expect(transportError(withCode('ERR_TLS_CERT_ALTNAME_INVALID'), 'connect')).toMatchObject({ reason: 'transport_error', failover: true, retryable: false });
    expect(transportError(withCode('UND_ERR_INVALID_ARG'), 'headers')).toMatchObject({ reason: 'transport_error', retryable: false });
    expect(transportError(withCode('ETIMEDOUT'), 'connect')).toMatchObject({ reason: 'connect_timeout', timedOut: true });
  });

  it('connect timeout counts as timed out', () => {
    expect(transportError(withCode('UND_ERR_CONNECT_TIMEOUT'), 'connect')).toMatchObject({ reason: 'connect_timeout', timedOut: true, retryable: false });
  });

  it('finds the code in a wrapped cause', () => {
    const wrapped = Object.assign(new Error('fetch failed'), { cause: withCode('ECONNREFUSED') });
    expect(transportError(wrapped, 'connect').reason).toBe('connection_refused');
  });
});

describe('Retry-After and backoff', () => {
  it('parses seconds and HTTP dates', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter('0.5')).toBe(500);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 7_000)).toBe(3000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });

  const retry = { attempts: 3, base_ms: 250, max_ms: 4000 };

  it('honours Retry-After inside the budget and fails over past it', () => {
    expect(retryDelayMs(retry, 1, 1500)).toBe(1500);
    expect(retryDelayMs(retry, 1, 5000)).toBeNull();
  });

  it('uses full jitter under an exponential ceiling capped at max_ms', () => {
    expect(retryDelayMs(retry, 1, undefined, () => 0.999)).toBe(249);
    expect(retryDelayMs(retry, 3, undefined, () => 0.999)).toBe(999);
    expect(retryDelayMs(retry, 10, undefined, () => 0.999)).toBe(3996);
    expect(retryDelayMs(retry, 2, undefined, () => 0)).toBe(0);
  });
});

describe('event inspection', () => {
  const inspect = (data: string): EventFacts => {
    const facts: EventFacts = newFacts();
    chatWire.reader().read(data, facts);
    return facts;
  };
  const delta = (d: Record<string, unknown>, finish: string | null = null): string =>
    JSON.stringify({ choices: [{ index: 0, delta: d, finish_reason: finish }] });

  it('a role-only chunk does not commit; content, reasoning, tool calls and finish do', () => {
    expect(inspect(delta({ role: 'assistant', content: '' })).flags & EVENT_CONTENT).toBe(0);
    expect(inspect(delta({ role: 'assistant' })).flags & EVENT_CONTENT).toBe(0);
    expect(inspect(delta({ content: 'Hi' })).flags & EVENT_CONTENT).toBeTruthy();
    expect(inspect(delta({ reasoning_content: 'thinking' })).flags & EVENT_CONTENT).toBeTruthy();
    expect(inspect(delta({ reasoning: 'thinking' })).flags & EVENT_CONTENT).toBeTruthy();
    expect(inspect(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '' } }] })).flags & EVENT_CONTENT).toBeTruthy();
    expect(inspect(delta({}, 'stop')).flags).toBe(EVENT_CONTENT | EVENT_FINISH | EVENT_PROGRESS);
  });

  it('recognises usage-only chunks, errors, [DONE] and malformed JSON', () => {
    const usage = inspect(JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }));
    expect(usage.flags).toBe(EVENT_USAGE | EVENT_USAGE_ONLY);
    expect(usage.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4 });
    expect(inspect(JSON.stringify({ choices: [{ delta: { content: 'x' } }], usage: null })).usage).toBeUndefined();
    expect(inspect(JSON.stringify({ error: { message: 'overloaded' } })).flags & EVENT_ERROR).toBeTruthy();
    expect(inspect('[DONE]').flags).toBe(EVENT_DONE);
    expect(inspect('{"choices":[{"delta":{"content":"x"').flags).toBe(EVENT_MALFORMED);
    expect(inspect('42').flags).toBe(EVENT_MALFORMED);
  });
});

describe('building the upstream request', () => {
  it('replaces only model, asks for usage on streams, and authenticates with the provider key', () => {
    const base = tier('cloud', { model: 'gpt-x' });
    const provider = { ...base.provider, name: 'cloud', base_url: 'https://api.example.com/v1/', api_key: 'sk-1', local: false };
    const cloud = { ...base, provider };
    const body = { model: 'chat', messages: [], tools: [{ type: 'function' }], stream_options: { foo: 1 }, x_custom: { a: 1 } };
    const req = chatWire.relayRequest(provider, cloud, body, true, {});
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe('Bearer sk-1');
    expect(JSON.parse(req.body)).toEqual({ ...body, model: 'gpt-x', stream_options: { foo: 1, include_usage: true } });
    expect(body.model).toBe('chat'); // the client's body is not mutated
    const plain = chatWire.relayRequest({ ...provider, api_key: undefined }, cloud, body, false, {});
    expect(plain.headers.authorization).toBeUndefined();
    expect(JSON.parse(plain.body).stream_options).toEqual({ foo: 1 });
  });
});
