import { describe, expect, it } from 'vitest';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { sleep, useHarness } from '../../helpers/harness.js';
import { chat, type RunningProxy } from '../../helpers/proxy.js';

/**
 * `aliases: ["*"]` (what `init` writes) answers any model name, a typo too: the request log
 * says once per name when a request reached its route only through `*` (docs/protocols.md, "Route names and aliases").
 */

const h = useHarness();

async function ask(p: RunningProxy, model: string): Promise<number> {
  const res = await chat(p, { model, messages: [{ role: 'user', content: 'hi' }], stream: true });
  await res.text();
  return res.status;
}

function catchAllLines(p: RunningProxy): Array<Record<string, unknown>> {
  return p.logs.filter((l) => l.event === 'catch_all_alias');
}

describe('a request that reached its route only through "*"', () => {
  it('is answered, and said once per model name; exact names and other aliases are not', async () => {
    const up = await h.fake();
    up.always(healthyStream(['ok']));
    const p = await h.proxy({ aliases: ['claude-*', '*'], tiers: [{ name: 'local', url: up.url }] });

    for (const model of ['caht', 'caht', 'chat', 'claude-sonnet-4-5', 'caht', 'gtp-5']) expect(await ask(p, model)).toBe(200);
    await expect.poll(() => p.logs.filter((l) => l.event === 'request').length).toBe(6);
    await sleep(20); // a line written late would be here by now

    expect(catchAllLines(p)).toEqual([
      expect.objectContaining({
        route: 'chat',
        model: 'caht',
        message: 'model "caht" names no route; route "chat" took it only through its catch-all alias "*" (said once per name)',
      }),
      expect.objectContaining({ route: 'chat', model: 'gtp-5' }),
    ]);
  });

  it('a route without "*" says nothing (an unknown name is a 404 there)', async () => {
    const up = await h.fake();
    up.always(healthyStream(['ok']));
    const p = await h.proxy({ aliases: ['claude-*'], tiers: [{ name: 'local', url: up.url }] });
    expect(await ask(p, 'claude-opus-4')).toBe(200);
    expect(await ask(p, 'caht')).toBe(404);
    await expect.poll(() => p.logs.filter((l) => l.event === 'request').length).toBe(2);
    expect(catchAllLines(p)).toEqual([]);
  });
});
