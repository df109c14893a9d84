import { describe, expect, it } from 'vitest';
import { createRandom } from '../../../src/mock/random.js';
import { completion } from '../../helpers/fake-upstream.js';
import { fetchMetrics, logLine, useHarness } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';

/**
 * A session stays on the tier that answered its last turn while that tier is healthy, instead
 * of a weighted (canary) draw moving it between tiers and losing the prompt cache; the log line
 * says `affinity: true` when that decided. The session is what its client names it.
 */

const h = useHarness();

/** Two local tiers: a canary drawn for half the requests, then the stable one. Seeded dice. */
async function canaryRoute(): Promise<RunningProxy> {
  const canary = await h.fake();
  const stable = await h.fake();
  canary.always((ctx) => ctx.json(200, completion('canary')));
  stable.always((ctx) => ctx.json(200, completion('stable')));
  return h.proxy(
    {
      tiers: [
        { name: 'canary', url: canary.url, weight: 50 },
        { name: 'stable', url: stable.url },
      ],
    },
    { random: createRandom(7) },
  );
}

type Send = (proxy: RunningProxy, session: string) => Promise<Response>;

const messagesWithHeader: Send = (proxy, session) =>
  fetch(`${proxy.origin}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'x-claude-code-session-id': session },
    body: JSON.stringify({ model: 'chat', max_tokens: 9, messages: [{ role: 'user', content: 'hi' }] }),
  });
const messagesWithUserId: Send = (proxy, session) =>
  fetch(`${proxy.origin}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: 'chat',
      max_tokens: 9,
      metadata: { user_id: `user_abc_account__session_${session}` },
      messages: [{ role: 'user', content: 'hi' }],
    }),
  });
const codexHeader: Send = (proxy, session) =>
  fetch(`${proxy.origin}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer k', session_id: session },
    body: JSON.stringify({ model: 'chat', input: 'hi' }),
  });
const promptCacheKey: Send = (proxy, session) =>
  fetch(`${proxy.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', prompt_cache_key: session, messages: [{ role: 'user', content: 'hi' }] }),
  });
const noSession: Send = (proxy) =>
  fetch(`${proxy.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
  });

/** One turn: which tier answered, and whether affinity decided, from the request's log line. */
async function turn(proxy: RunningProxy, send: Send, session: string): Promise<{ tier: unknown; affinity: unknown }> {
  const res = await send(proxy, session);
  expect(res.status).toBe(200);
  await res.text();
  const line = await logLine(proxy, res.headers.get('x-request-id'));
  return { tier: line.tier, affinity: line.affinity };
}

/** Six sessions, ten turns each, interleaved: each session's tiers, turn by turn. */
async function interleaved(proxy: RunningProxy, send: Send): Promise<Map<string, Array<{ tier: unknown; affinity: unknown }>>> {
  const sessions = ['4b9f2c1e-a', '4b9f2c1e-b', '4b9f2c1e-c', '4b9f2c1e-d', '4b9f2c1e-e', '4b9f2c1e-f'];
  const turns = new Map(sessions.map((s) => [s, [] as Array<{ tier: unknown; affinity: unknown }>]));
  for (let n = 0; n < 10; n++) for (const s of sessions) turns.get(s)?.push(await turn(proxy, send, s));
  return turns;
}

describe('session affinity over a weighted draw', () => {
  for (const [client, send] of [
    ["Claude Code's x-claude-code-session-id", messagesWithHeader],
    ["Claude Code's metadata.user_id", messagesWithUserId],
    ["Codex's session_id header", codexHeader],
    ['prompt_cache_key', promptCacheKey],
  ] as const) {
    it(`keeps each session on the tier of its first turn (${client}); turns after the first say affinity: true`, async () => {
      const proxy = await canaryRoute();
      const turns = await interleaved(proxy, send);
      const firstTiers = new Set<unknown>();
      for (const [session, seen] of turns) {
        firstTiers.add(seen[0].tier);
        expect(
          seen.map((t) => t.tier),
          session,
        ).toEqual(new Array(10).fill(seen[0].tier));
        expect(seen[0].affinity).toBeUndefined();
        expect(seen.slice(1).every((t) => t.affinity === true)).toBe(true);
      }
      // New sessions are still drawn: some start on the canary, some on the stable tier.
      expect([...firstTiers].sort()).toEqual(['canary', 'stable']);
    });
  }

  it('without a session the draw moves requests between the tiers (what affinity prevents)', async () => {
    const proxy = await canaryRoute();
    const tiers = new Set<unknown>();
    for (let n = 0; n < 20; n++) tiers.add((await turn(proxy, noSession, '')).tier);
    expect([...tiers].sort()).toEqual(['canary', 'stable']);
    expect(proxy.logs.some((line) => 'affinity' in line)).toBe(false);
  });

  it('moves a session whose tier failed to the tier that answered instead, and keeps it there', async () => {
    const canary = await h.fake();
    const stable = await h.fake();
    let canaryUp = true;
    canary.always((ctx) => (canaryUp ? ctx.json(200, completion('canary')) : ctx.error(500, 'upstream crashed')));
    stable.always((ctx) => ctx.json(200, completion('stable')));
    // Dice that win every draw: a new session starts on the canary.
    const proxy = await h.proxy(
      {
        tiers: [
          { name: 'canary', url: canary.url, weight: 50, retry: { attempts: 1 } },
          { name: 'stable', url: stable.url },
        ],
      },
      { random: () => 0 },
    );
    expect((await turn(proxy, messagesWithHeader, 's1')).tier).toBe('canary');
    canaryUp = false;
    expect(await turn(proxy, messagesWithHeader, 's1')).toEqual({ tier: 'stable', affinity: true }); // the canary was tried first, then failed over
    canaryUp = true;
    // The canary is healthy again and the dice would draw it: the session stays where its cache now is.
    for (let n = 0; n < 5; n++) expect(await turn(proxy, messagesWithHeader, 's1')).toEqual({ tier: 'stable', affinity: true });
    expect(canary.requests).toHaveLength(2);
  });

  it('puts no session id in the metrics or the log line', async () => {
    const proxy = await canaryRoute();
    const secret = 'c0ffee00-5e55-4b9f-9c6f-1d2e3f4a5b6c';
    await turn(proxy, messagesWithHeader, secret);
    await turn(proxy, messagesWithHeader, secret);
    expect((await fetchMetrics(proxy)).text).not.toContain('c0ffee00');
    expect(JSON.stringify(proxy.logs)).not.toContain('c0ffee00');
  });
});
