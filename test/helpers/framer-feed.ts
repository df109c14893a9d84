import fc from 'fast-check';
import { expect, it } from 'vitest';
import type { Framer } from '../../src/sse/framer.js';

/** An event as a framer reports it; `raw` in latin1 so that each character is one byte. */
export interface Framed {
  raw: string;
  data: string | null;
}

export interface Run {
  events: Framed[];
  leftover: boolean;
}

/** Feeds `bytes` cut at `cuts` to a fresh framer, checking the per-push contract of `Framer` on the way. */
export function feedFramer(framer: Framer, bytes: Buffer, cuts: number[]): Run {
  const events: Framed[] = [];
  let inThisPush: Buffer[] = [];
  const onEvent = (raw: Buffer, data: string | null): void => {
    inThisPush.push(raw);
    events.push({ raw: raw.toString('latin1'), data });
  };
  let pushed = 0;
  let emitted = 0;
  let from = 0;
  for (const to of [...cuts, bytes.length]) {
    const chunk = bytes.subarray(from, to);
    from = to;
    const heldBefore = framer.pendingBytes;
    inThisPush = [];
    const aligned = framer.push(chunk, onEvent);
    pushed += chunk.length;
    emitted += inThisPush.reduce((n, raw) => n + raw.length, 0);
    // Every byte pushed is either in an event already or held, never lost or doubled.
    expect(framer.pendingBytes).toBe(pushed - emitted);
    if (chunk.length > 0) expect(aligned).toBe(heldBefore === 0 && framer.pendingBytes === 0);
    // Aligned means the caller may forward the chunk in place of its events.
    if (aligned) expect(Buffer.concat(inThisPush).equals(chunk)).toBe(true);
  }
  const leftover = framer.flush(onEvent);
  expect(framer.pendingBytes).toBe(0);
  return { events, leftover };
}

/** Sorted cut positions inside `length` bytes, from raw numbers. */
export function cutsFor(length: number, raw: number[]): number[] {
  if (length === 0) return [];
  return [...new Set(raw.map((n) => n % length))].filter((n) => n > 0).sort((a, b) => a - b);
}

interface FramerCase {
  /** Feeds bytes cut at the given positions to a fresh framer (`feedFramer`). */
  feed: (bytes: Buffer, cuts: number[]) => Run;
  /** The whole stream framed at once, written independently of the framer. */
  reference: (bytes: Buffer) => Run;
  /** Well-formed streams of the framer's format. */
  stream: fc.Arbitrary<Buffer>;
  /** Bytes that matter to the format (line endings, field names), drawn at random. */
  formatBytes: fc.Arbitrary<Buffer>;
  noiseRuns: number;
}

/** The properties every framer keeps: the reference's events however the bytes are split, and no throw on any bytes. */
export function framerProperties({ feed, reference, stream, formatBytes, noiseRuns }: FramerCase): void {
  it('gives the events of the reference, however the stream is split', () => {
    fc.assert(
      fc.property(stream, fc.array(fc.nat(), { maxLength: 40 }), (bytes, raw) => {
        const expected = reference(bytes);
        expect(feed(bytes, [])).toEqual(expected);
        expect(feed(bytes, cutsFor(bytes.length, raw))).toEqual(expected);
      }),
      { numRuns: 400 },
    );
  });

  it('gives the same events fed one byte at a time', () => {
    const small = stream.filter((b) => b.length < 2_000);
    fc.assert(
      fc.property(small, (bytes) => {
        const everyByte = Array.from({ length: Math.max(0, bytes.length - 1) }, (_, i) => i + 1);
        expect(feed(bytes, everyByte)).toEqual(reference(bytes));
      }),
      { numRuns: 150 },
    );
  });

  it('never throws on arbitrary bytes, and agrees with the reference on them', () => {
    const noisy = fc.uint8Array({ maxLength: 600 }).map((a) => Buffer.from(a));
    fc.assert(
      fc.property(fc.oneof(noisy, formatBytes), fc.array(fc.nat(), { maxLength: 30 }), (bytes, raw) => {
        expect(feed(bytes, cutsFor(bytes.length, raw))).toEqual(reference(bytes));
      }),
      { numRuns: noiseRuns },
    );
  });
}
