import { expect } from 'vitest';
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
