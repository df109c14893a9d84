import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NdjsonFramer } from '../../../src/sse/ndjson.js';
import { type Framed, feedFramer, framerProperties, type Run } from '../../helpers/framer-feed.js';

const feed = (bytes: Buffer, cuts: number[]): Run => feedFramer(new NdjsonFramer(), bytes, cuts);

/**
 * The whole stream framed at once, written independently of the framer: a line ends at LF
 * (a CR before it belongs to the ending); its data is the UTF-8 text, trimmed; a blank line is
 * a keep-alive (null). An unterminated last line that is not blank is framed by flush, with an LF.
 */
function reference(bytes: Buffer): Run {
  const text = bytes.toString('latin1');
  const events: Framed[] = [];
  const data = (line: string): string | null => {
    const decoded = Buffer.from(line.endsWith('\r') ? line.slice(0, -1) : line, 'latin1')
      .toString('utf8')
      .trim();
    return decoded === '' ? null : decoded;
  };
  let pos = 0;
  for (let lf = text.indexOf('\n'); lf !== -1; lf = text.indexOf('\n', pos)) {
    events.push({ raw: text.slice(pos, lf + 1), data: data(text.slice(pos, lf)) });
    pos = lf + 1;
  }
  const rest = text.slice(pos);
  if (rest === '') return { events, leftover: false };
  const last = Buffer.from(rest, 'latin1').toString('utf8').trim();
  if (last === '') return { events, leftover: false };
  events.push({ raw: `${rest}\n`, data: last });
  return { events, leftover: true };
}

const lineEnding = fc.constantFrom('\n', '\r\n', '\r', '');
// Any text without line breaks: full Unicode, so multi-byte characters get cut by the splits.
const text = fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, ' '));
const line = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: text },
  { weight: 2, arbitrary: fc.constantFrom('', ' ', '\t', '{"done":true}', '{"message":{"content":"hi"}}', '{"error":"boom"}') },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 70_000 }).map((n) => `{"message":{"content":"${'x'.repeat(n)}"}}`) }, // larger than any socket chunk
);
// A bare CR is no line ending: it stays inside the line.
const ndjsonStream = fc.array(fc.tuple(line, lineEnding), { maxLength: 30 }).map((lines) => Buffer.from(lines.map(([l, end]) => l + end).join('')));

/** Bytes that matter to the format, in any order. */
const lineBytes = fc.array(fc.constantFrom(...Buffer.from('{}" \r\n\t:x\u00e9'), 0xf0, 0x9f, 0x00), { maxLength: 300 }).map((a) => Buffer.from(a));

describe('NdjsonFramer under fuzzing', () => {
  framerProperties({ feed, reference, stream: ndjsonStream, formatBytes: lineBytes, noiseRuns: 500 });

  it('empty chunks, empty lines and CRLF-only streams', () => {
    expect(feed(Buffer.alloc(0), [])).toEqual({ events: [], leftover: false });
    const blanks = Buffer.from('\n\r\n\n  \n');
    expect(feed(blanks, [1, 1, 2, 3]).events.map((e) => e.data)).toEqual([null, null, null, null]);
    const crlf = Buffer.from('{"a":1}\r\n{"b":2}\r\n');
    expect(feed(crlf, [8]).events).toEqual([
      { raw: '{"a":1}\r\n', data: '{"a":1}' },
      { raw: '{"b":2}\r\n', data: '{"b":2}' },
    ]);
  });

  it('a huge line fed in small chunks costs linear time (no re-scan of what is held)', () => {
    const size = 8 * 1024 * 1024;
    const bytes = Buffer.concat([Buffer.from('{"message":{"content":"'), Buffer.alloc(size, 0x61), Buffer.from('"}}\n')]);
    const framer = new NdjsonFramer();
    let got: string | null = null;
    const started = performance.now();
    for (let at = 0; at < bytes.length; at += 512) framer.push(bytes.subarray(at, at + 512), (_raw, data) => (got = data));
    const tookMs = performance.now() - started;
    expect((got as string | null)?.length).toBe(size + 26);
    // 16k pushes of one 8 MiB line: linear is a few ms; a re-scan of the held bytes per chunk would be minutes.
    expect(tookMs).toBeLessThan(5_000);
  });
});
