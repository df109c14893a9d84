import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/protocols/core/ids.js';
import { correlationToken, correlationUuid } from '../../../src/util/correlation-id.js';

describe('correlation ids (src/util/correlation-id.ts)', () => {
  it('a UUID has version 4 and the RFC 9562 variant, and 10,000 of them are all different', () => {
    const ids = Array.from({ length: 10_000 }, correlationUuid);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // every hex digit of the random part turns up (a stuck nibble would not)
    const randomDigits = new Set(ids.flatMap((id) => id.replace(/-/g, '').split('')));
    expect(randomDigits.size).toBe(16);
  });

  it('a token is base64url of the asked length; protocol ids keep their 16 characters after the prefix', () => {
    expect(correlationToken(0)).toBe('');
    const tokens = Array.from({ length: 2_000 }, () => correlationToken(16));
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(new Set(tokens).size).toBe(tokens.length);
    expect(new Set(tokens.join('')).size).toBe(64);
    expect(newId('chatcmpl-')).toMatch(/^chatcmpl-[A-Za-z0-9_-]{16}$/);
  });
});
