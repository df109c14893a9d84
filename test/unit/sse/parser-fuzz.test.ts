import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseParser } from '../../../src/sse/parser.js';
import { cutsFor, type Framed, feedFramer, framerProperties, type Run } from '../../helpers/framer-feed.js';

const feed = (bytes: Buffer, cuts: number[]): Run => feedFramer(new SseParser(), bytes, cuts);

/** The data a field line adds, or `data` unchanged for any other line. */
function withLine(data: string | null, line: string): string | null {
  let value: string;
  if (line === 'data') value = '';
  else if (line.startsWith('data:')) value = line.startsWith('data: ') ? line.slice(6) : line.slice(5);
  else return data;
  const decoded = Buffer.from(value, 'latin1').toString('utf8');
  return data === null ? decoded : `${data}\n${decoded}`;
}

/**
 * The whole stream parsed at once, written independently of the parser: lines by regular
 * expression over the latin1 text. A blank line ended by a CR as the very last byte is only
 * known at the end (the CR may be half a CRLF), so it is what flush finds.
 */
function reference(bytes: Buffer): Run {
  const text = bytes.toString('latin1');
  const events: Framed[] = [];
  const lineEnd = /\r\n|\r|\n/g;
  let data: string | null = null;
  let eventStart = 0;
  let pos = 0;
  let blankCrAtEnd = false;
  for (let m = lineEnd.exec(text); m !== null; m = lineEnd.exec(text)) {
    const line = text.slice(pos, m.index);
    pos = m.index + m[0].length;
    if (line !== '') data = withLine(data, line);
    else if (m[0] === '\r' && pos === text.length) blankCrAtEnd = true;
    else {
      events.push({ raw: text.slice(eventStart, pos), data });
      data = null;
      eventStart = pos;
    }
  }
  if (pos < text.length) data = withLine(data, text.slice(pos)); // unterminated last line
  const rest = text.slice(eventStart);
  if (/^[\r\n ]*$/.test(rest)) return { events, leftover: false };
  if (blankCrAtEnd) events.push({ raw: rest, data });
  else if (data !== null) events.push({ raw: `${rest}\n\n`, data });
  return { events, leftover: true };
}

const lineEnding = fc.constantFrom('\n', '\r', '\r\n');
// Any text without line breaks: full Unicode, so multi-byte characters get cut by the splits.
const text = fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, ' '));
const field = fc.oneof(
  text.map((s) => `data: ${s}`),
  text.map((s) => `data:${s}`),
  fc.constant('data'),
  text.map((s) => `: ${s}`),
  fc.constant(':'),
  fc.constantFrom('event: delta', 'id: 7', 'retry: 10', 'database: nope', 'data x', ' data: indented', 'DATA: upper'),
  fc.integer({ min: 1, max: 70_000 }).map((n) => `data: ${'x'.repeat(n)}`), // larger than any socket chunk
);
// Lines with their endings; a blank line ends an event, several in a row make empty events.
const line = fc.oneof({ weight: 3, arbitrary: fc.tuple(field, lineEnding) }, { weight: 2, arbitrary: fc.tuple(fc.constant(''), lineEnding) });
const sseStream = fc
  .tuple(fc.array(line, { maxLength: 30 }), fc.option(field, { nil: undefined }))
  .map(([lines, unterminated]) => Buffer.from(lines.map(([f, end]) => f + end).join('') + (unterminated ?? '')));

/** Bytes that matter to the format, in any order. */
const sseBytes = fc.array(fc.constantFrom(...Buffer.from('data: \r\n:x\u00e9'), 0xf0, 0x9f), { maxLength: 300 }).map((a) => Buffer.from(a));

describe('SseParser under fuzzing', () => {
  framerProperties({ feed, reference, stream: sseStream, formatBytes: sseBytes, noiseRuns: 400 });

  it('keeps every byte of the stream in order in the raw events', () => {
    // A stream that ends on a blank line is relayed byte for byte, however it is split.
    const complete = sseStream.map((b) => Buffer.concat([b, Buffer.from('\n\n')]));
    fc.assert(
      fc.property(complete, fc.array(fc.nat(), { maxLength: 40 }), (bytes, raw) => {
        const run = feed(bytes, cutsFor(bytes.length, raw));
        expect(run.events.map((e) => e.raw).join('')).toBe(bytes.toString('latin1'));
        expect(run.leftover).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});

describe('SseParser on huge events', () => {
  const MiB = 1024 * 1024;

  /** Pushes `bytes` in `size`-byte chunks, returning the events and the time it took. */
  function timed(bytes: Buffer, size: number): { events: Framed[]; ms: number } {
    const parser = new SseParser();
    const events: Framed[] = [];
    const onEvent = (raw: Buffer, data: string | null): void => {
      events.push({ raw: raw.toString('latin1'), data });
    };
    const started = performance.now();
    for (let i = 0; i < bytes.length; i += size) parser.push(bytes.subarray(i, i + size), onEvent);
    parser.flush(onEvent);
    return { events, ms: performance.now() - started };
  }

  it('parses a 4 MiB one-line event fed in 1 KiB chunks in linear time', () => {
    const payload = 'y'.repeat(4 * MiB);
    const bytes = Buffer.from(`data: ${payload}\n\ndata: [DONE]\n\n`);
    const { events, ms } = timed(bytes, 1024);
    expect(events.map((e) => e.data?.length)).toEqual([payload.length, 6]);
    expect(events[0].data === payload).toBe(true);
    expect(events[0].raw.length).toBe(payload.length + 8);
    // Re-scanning the partial event from its start on every chunk took over 8 s here.
    expect(ms).toBeLessThan(1_000);
  });

  it('parses a 4 MiB event of many lines, with CRLF endings, fed in 1 KiB chunks', () => {
    const lines = Array.from({ length: 4 * 1024 }, (_, i) => `data: ${String(i).padStart(1016, '.')}\r\n`);
    const bytes = Buffer.from(`${lines.join('')}\r\n`);
    const { events, ms } = timed(bytes, 1024);
    expect(events).toHaveLength(1);
    expect(events[0].raw.length).toBe(bytes.length);
    expect(events[0].data?.split('\n')).toHaveLength(4 * 1024);
    expect(ms).toBeLessThan(1_000);
  });
});
