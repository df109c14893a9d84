import type { IncomingMessage } from 'node:http';
import { describe, expect, it, vi } from 'vitest';

// Records what the comparison is given, to show that it never depends on the lengths.
const compared = vi.hoisted(() => [] as Array<[number, number]>);
vi.mock('../../../src/util/node-crypto.js', async (importOriginal) => {
  const { nodeCrypto } = await importOriginal<typeof import('../../../src/util/node-crypto.js')>();
  const crypto = nodeCrypto();
  const recording = {
    ...crypto,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      compared.push([a.byteLength, b.byteLength]);
      return crypto.timingSafeEqual(a, b);
    },
  };
  return { nodeCrypto: () => recording };
});

const { hasBearer, sameSecret } = await import('../../../src/util/bearer.js');

function request(authorization?: string | string[]): IncomingMessage {
  return { headers: authorization === undefined ? {} : { authorization } } as unknown as IncomingMessage;
}

const TOKEN = 'tok-0123456789abcdef';

describe('hasBearer', () => {
  it('accepts the token, with the scheme in any case and spaces around the token', () => {
    expect(hasBearer(request(`Bearer ${TOKEN}`), TOKEN)).toBe(true);
    expect(hasBearer(request(`bearer ${TOKEN}`), TOKEN)).toBe(true);
    expect(hasBearer(request(`BEARER   ${TOKEN}  `), TOKEN)).toBe(true);
  });

  it('refuses a wrong, shorter, longer, empty or missing token and other schemes', () => {
    for (const header of [
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN.toUpperCase()}`,
      'Bearer ',
      'Bearer',
      `Basic ${TOKEN}`,
      TOKEN,
      '',
    ]) {
      expect(hasBearer(request(header), TOKEN), header).toBe(false);
    }
    expect(hasBearer(request(), TOKEN)).toBe(false);
    expect(hasBearer(request([`Bearer ${TOKEN}`]), TOKEN)).toBe(false);
  });

  it('compares sha256 digests, 32 bytes each, whatever the lengths given', () => {
    compared.length = 0;
    expect(hasBearer(request('Bearer x'), TOKEN)).toBe(false);
    expect(hasBearer(request(`Bearer ${'y'.repeat(5_000)}`), TOKEN)).toBe(false);
    expect(sameSecret(TOKEN, TOKEN)).toBe(true);
    expect(compared).toEqual([
      [32, 32],
      [32, 32],
      [32, 32],
    ]);
  });

  it('tells apart secrets that differ only past a multi-byte character', () => {
    expect(sameSecret('é-token', 'é-token')).toBe(true);
    expect(sameSecret('é-token', 'e-token')).toBe(false);
  });
});
