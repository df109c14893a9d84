import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildPrivateCli, runCli } from '../../helpers/cli.js';
import { answer } from '../../helpers/control-kit.js';
import { FakeUpstream } from '../../helpers/fake-upstream.js';

// `llm-route exec`'s private proxy keeps web pages out like `serve` does (docs/security.md):
// the child sends what a rebinding page, a cross-site page and a simple admin POST would, then
// a plain request; only the plain one reaches the tier.

/** The child: five requests to the proxy in OPENAI_BASE_URL; prints their statuses as one JSON line. */
const CHILD = `
const http = require('node:http');
const base = new URL(process.env.OPENAI_BASE_URL);
function send(method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, method, path, headers: { 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
}
const chat = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
const json = { 'content-type': 'application/json' };
(async () => {
  const statuses = {
    rebinding: await send('POST', '/v1/chat/completions', { ...json, host: 'attacker.test:' + base.port }, chat),
    crossOrigin: await send('POST', '/v1/chat/completions', { 'content-type': 'text/plain', origin: 'http://127.0.0.2:8000' }, chat),
    crossSite: await send('GET', '/v1/models', { 'sec-fetch-site': 'cross-site' }, ''),
    adminPlain: await send('PUT', '/admin/routes/chat/tiers/m', { 'content-type': 'text/plain' }, '{"weight":0}'),
    plain: await send('POST', '/v1/chat/completions', json, chat),
  };
  console.log(JSON.stringify(statuses));
})();
`;

let cli: ReturnType<typeof buildPrivateCli>;
let fake: FakeUpstream;
let dir: string;

beforeAll(async () => {
  cli = buildPrivateCli();
  fake = await FakeUpstream.start();
  fake.always(answer('hello'));
  dir = mkdtempSync(join(tmpdir(), 'llm-route-exec-guard-'));
});

afterAll(async () => {
  await fake?.close();
  cli?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("exec's private proxy refuses forged Host, foreign Origin, Sec-Fetch-Site: cross-site and non-JSON admin bodies", async () => {
  const file = join(dir, 'llm-route.yaml');
  writeFileSync(
    file,
    `version: 1\nproviders: { m: { type: openai, base_url: "${fake.url}" } }\nroutes: { chat: { tiers: [{ provider: m, model: m-model }] } }\n`,
  );
  const run = runCli(cli.bin, ['exec', '-c', file, '--', process.execPath, '-e', CHILD]);
  const { code } = await run.exited;
  expect(code, run.stderr()).toBe(0);
  expect(JSON.parse(run.lines.at(-1) ?? '{}')).toEqual({ rebinding: 403, crossOrigin: 403, crossSite: 403, adminPlain: 415, plain: 200 });
  // Only the plain request reached the tier (route by fit's discovery GETs aside).
  expect(fake.requests.filter((r) => r.url.endsWith('/chat/completions'))).toHaveLength(1);
});
