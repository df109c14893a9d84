import { describe, expect, it } from 'vitest';
import {
  chunk,
  type FakeUpstream,
  headersThenSilence,
  healthyStream,
  neverAnswer,
  resetAtOnce,
  roleThenSilence,
  type Script,
  taggedChunk,
} from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, requestLog, sleep, socketClosed, useHarness } from '../../helpers/harness.js';
import { chat, DEAD_URL, type RunningProxy, roleChunks, sseText } from '../../helpers/proxy.js';

/**
 * Streams before commit (docs/routing.md, "Before commit: failover"): every way a tier can fail
 * before its first content event sends the request on to the next tier, and the client sees only
 * that tier's stream. The TTFT budget, events held until the first content event, and a client
 * that leaves while the proxy is still waiting.
 */

const h = useHarness();
const CLOUD_TEXT = 'from cloud';
const TTFT = 300;

async function slowLocal(script: Script, local: Record<string, unknown> = {}) {
  const lf = await h.fake();
  const cloud = await h.fake();
  lf.always(script);
  cloud.always(healthyStream(['from', ' cloud']));
  const p = await h.proxy({
    tiers: [
      { name: 'local', url: lf.url, timeouts: { ttft_ms: TTFT }, ...local },
      { name: 'cloud', url: cloud.url },
    ],
  });
  return { local: lf, cloud, p };
}

/** One way the local tier fails before its first content; the cloud tier then streams CLOUD_TEXT. */
interface Failure {
  name: string;
  /** What the local tier does; `refused`: nothing listens at its URL. */
  local: Script | 'refused';
  /** The local tier's own settings (timeouts, retry). */
  tier: Record<string, unknown>;
  /** Requests the local tier gets (default 1). */
  localRequests?: number;
  /** x-llm-route-attempts, where it is checked. */
  attempts?: string;
  /** Texts of the local tier's that never reach the client. */
  hidden?: string[];
  /** Exactly one role chunk reaches the client (the cloud tier's). */
  oneRoleChunk?: boolean;
  /** The local tier's socket is closed. */
  socketClosed?: boolean;
  /** Each tier is sent its own model name. */
  models?: boolean;
  /** x-llm-route-ttft-ms is at least this. */
  ttftAtLeast?: number;
  /** The answer's headers come within these bounds (ms). */
  minMs?: number;
  maxMs?: number;
  /** The row's own further checks. */
  also?: (run: { local: FakeUpstream; cloud: FakeUpstream; p: RunningProxy }) => Promise<void>;
}

const withinTtft = { timeouts: { ttft_ms: TTFT } };
const longTtft = { timeouts: { ttft_ms: 2000 } };
const threeTries = { retry: { attempts: 3, base_ms: 5 } };

/** The tier's faults that are not retried on it: its key, its model, its window, its URL. */
const notRetried: Array<[string, number, string]> = [
  ['401 bad key', 401, 'Incorrect API key provided'],
  ['403 forbidden', 403, 'forbidden for this key'],
  ['404 model not found', 404, 'model "qwen2.5:7b" not found, try pulling it first'],
  ['400 context length', 400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."],
  ['413 prompt too long', 413, 'prompt is too long for this model'],
  ['408 request timeout', 408, 'request timeout'],
  ['409 conflict', 409, 'conflict'],
  ['405 wrong base URL', 405, 'method not allowed'],
  ['501 not implemented (5xx outside the retry list)', 501, 'not implemented'],
];

const failures: Failure[] = [
  // Connection failures.
  {
    name: 'fails over from a refused connection to the next tier',
    local: 'refused',
    tier: {},
    localRequests: 0,
    attempts: '2',
    ttftAtLeast: 0,
    also: async ({ cloud, p }) => {
      expect(cloud.requests[0].body.model).toBe('cloud-model');
      const log = await requestLog(p);
      expect(log.attempts).toMatchObject([
        { tier: 'local', attempt: 1, outcome: 'connection_refused' },
        { tier: 'cloud', attempt: 1, outcome: 'ok' },
      ]);
    },
  },
  {
    name: 'fails over after a persistent reset has used up the retries',
    local: resetAtOnce,
    tier: { retry: { base_ms: 5 } },
    localRequests: 2,
    attempts: '3',
    also: async ({ cloud }) => expect(cloud.requests[0].body.model).toBe('cloud-model'),
  },
  // HTTP errors that are the tier's fault: the next tier at once, one request to the failing one.
  ...notRetried.map(
    ([label, status, message]): Failure => ({
      name: `${label} → next tier, one request to the failing tier`,
      local: (ctx) => ctx.error(status, message),
      tier: threeTries,
      attempts: '2',
      hidden: [message.slice(0, 12)],
      models: true,
    }),
  ),
  // The TTFT budget.
  {
    name: 'headers then silence → TTFT timeout → next tier; the abandoned socket is closed first',
    local: headersThenSilence,
    tier: withinTtft,
    attempts: '2',
    // TTFT counts from the request's arrival: the wasted budget is in it.
    ttftAtLeast: TTFT - 20,
    also: async ({ local, cloud, p }) => {
      expect(cloud.requests[0].body.model).toBe('cloud-model');
      const closedAt = await socketClosed(local, 0);
      // "its socket confirmed closed before the next tier is tried"
      expect(closedAt).toBeLessThanOrEqual(cloud.requests[0].at);
      const log = await requestLog(p);
      expect(log.attempts).toMatchObject([
        { tier: 'local', outcome: 'ttft_timeout' },
        { tier: 'cloud', outcome: 'ok' },
      ]);
      const metrics = (await fetchMetrics(p)).samples;
      expect(metric(metrics, 'llm_failovers_total', { route: 'chat', from_tier: 'local', reason: 'ttft_timeout' })).toBe(1);
      expect(metric(metrics, 'llm_requests_total', { route: 'chat', tier: 'cloud', outcome: 'ok' })).toBe(1);
    },
  },
  {
    name: "a role-only chunk does not commit: TTFT timeout → next tier, tier 1's role chunk never reaches the client",
    local: roleThenSilence('local'),
    tier: withinTtft,
    attempts: '2',
    hidden: ['chatcmpl-local'],
    oneRoleChunk: true,
    socketClosed: true,
  },
  { name: 'no response at all → TTFT timeout → next tier', local: neverAnswer, tier: withinTtft, minMs: TTFT - 20, socketClosed: true },
  {
    name: 'a first token after the budget is too late: next tier, the late text never appears',
    local: async (ctx) => {
      ctx.startStream();
      ctx.event(taggedChunk('local', { role: 'assistant', content: '' }));
      await ctx.wait(2 * TTFT);
      ctx.event(taggedChunk('local', { content: 'LATE' }));
      ctx.event(taggedChunk('local', {}, 'stop'));
      ctx.done();
    },
    tier: withinTtft,
    hidden: ['LATE', 'chatcmpl-local'],
    socketClosed: true,
  },
  {
    name: 'a tier that timed out is not retried, even with retry.attempts 3',
    local: headersThenSilence,
    tier: { ...withinTtft, ...threeTries },
    attempts: '2',
    also: async ({ local }) => {
      await sleep(50);
      expect(local.requests).toHaveLength(1);
    },
  },
  // A stream that breaks or ends before its first content.
  {
    name: 'a break after a role chunk but before the first content → next tier',
    local: async (ctx) => {
      ctx.startStream();
      ctx.event(taggedChunk('local', { role: 'assistant', content: '' }));
      await ctx.wait(30);
      ctx.destroy();
    },
    tier: { retry: { attempts: 1 }, ...longTtft },
    attempts: '2',
    hidden: ['chatcmpl-local'],
    oneRoleChunk: true,
  },
  {
    name: 'a stream that ends cleanly before any content ([DONE] after a role chunk) → next tier',
    local: (ctx) => {
      ctx.startStream();
      ctx.event(taggedChunk('local', { role: 'assistant', content: '' }));
      ctx.done();
    },
    tier: longTtft,
    hidden: ['chatcmpl-local'],
  },
  // Other failures before the first content.
  {
    name: 'an error event before the first content → next tier, the error never reaches the client',
    local: async (ctx) => {
      ctx.startStream();
      ctx.event(taggedChunk('local', { role: 'assistant', content: '' }));
      ctx.event({ error: { message: 'LOCAL model crashed', type: 'server_error' } });
      await ctx.closed;
    },
    tier: longTtft,
    maxMs: 1500,
    hidden: ['LOCAL model crashed', 'chatcmpl-local'],
    socketClosed: true,
  },
  {
    name: 'a JSON answer to a stream request → next tier',
    local: (ctx) =>
      ctx.json(200, {
        id: 'chatcmpl-local',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'LOCAL' }, finish_reason: 'stop' }],
      }),
    tier: longTtft,
    hidden: ['chatcmpl-local'],
  },
  {
    name: 'keep-alive comments do not commit a stream: TTFT timeout → next tier',
    local: async (ctx) => {
      ctx.startStream();
      for (let i = 0; i < 20 && !ctx.isClosed(); i++) {
        ctx.raw(': LOCAL-PING\n\n');
        await ctx.wait(50);
      }
      await ctx.closed;
    },
    tier: withinTtft,
    hidden: ['LOCAL-PING'],
    socketClosed: true,
  },
];

describe('stream failover: a tier that fails before its first content, and the next tier answers', () => {
  for (const row of failures) {
    it(row.name, async () => {
      const local = await h.fake();
      const cloud = await h.fake();
      if (row.local !== 'refused') local.always(row.local);
      cloud.always(healthyStream(['from', ' cloud']));
      const p = await h.proxy({
        tiers: [
          { name: 'local', url: row.local === 'refused' ? DEAD_URL : local.url, ...row.tier },
          { name: 'cloud', url: cloud.url },
        ],
      });
      const started = performance.now();
      const res = await chat(p, { stream: true });
      const elapsed = performance.now() - started;
      if (row.minMs !== undefined) expect(elapsed).toBeGreaterThanOrEqual(row.minMs);
      if (row.maxMs !== undefined) expect(elapsed).toBeLessThan(row.maxMs);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
      if (row.attempts !== undefined) expect(res.headers.get('x-llm-route-attempts')).toBe(row.attempts);
      if (row.ttftAtLeast !== undefined) expect(Number(res.headers.get('x-llm-route-ttft-ms'))).toBeGreaterThanOrEqual(row.ttftAtLeast);
      const text = await res.text();
      expect(sseText(text)).toBe(CLOUD_TEXT);
      for (const hidden of row.hidden ?? []) expect(text).not.toContain(hidden);
      if (row.oneRoleChunk) expect(roleChunks(text)).toBe(1);
      expect(local.requests).toHaveLength(row.localRequests ?? 1);
      if (row.models) expect(local.requests[0].body.model).toBe('local-model');
      expect(cloud.requests).toHaveLength(1);
      if (row.models) expect(cloud.requests[0].body.model).toBe('cloud-model');
      if (row.socketClosed) await socketClosed(local, 0);
      await row.also?.({ local, cloud, p });
    });
  }
});

describe('stream: the commit point', () => {
  it('sends no status and no byte before the first content event, then flushes the held events', async () => {
    const local = await h.fake();
    local.always(async (ctx) => {
      ctx.startStream();
      ctx.role();
      await ctx.wait(250);
      ctx.content('Hi');
      ctx.finish();
      ctx.done();
    });
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url, timeouts: { ttft_ms: 2000 } }] });
    const started = performance.now();
    const res = await chat(p, { stream: true });
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('x-request-id')).toMatch(/\S/);
    expect(res.headers.get('x-llm-route-route')).toBe('chat');
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    expect(res.headers.get('x-llm-route-attempts')).toBe('1');
    expect(Number(res.headers.get('x-llm-route-ttft-ms'))).toBeGreaterThanOrEqual(200);
    const text = await res.text();
    expect(roleChunks(text)).toBe(1);
    expect(text.indexOf('"role":"assistant"')).toBeLessThan(text.indexOf('"content":"Hi"'));
    expect(sseText(text)).toBe('Hi');
  });

  it.each([['reasoning_content'], ['reasoning']])('a %s delta is a first content event: commits within the budget, no failover', async (field) => {
    const thinker: Script = async (ctx) => {
      ctx.startStream();
      ctx.role();
      await ctx.wait(50);
      ctx.event(chunk({ [field]: 'thinking...' }));
      await ctx.wait(TTFT + 50);
      ctx.content('answer');
      ctx.finish();
      ctx.done();
    };
    const { local, cloud, p } = await slowLocal(thinker);
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    expect(Number(res.headers.get('x-llm-route-ttft-ms'))).toBeLessThan(TTFT);
    const text = await res.text();
    expect(text).toContain('thinking...');
    expect(sseText(text)).toBe('answer');
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(0);
  });
});

describe('stream: client abort before commit', () => {
  it('closes the upstream while waiting for the first token and tries no other tier', async () => {
    const { local, cloud, p } = await slowLocal(headersThenSilence, { timeouts: { ttft_ms: 5000 } });
    const ac = new AbortController();
    const pending = chat(p, { stream: true }, { signal: ac.signal }).catch((e: unknown) => e);
    await (async () => {
      const until = performance.now() + 2000;
      while (local.requests.length === 0 && performance.now() < until) await sleep(5);
    })();
    expect(local.requests).toHaveLength(1);
    await sleep(100);
    const abortedAt = performance.now();
    ac.abort();
    const err = await pending;
    expect(err).toBeInstanceOf(Error);
    const closedAt = await socketClosed(local, 0, 2000);
    expect(closedAt - abortedAt).toBeLessThan(100);
    await sleep(100);
    expect(cloud.requests).toHaveLength(0);
    const log = await requestLog(p);
    expect(log.outcome).toBe('client_abort');
  });
});
