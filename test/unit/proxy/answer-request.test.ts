import { describe, expect, it } from 'vitest';
import { UpstreamCall } from '../../../src/protocols/call.js';
import { clientCodec } from '../../../src/protocols/registry.js';
import { isUnsupported } from '../../../src/protocols/core/types.js';
import { answer } from '../../../src/proxy/answer-request.js';
import { AttemptError } from '../../../src/proxy/attempt-error.js';
import type { RoutingOutcome } from '../../../src/proxy/routing-outcome.js';
import type { StreamEnd, StreamRelay } from '../../../src/proxy/stream-relay.js';
import type { AttemptRecord, RequestFinished, TelemetryEvent } from '../../../src/telemetry/events.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { chatRoute, exchangeOn, loadSpec, parsedRequest, realState } from '../../helpers/loop-kit.js';

/**
 * answer(exchange, outcome) (src/proxy/answer-request.ts): each outcome of the routing loop
 * becomes the client's answer, in its protocol, and the request's one end; the tier that
 * answered is charged what it used. The outcomes are made here as the loop makes them; the
 * exchange writes to a real node:http response, the budgets ledger is the real SQLite one.
 */

const h = useHarness();

const config = loadSpec({
  tiers: [{ name: 'a', url: 'http://127.0.0.1:9/v1' }],
  top: { usage: {}, budgets: [{ scope: 'route:chat', per: 'day', tokens: 100_000 }] },
});
const route = chatRoute(config);
const [tierA] = route.tiers;

const failed = (outcome: string, status?: number): AttemptRecord => ({
  tier: 'a',
  attempt: 1,
  outcome: outcome as AttemptRecord['outcome'],
  ms: 5,
  ...(status ? { status } : {}),
});
const ends = (events: TelemetryEvent[]) => events.filter((e): e is RequestFinished => e.type === 'request_end');

/** Answers `outcome` for a request with `body`; what the client got, the request's end, and the state. */
async function answered(outcome: (call: UpstreamCall) => RoutingOutcome, body: Record<string, unknown> = {}, reserve = false) {
  const state = realState(config, h.defer);
  const { exchange, events, received } = await exchangeOn(h, config, { state });
  const request = parsedRequest(body);
  const routing = exchange.begin(route, request);
  if (reserve) await routing.holds?.reserve(tierA, exchange.client);
  const call = UpstreamCall.prepare(tierA, clientCodec('chat'), request, null);
  if (isUnsupported(call)) throw new Error(call.unsupported);
  const made = outcome(call);
  // A stream was answered at its commit, and its relay ends the response; answer() reads its end.
  const sink = made.kind === 'stream' ? exchange.commit(tierA, made.attempts.length) : null;
  await answer(exchange, made);
  sink?.end(null);
  exchange.close();
  const got = await received;
  const [end] = ends(events);
  return { got, end, events, state, json: got?.body ? (JSON.parse(got.body) as { error?: Record<string, unknown> }) : null };
}

/** A committed stream's relay, ending as the test says (answer reads only its end). */
const relayEnding = (end: Partial<StreamEnd>): StreamRelay =>
  ({ finished: Promise.resolve({ interruption: null, usage: undefined, chunkErrors: 0, text: '', open: null, ...end }) }) as unknown as StreamRelay;

describe('answer: a tier answered', () => {
  it('a stream that finished: ok, committed, its usage; the tier charged that usage', async () => {
    const usage = { prompt_tokens: 30, completion_tokens: 12 };
    const { end, state } = await answered(
      (call) => ({ kind: 'stream', tier: tierA, call, relay: relayEnding({ usage, text: 'Hello' }), attempts: [failed('ok')], resume: null }),
      { stream: true },
      true,
    );
    expect(end).toMatchObject({ tier: 'a', status: 200, outcome: 'ok', committed: true, usage });
    await waitFor(async () => (await state.budgets.remaining('route:chat'))[0].spent === 42, 3000, 'the hold settled to 42');
  });

  it('a stream that broke: interrupted with its error; one the client left: client_abort; no usage: the text to estimate from', async () => {
    const broke = new AttemptError('broken_stream', 'upstream connection broke', { phase: 'body', failover: false, retryable: false });
    const { end } = await answered(
      (call) => ({ kind: 'stream', tier: tierA, call, relay: relayEnding({ interruption: broke, text: 'Hel' }), attempts: [failed('ok')], resume: null }),
      { stream: true },
    );
    expect(end).toMatchObject({ outcome: 'interrupted', error: 'upstream connection broke', usage: undefined, estimate: { completionText: 'Hel' } });
    const gone = new AttemptError('client_abort', 'client disconnected', { phase: 'body', failover: false, retryable: false });
    const left = await answered(
      (call) => ({ kind: 'stream', tier: tierA, call, relay: relayEnding({ interruption: gone }), attempts: [failed('ok')], resume: null }),
      { stream: true },
    );
    expect(left.end).toMatchObject({ outcome: 'client_abort' });
  });

  it("a whole answer: the tier's answer with the routing headers, its usage on record and charged", async () => {
    const body = Buffer.from(JSON.stringify({ id: 'x', choices: [] }));
    const usage = { prompt_tokens: 5, completion_tokens: 3 };
    const { got, end, state } = await answered(
      (call) => ({
        kind: 'unary',
        tier: tierA,
        call,
        answer: { answer: { status: 200, contentType: 'application/json', body }, usage, upstreamBody: body },
        attempts: [failed('server_error', 500), { tier: 'a', attempt: 2, outcome: 'ok', ms: 3, status: 200 }],
      }),
      {},
      true,
    );
    expect(got).toMatchObject({ status: 200, body: body.toString(), headers: { 'x-llm-route-tier': 'a', 'x-llm-route-attempts': '2' } });
    expect(end).toMatchObject({ outcome: 'ok', usage });
    await waitFor(async () => (await state.budgets.remaining('route:chat'))[0].spent === 8, 3000, 'the hold settled to 8');
  });

  it("the payload's fault: the upstream's own answer goes to the client, upstream_rejected", async () => {
    const rejection = Buffer.from(JSON.stringify({ error: { message: 'bad field' } }));
    const error = new AttemptError('bad_request', 'bad field', { phase: 'headers', failover: false, retryable: false });
    const { got, end } = await answered(() => ({
      kind: 'rejected',
      tier: tierA,
      answer: { status: 400, contentType: 'application/json', body: rejection },
      error,
      attempts: [failed('bad_request', 400)],
    }));
    expect(got).toMatchObject({ status: 400, body: rejection.toString() });
    expect(end).toMatchObject({ tier: 'a', status: 400, outcome: 'upstream_rejected', error: 'bad field' });
  });
});

describe('answer: no tier answered', () => {
  it.each([
    ['every tier failed: 502', { timedOut: false, planned: 1 }, [failed('server_error', 500)], 502, 'all_tiers_failed', 'failed'],
    ['every tier timed out: 504', { timedOut: true, planned: 1 }, [failed('ttft_timeout')], 504, 'all_tiers_timed_out', 'timeout'],
    ['no tier drawn: 503', { timedOut: false, planned: 0 }, [], 503, 'no_tier_available', 'failed'],
  ] as const)('%s', async (_name, shape, attempts, status, code, outcome) => {
    const { got, end, json } = await answered(() => ({ kind: 'exhausted', ...shape, attempts: [...attempts], limited: null }));
    expect(got?.status).toBe(status);
    expect(got?.headers['x-llm-route-attempts']).toBe(String(attempts.length));
    expect(json?.error).toMatchObject({ code, attempts: [...attempts] });
    expect(end).toMatchObject({ tier: null, status, outcome });
  });

  it("llm-route's own limit or budget: 429 with Retry-After in whole seconds", async () => {
    const attempts = [{ tier: 'a', attempt: 1, outcome: 'budget' as const, ms: 0, message: 'budget route:chat per day exhausted (0 tokens left)' }];
    const { got, json, end } = await answered(() => ({
      kind: 'exhausted',
      timedOut: false,
      planned: 1,
      attempts,
      limited: { outcome: 'budget', retryAfterMs: 2_500 },
    }));
    expect(got).toMatchObject({ status: 429, headers: { 'retry-after': '3' } });
    expect(json?.error).toMatchObject({ code: 'budget_exhausted' });
    expect(end).toMatchObject({ status: 429, outcome: 'failed' });
  });

  it('no tier can carry it: 400 unsupported_request, each reason said', async () => {
    const { got, json, end } = await answered(() => ({ kind: 'unsupported', reasons: ['a: images are not supported'], attempts: [failed('unsupported')] }));
    expect(got?.status).toBe(400);
    expect(json?.error).toMatchObject({ code: 'unsupported_request', message: expect.stringContaining('a: images are not supported') });
    expect(end).toMatchObject({ status: 400, outcome: 'bad_request' });
  });

  it("too long for every tier: 400 context_length_exceeded, in Anthropic's words", async () => {
    const message = 'prompt is too long: 9000 tokens > 4096 maximum';
    const { got, json } = await answered(() => ({
      kind: 'too_long',
      failure: { promptTokens: 9000, maxTokens: 4096, message },
      attempts: [failed('too_long')],
    }));
    expect(got?.status).toBe(400);
    expect(json?.error).toMatchObject({ code: 'context_length_exceeded', message });
  });

  it("the client's own key was missing: 401; every refusal a 403: 403", async () => {
    const missing = await answered(() => ({ kind: 'client_credential', attempts: [{ ...failed('no_client_credential'), message: 'no key for it' }] }));
    expect(missing.got?.status).toBe(401);
    expect(missing.json?.error).toMatchObject({ code: 'missing_client_credential' });
    const refused = await answered(() => ({ kind: 'client_credential', attempts: [{ ...failed('credential_rejected', 403), message: 'not allowed' }] }));
    expect(refused.got?.status).toBe(403);
    expect(refused.json?.error).toMatchObject({ code: 'client_credential_refused' });
  });

  it('aborted, the client gone: recorded 499 with the tier at work, nothing written', async () => {
    const { end } = await answered(() => ({ kind: 'aborted', attempts: [failed('client_abort')], tier: tierA }));
    expect(end).toMatchObject({ status: 499, outcome: 'client_abort', tier: 'a' });
  });
});
