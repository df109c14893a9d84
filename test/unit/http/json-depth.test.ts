import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../../src/http/json-depth.js';

/** The nesting depth of a parsed value, without recursion (the reference the byte scan must agree with). */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    deepest = Math.max(deepest, d + 1);
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return deepest;
}

const bytes = (text: string) => Buffer.from(text, 'utf8');
/** Strings full of what the scan must skip: quotes, backslashes, brackets. */
const unit = fc.constantFrom('"', '\\', '[', ']', '{', '}', 'a', 'é', '\n');
// Short strings are scanned byte by byte, long ones (past 32 bytes) by indexOf: both kinds.
const tricky = fc.oneof(fc.string({ unit, maxLength: 12 }), fc.string({ unit, minLength: 20, maxLength: 120 }));
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, tie('leaf'), fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(tricky, tie('node'), { maxKeys: 3 })),
  leaf: fc.oneof(tricky, fc.integer(), fc.boolean(), fc.constant(null)),
})).node;

describe('nestsDeeperThan (the request body nesting limit)', () => {
  it('agrees with the depth of the parsed value, whatever the strings hold', () => {
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 6 }), (v, limit) => {
        const text = JSON.stringify(v);
        expect(nestsDeeperThan(bytes(text), limit)).toBe(depthOf(v) > limit);
        // Pretty-printed JSON has the same depth.
        expect(nestsDeeperThan(bytes(JSON.stringify(v, null, 2)), limit)).toBe(depthOf(v) > limit);
      }),
      { numRuns: 2000 },
    );
  });

  it('draws the line at MAX_JSON_DEPTH levels, and does not recurse (a million levels)', () => {
    const nested = (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`;
    expect(nestsDeeperThan(bytes(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(nestsDeeperThan(bytes(nested(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(nestsDeeperThan(bytes(`{"a":${'{"b":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH)}}`))).toBe(true);
    expect(nestsDeeperThan(bytes(nested(1_000_000)))).toBe(true);
  });

  it('brackets in strings, escaped quotes and an unterminated string do not count', () => {
    const inString = JSON.stringify({ text: `${'['.repeat(5000)}\\"${'{'.repeat(5000)}` });
    expect(nestsDeeperThan(bytes(inString))).toBe(false);
    expect(nestsDeeperThan(bytes(`"${'['.repeat(5000)}`))).toBe(false);
    // An escaped backslash before a quote ends the string: what follows counts.
    expect(nestsDeeperThan(bytes(`["\\\\",${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}]`))).toBe(true);
  });
});
