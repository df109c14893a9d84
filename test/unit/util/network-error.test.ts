import { lookup } from 'node:dns/promises';
import { connect, createServer, type Server } from 'node:net';
import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { errnoCode, networkFailure } from '../../../src/util/network-error.js';
import { useHarness } from '../../helpers/harness.js';
import { DEAD_URL } from '../../helpers/proxy.js';

const h = useHarness();

/** The error a real operation fails with. */
async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('did not fail');
}

/** A TCP server that closes every connection at once, before any byte of an answer. */
async function resettingServer(): Promise<number> {
  const server: Server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  h.defer(() => new Promise((resolve) => server.close(resolve)));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function post(origin: string): Promise<unknown> {
  const pool = new Pool(origin);
  h.defer(() => pool.destroy());
  return pool.request({ path: '/v1/chat/completions', method: 'POST', body: '{}' }).then((res) => res.body.text());
}

describe('networkFailure on real failures', () => {
  it('a refused connect, from node:net, undici and fetch (whose cause holds it)', async () => {
    // fetch refuses port 1 itself (a "bad port"): a port that was free a moment ago is closed for real.
    const closed = await closedPort();
    const errors = [
      await failure(() => new Promise((resolve, reject) => connect({ port: closed, host: '127.0.0.1' }).once('connect', resolve).once('error', reject))),
      await failure(() => post(new URL(DEAD_URL).origin)),
      await failure(() => fetch(`http://127.0.0.1:${closed}/v1/models`)),
    ];
    for (const error of errors) expect(networkFailure(error)).toEqual({ code: 'ECONNREFUSED', kind: 'connection_refused', says: 'connection refused' });
  });

  it('a connection the server closes before answering', async () => {
    const port = await resettingServer();
    const seen = networkFailure(await failure(() => post(`http://127.0.0.1:${port}`)));
    expect(seen.kind).toBe('connection_reset');
    expect(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']).toContain(seen.code);
  });

  it('a host name that does not resolve', async () => {
    const seen = networkFailure(await failure(() => lookup('llm-route-test.invalid')));
    expect(seen.kind).toBe('unreachable');
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain(seen.code);
  });
});

describe('errnoCode through wrappers', () => {
  const coded = (code: string, cause?: unknown) => Object.assign(new Error(code), { code, cause });

  it('reads the first code: own, then the first of an AggregateError, then the cause', () => {
    expect(errnoCode(coded('EPIPE'))).toBe('EPIPE');
    expect(errnoCode(new AggregateError([coded('ECONNREFUSED'), coded('ENETUNREACH')]))).toBe('ECONNREFUSED');
    expect(errnoCode(new TypeError('fetch failed', { cause: coded('ECONNRESET') }))).toBe('ECONNRESET');
    expect(errnoCode(coded('UND_ERR', coded('ETIMEDOUT')))).toBe('ETIMEDOUT'); // undici's bare code says nothing
  });

  it('gives up on what carries no code, also a cause that points back at itself', () => {
    const loop: Error & { cause?: unknown } = new Error('loop');
    loop.cause = loop;
    for (const error of [loop, new Error('x'), 'text', null, undefined, 42]) expect(errnoCode(error)).toBeUndefined();
    expect(networkFailure(coded('ERR_TLS_CERT_ALTNAME_INVALID'))).toEqual({ code: 'ERR_TLS_CERT_ALTNAME_INVALID', kind: undefined, says: undefined });
  });
});
