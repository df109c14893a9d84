import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientProtocol } from '../../../src/telemetry/events.js';
import { buildPrivateCli, runCli } from '../../helpers/cli.js';
import { tryConnect, useHarness, waitFor } from '../../helpers/harness.js';
import { ENDPOINT, validBody } from '../../helpers/protocol-errors.js';
import { configYaml } from '../../helpers/proxy.js';
import { streamEnding } from '../../helpers/stream-ending.js';

const h = useHarness();
const STREAMS = 200;
const WORD_GAP_MS = 200;

let cli: ReturnType<typeof buildPrivateCli>;
beforeAll(() => {
  cli = buildPrivateCli();
}, 60_000);
afterAll(() => cli?.remove());

interface OpenStream {
  protocol: ClientProtocol;
  long: boolean;
  status: number;
  /** Resolves with everything the client read, and the error that cut the read (if any). */
  done: Promise<{ text: string; error: unknown }>;
  firstChunk: Promise<void>;
}

describe('SIGTERM to llm-route serve with 200 open streams', () => {
  it("each stream finishes inside the 10 s drain window or gets its protocol's error event; none is cut silently; exit 0", async () => {
    const upstream = await h.fake();
    // Short streams end 2 s in; long ones would take 30 s, well past the drain window.
    upstream.always(async (ctx) => {
      const words = JSON.stringify(ctx.body).includes('LONG') ? 150 : 10;
      ctx.startStream();
      ctx.role();
      for (let i = 0; i < words && !ctx.isClosed(); i++) {
        ctx.content(`${i === 0 ? '' : ' '}w${i}`);
        await ctx.wait(WORD_GAP_MS);
      }
      ctx.finish();
      ctx.done();
    });
    const file = join(cli.dir, 'shutdown-load.yaml');
    writeFileSync(file, configYaml({ tiers: [{ name: 'local', url: upstream.url, timeouts: { ttft_ms: 5000, idle_ms: 5000, total_ms: 60_000 } }] }));
    const proc = runCli(cli.bin, ['serve', '--no-ui', '-c', file], { LLM_ROUTE_CONFIG: undefined });
    h.defer(() => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    });
    const listening = JSON.parse(await proc.waitForLine((l) => l.includes('"listening"'), 15_000)) as { url: string };
    const origin = listening.url.replace(/\/v1$/, '');
    const port = Number(new URL(origin).port);
    const agent = new Agent({ connections: STREAMS + 10 });
    h.defer(() => agent.destroy());

    const protocols: ClientProtocol[] = ['chat', 'responses', 'messages'];
    const open: OpenStream[] = await Promise.all(
      Array.from({ length: STREAMS }, async (_, i) => {
        const protocol = protocols[i % 3];
        const long = i % 2 === 1;
        const body = JSON.stringify(
          validBody(protocol, {
            stream: true,
            ...(protocol === 'responses' ? { input: long ? 'LONG' : 'short' } : { messages: [{ role: 'user', content: long ? 'LONG' : 'short' }] }),
          }),
        );
        const res = await request(`${origin}${ENDPOINT[protocol]}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          dispatcher: agent,
        });
        let first!: () => void;
        const firstChunk = new Promise<void>((resolve) => (first = resolve));
        const done = (async () => {
          let text = '';
          try {
            for await (const chunk of res.body) {
              text += String(chunk);
              first();
            }
            return { text, error: null };
          } catch (error) {
            return { text, error };
          } finally {
            first();
          }
        })();
        return { protocol, long, status: res.statusCode, done, firstChunk };
      }),
    );
    for (const s of open) expect(s.status).toBe(200);
    await Promise.all(open.map((s) => s.firstChunk));
    // (serve also warms the loopback tier up with a request of its own.)
    expect(upstream.requests.filter((r) => /LONG|short/.test(JSON.stringify(r.body))).length).toBe(STREAMS);

    const signalledAt = performance.now();
    proc.child.kill('SIGTERM');
    await waitFor(async () => (await tryConnect(port)) === 'ECONNREFUSED', 3000, 'the port to stop accepting');
    const shutdown = JSON.parse(await proc.waitForLine((l) => l.includes('"shutdown"'), 5000)) as { in_flight: number; grace_ms: number };
    expect(shutdown.in_flight).toBe(STREAMS);

    const ends = await Promise.all(open.map(async (s) => ({ ...s, ...(await s.done), at: performance.now() - signalledAt })));
    const exit = await Promise.race([proc.exited, new Promise((resolve) => setTimeout(resolve, 20_000, null))]);
    const exitedAfterMs = performance.now() - signalledAt;
    expect(exit, `did not exit; stderr: ${proc.stderr()}`).toEqual({ code: 0, signal: null });

    for (const s of ends) {
      const ending = streamEnding(s.protocol, s.text);
      const label = `${s.protocol} ${s.long ? 'long' : 'short'}: ${JSON.stringify(s.text.slice(-200))}`;
      // Never cut without a word: no transport error, exactly one ending, and it is the last event.
      expect(s.error, label).toBeNull();
      expect(ending.endings, label).toBe(1);
      if (s.long) {
        expect(ending.ending, label).toBe('error');
        expect(ending.message, label).toMatch(/shutting down/);
        expect(s.at).toBeGreaterThan(9_000); // the drain window, not earlier
      } else {
        expect(ending.ending, label).toBe('terminator');
        expect(s.at).toBeLessThan(9_000); // inside the drain window
      }
    }
    expect(exitedAfterMs).toBeLessThan(15_000);

    // Every stream has its request line: the short ones ok, the long ones interrupted (not a client abort).
    const lines = proc.lines.filter((l) => l.includes('"event":"request"')).map((l) => JSON.parse(l) as { outcome: string; stream: boolean });
    const outcomes = lines
      .filter((l) => l.stream)
      .reduce<Record<string, number>>((m, l) => {
        m[l.outcome] = (m[l.outcome] ?? 0) + 1;
        return m;
      }, {});
    expect(outcomes).toEqual({ ok: STREAMS / 2, interrupted: STREAMS / 2 });
    // The upstream requests of the cut streams were aborted: their sockets are closed.
    await waitFor(() => upstream.openSockets === 0, 5000, 'the upstream sockets to close');
  }, 60_000);
});
