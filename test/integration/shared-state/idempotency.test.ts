import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { completion, healthyStream, type Script } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, socketClosed, useHarness, waitFor } from '../../helpers/harness.js';
import { chat, type RunningProxy, sseText } from '../../helpers/proxy.js';
import { describeEachBackend, instances, useRedis } from '../../helpers/state-kit.js';

const h = useHarness();
const redis = useRedis();

const sdk = (p: RunningProxy): OpenAI => new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 });
const keyed = (key: string) => ({ headers: { 'Idempotency-Key': key } });

/** A stream that takes a while, so a duplicate arrives while it runs. */
const slowStream = (words: string[], delayMs: number): Script => healthyStream(words, { delayMs });

describeEachBackend('Idempotency-Key (%s)', (backend) => {
  it('one key sent to both instances at once executes upstream once; both get the answer, the duplicate marked replayed', async () => {
    const fake = await h.fake();
    fake.always(slowStream(['one ', 'two ', 'three'], 60));
    const [a, b] = await instances(h, backend, redis, { tiers: [{ name: 'cloud', url: fake.url }] });
    const body = { model: 'chat', stream: true as const, messages: [{ role: 'user' as const, content: 'once please' }] };
    const first = sdk(a).chat.completions.create(body, keyed('k-once')).withResponse();
    await waitFor(() => fake.requests.length === 1, 3000, 'the first request upstream');
    const second = sdk(b).chat.completions.create(body, keyed('k-once')).withResponse();
    const texts: string[] = [];
    const replayed: Array<string | null> = [];
    for (const { data, response } of await Promise.all([first, second])) {
      let text = '';
      for await (const chunk of data) text += chunk.choices[0]?.delta?.content ?? '';
      texts.push(text);
      replayed.push(response.headers.get('x-llm-route-replayed'));
    }
    expect(texts).toEqual(['one two three', 'one two three']);
    expect(replayed).toEqual([null, 'true']);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].headers['idempotency-key']).toBe('k-once');
    const metrics = (await fetchMetrics(b)).samples;
    expect(metric(metrics, 'llm_idempotent_replays_total')).toBe(1);
    expect(metric(metrics, 'llm_requests_total', { outcome: 'replayed' })).toBe(1);
  });

  it('after completion the stored answer is replayed: a stream as the same SSE bytes, on any instance, without asking a tier', async () => {
    const fake = await h.fake();
    fake.always(healthyStream(['same ', 'bytes']));
    const [a, b] = await instances(h, backend, redis, { tiers: [{ name: 'cloud', url: fake.url }] });
    const first = await chat(a, { stream: true }, keyed('k-replay'));
    const firstBytes = Buffer.from(await first.arrayBuffer());
    expect(first.headers.get('x-llm-route-replayed')).toBeNull();
    await waitFor(
      async () => (await chat(b, { stream: true }, keyed('k-replay'))).headers.get('x-llm-route-replayed') === 'true',
      3000,
      'the record to be completed',
    );
    const again = await chat(b, { stream: true }, keyed('k-replay'));
    expect(again.status).toBe(200);
    expect(again.headers.get('x-llm-route-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(again.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(Buffer.from(await again.arrayBuffer()).equals(firstBytes)).toBe(true);
    expect(sseText(firstBytes.toString())).toBe('same bytes');
    expect(fake.requests).toHaveLength(1);
    // The SDK reads a replayed stream like any other.
    const stream = await sdk(a).chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }, keyed('k-replay'));
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('same bytes');
    expect(fake.requests).toHaveLength(1);
  });

  it("the same key with a different body: 422 in the client's protocol; the same JSON in another key order is the same body", async () => {
    const fake = await h.fake();
    fake.always((ctx) => ctx.json(200, completion('stored')));
    const [a, b] = await instances(h, backend, redis, { tiers: [{ name: 'cloud', url: fake.url }] });
    const raw = (p: RunningProxy, text: string) =>
      fetch(`${p.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'k-body' }, body: text });
    expect((await raw(a, '{"model":"chat","messages":[{"role":"user","content":"hi"}],"temperature":0.5}')).status).toBe(200);
    const reordered = await raw(b, '{"temperature":0.5,"messages":[{"content":"hi","role":"user"}],"model":"chat"}');
    expect(reordered.status).toBe(200);
    expect(reordered.headers.get('x-llm-route-replayed')).toBe('true');
    const changed = await raw(b, '{"model":"chat","messages":[{"role":"user","content":"hi"}],"temperature":0.9}');
    expect(changed.status).toBe(422);
    expect(((await changed.json()) as { error: { code: string } }).error.code).toBe('idempotency_key_reused');
    // Anthropic's shape for a Messages client.
    const messages = await fetch(`${b.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k-body-m' },
      body: JSON.stringify({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(messages.status).toBe(200);
    const changedMessages = await fetch(`${a.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k-body-m' },
      body: JSON.stringify({ model: 'chat', max_tokens: 11, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(changedMessages.status).toBe(422);
    expect(await changedMessages.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(fake.requests).toHaveLength(2);
  });

  it("502 is not stored (the next try runs again); the upstream's own payload error is stored and replayed", async () => {
    const fake = await h.fake();
    const [a, b] = await instances(h, backend, redis, { tiers: [{ name: 'cloud', url: fake.url, retry: { attempts: 1 } }] });
    fake.next((ctx) => ctx.error(503, 'overloaded'));
    fake.next((ctx) => ctx.error(400, 'temperature must be at most 2', { type: 'invalid_request_error' }));
    fake.always((ctx) => ctx.json(200, completion('fine')));
    const failed = await chat(a, {}, keyed('k-502'));
    expect(failed.status).toBe(502);
    const rejected = await chat(a, { temperature: 5 }, keyed('k-400'));
    expect(rejected.status).toBe(400);
    const replay = await chat(b, { temperature: 5 }, keyed('k-400'));
    expect(replay.status).toBe(400);
    expect(replay.headers.get('x-llm-route-replayed')).toBe('true');
    expect(await replay.text()).toContain('temperature must be at most 2');
    expect(fake.requests).toHaveLength(2);
    // The 502's key is free again: the same request runs, and now succeeds.
    const retried = await chat(b, {}, keyed('k-502'));
    expect(retried.status).toBe(200);
    expect(retried.headers.get('x-llm-route-replayed')).toBeNull();
    expect(fake.requests).toHaveLength(3);
  });

  it('a failover with a key: the key goes to every tier, the abandoned attempt is closed before the next tier runs, the answer is stored once', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always(async (ctx) => {
      ctx.startStream();
      await ctx.closed; // headers, then silence: a TTFT timeout
    });
    cloud.always(healthyStream(['from ', 'cloud']));
    const [a, b] = await instances(h, backend, redis, {
      tiers: [
        { name: 'local', url: local.url, timeouts: { ttft_ms: 150 }, retry: { attempts: 1 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const res = await chat(a, { stream: true }, keyed('k-failover'));
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(sseText(await res.text())).toBe('from cloud');
    expect(local.requests[0].headers['idempotency-key']).toBe('k-failover');
    expect(cloud.requests[0].headers['idempotency-key']).toBe('k-failover');
    expect(await socketClosed(local, 0)).toBeLessThanOrEqual(cloud.requests[0].at);
    const replay = await waitFor(
      async () => {
        const again = await chat(b, { stream: true }, keyed('k-failover'));
        return again.headers.get('x-llm-route-replayed') === 'true' ? again : null;
      },
      3000,
      'the replay',
    );
    expect(sseText(await replay.text())).toBe('from cloud');
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
  });

  it('a duplicate waits at most idempotency.wait_ms, then 409; a waiting client that leaves is let go', async () => {
    const fake = await h.fake();
    fake.always(slowStream(['slow ', 'answer'], 400));
    const [a, b] = await instances(h, backend, redis, { tiers: [{ name: 'cloud', url: fake.url }], top: { idempotency: { wait_ms: 150 } } });
    const first = chat(a, { stream: true }, keyed('k-wait'));
    await waitFor(() => fake.requests.length === 1, 3000, 'the first request upstream');
    const second = await chat(b, { stream: true }, keyed('k-wait'));
    expect(second.status).toBe(409);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe('idempotency_request_in_progress');
    // A duplicate whose client leaves while it waits ends there (499), and leaves the record alone.
    const leaving = new AbortController();
    const third = chat(b, { stream: true }, { ...keyed('k-wait'), signal: leaving.signal }).catch((err: unknown) => err);
    await new Promise((resolve) => setTimeout(resolve, 50));
    leaving.abort();
    expect(await third).toBeInstanceOf(Error);
    expect(sseText(await (await first).text())).toBe('slow answer');
    await waitFor(() => b.logs.some((l) => l.event === 'request' && l.status === 499), 3000, "the waiting duplicate's 499");
    const replay = await chat(b, { stream: true }, keyed('k-wait'));
    expect(replay.headers.get('x-llm-route-replayed')).toBe('true');
    expect(fake.requests).toHaveLength(1);
  });

  it('a duplicate waiting for its key takes no stream slot: at server.max_streams 1 it waits and gets the replay, not 503', async () => {
    const fake = await h.fake();
    fake.always(slowStream(['only ', 'one'], 80));
    const [a] = await instances(h, backend, redis, { tiers: [{ name: 'cloud', url: fake.url }], server: { max_streams: 1 } }, 1);
    const first = chat(a, { stream: true }, keyed('k-slot'));
    await waitFor(() => fake.requests.length === 1, 3000, 'the first request upstream');
    const duplicate = await chat(a, { stream: true }, keyed('k-slot'));
    expect(duplicate.status).toBe(200);
    expect(duplicate.headers.get('x-llm-route-replayed')).toBe('true');
    expect(sseText(await duplicate.text())).toBe('only one');
    expect(sseText(await (await first).text())).toBe('only one');
    // The slot came back: another stream (no key) runs.
    expect(sseText(await (await chat(a, { stream: true })).text())).toBe('only one');
    expect(fake.requests).toHaveLength(2);
  });

  it('a duplicate still waiting when the server stops is told so (503 shutting_down in its protocol), not hung up on', async () => {
    const fake = await h.fake();
    fake.always(slowStream(['never ', 'ends ', 'in ', 'time'], 1000));
    const [a] = await instances(h, backend, redis, { tiers: [{ name: 'cloud', url: fake.url }] }, 1);
    const first = chat(a, { stream: true }, keyed('k-stop'));
    await waitFor(() => fake.requests.length === 1, 3000, 'the first request upstream');
    const duplicate = chat(a, { stream: true }, keyed('k-stop'));
    await waitFor(() => a.server.app.inFlight.size === 2, 3000, 'the duplicate to wait');
    const closing = a.server.close(100);
    const answer = await duplicate;
    expect(answer.status).toBe(503);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('shutting_down');
    // The owner had no first token yet either: the same answer.
    expect((await first).status).toBe(503);
    await closing;
  });

  it('no key, no deduplication', async () => {
    const fake = await h.fake();
    fake.always((ctx) => ctx.json(200, completion('x')));
    const [a, b] = await instances(h, backend, redis, { tiers: [{ name: 'cloud', url: fake.url }] });
    await Promise.all([chat(a, {}), chat(b, {}), chat(a, {})]);
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests[0].headers['idempotency-key']).toBeUndefined();
  });
});
