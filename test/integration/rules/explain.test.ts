import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPrivateCli, explainRunner } from '../../helpers/cli.js';
import { openaiServer } from '../../helpers/fit-servers.js';
import { useHarness } from '../../helpers/harness.js';

const h = useHarness();

interface Plan {
  route: string;
  rule?: string | number | null;
  tiers: Array<{ tier: string; decision: string; reason: string | null; message?: string }>;
}

// `explain` with rules and local-only: the rule that chose the route, the tiers local-only excludes.
describe('the real CLI: llm-route explain with rules: and local_only', () => {
  let cli: ReturnType<typeof buildPrivateCli>;
  beforeAll(() => {
    cli = buildPrivateCli();
  }, 60_000);
  afterAll(() => cli?.remove());

  const explain = explainRunner(() => cli, 'explain-rules');

  /** A local fake and a cloud provider by name (`.example` resolves nowhere: explain sends it no model request anyway). */
  async function tierFile(): Promise<{ yaml: string }> {
    const local = await h.fake();
    local.always(openaiServer({}));
    const yaml = `version: 1
providers:
  local: { type: openai, base_url: "${local.url}" }
  cloud: { type: openai, base_url: "https://api.cloud.example/v1", api_key: k }
routes:
  local: { tiers: [{ provider: local, model: small }] }
  mixed: { tiers: [{ provider: cloud, model: big }, { provider: local, model: small }] }
  private:
    local_only: true
    tiers: [{ provider: cloud, model: big }, { provider: local, model: small }]
rules:
  - { name: images, when: { images: true }, route: mixed }
  - { when: { header: { x-private: "yes" } }, route: private }
`;
    return { yaml };
  }

  it('names the rule that chose the route (or says none did), in --json and in words', async () => {
    const { yaml } = await tierFile();
    const image = { model: 'local', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }] };
    const ruled = await explain(yaml, image, ['--json']);
    expect(ruled.code, ruled.stderr).toBe(0);
    expect(JSON.parse(ruled.stdout) as Plan).toMatchObject({ route: 'mixed', rule: 'images' });
    const words = await explain(yaml, image);
    expect(words.stdout).toMatch(/^route "mixed" \(chat\): \d+ prompt tokens\n {2}rule images chose the route\n/);
    const plain = await explain(yaml, { model: 'local', messages: [{ role: 'user', content: 'hi' }] }, ['--json']);
    expect(JSON.parse(plain.stdout) as Plan).toMatchObject({ route: 'local', rule: null });
    const byIndex = await explain(yaml, { model: 'local', messages: [{ role: 'user', content: 'hi' }] }, ['--json', '-H', 'X-Private: yes']);
    expect(JSON.parse(byIndex.stdout) as Plan).toMatchObject({ route: 'private', rule: 1 });
  });

  it("shows the tiers local-only excludes, by the route's local_only and by the request header, without contacting them", async () => {
    const { yaml } = await tierFile();
    const body = { model: 'private', messages: [{ role: 'user', content: 'hi' }] };
    const routeLocal = JSON.parse((await explain(yaml, body, ['--json'])).stdout) as Plan;
    expect(routeLocal.tiers).toEqual([
      expect.objectContaining({ tier: 'cloud', decision: 'skip', reason: 'not_local', message: 'local only: api.cloud.example is not on the local network' }),
      expect.objectContaining({ tier: 'local', decision: 'try' }),
    ]);
    const mixed = { model: 'mixed', messages: [{ role: 'user', content: 'hi' }] };
    const headerLocal = JSON.parse((await explain(yaml, mixed, ['--json', '--header', 'x-llm-route-local-only: 1'])).stdout) as Plan;
    expect(headerLocal.tiers.map((t) => [t.tier, t.reason])).toEqual([
      ['cloud', 'not_local'],
      ['local', null],
    ]);
    const words = await explain(yaml, mixed, ['--header', 'x-llm-route-local-only: 1']);
    expect(words.stdout).toMatch(/skip {2}cloud {2}\(window unknown, needs \d+\): local only: api\.cloud\.example is not on the local network/);
    const bad = await explain(yaml, mixed, ['--header', 'no colon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--header expects "Name: value"/);
  });
});
