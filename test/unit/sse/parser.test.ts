import { describe, expect, it } from 'vitest';
import { SseParser } from '../../../src/sse/parser.js';

interface Parsed {
  raw: string;
  data: string | null;
}

/** Feeds `pieces` one by one and returns every event, plus what flush() found. */
function parse(pieces: Array<string | Buffer>): { events: Parsed[]; leftover: boolean; aligned: boolean[] } {
  const parser = new SseParser();
  const events: Parsed[] = [];
  const onEvent = (raw: Buffer, data: string | null): void => {
    events.push({ raw: raw.toString('utf8'), data });
  };
  const aligned = pieces.map((p) => parser.push(Buffer.isBuffer(p) ? p : Buffer.from(p), onEvent));
  const leftover = parser.flush(onEvent);
  return { events, leftover, aligned };
}

/** Every way to cut `text` into two pieces, and a byte-by-byte split. */
function splits(text: string): Array<Buffer[]> {
  const bytes = Buffer.from(text);
  const out: Buffer[][] = [];
  for (let i = 1; i < bytes.length; i++) out.push([bytes.subarray(0, i), bytes.subarray(i)]);
  out.push([...bytes].map((b) => Buffer.from([b])));
  return out;
}

describe('SseParser', () => {
  const stream = 'data: {"a":1}\n\n: keep-alive\n\ndata: first\ndata: second\n\nevent: x\nid: 7\ndata: [DONE]\n\n';
  const expected = [
    { raw: 'data: {"a":1}\n\n', data: '{"a":1}' },
    { raw: ': keep-alive\n\n', data: null },
    { raw: 'data: first\ndata: second\n\n', data: 'first\nsecond' },
    { raw: 'event: x\nid: 7\ndata: [DONE]\n\n', data: '[DONE]' },
  ];

  it('yields each event with its original bytes and decoded data', () => {
    const result = parse([stream]);
    expect(result.events).toEqual(expected);
    expect(result.leftover).toBe(false);
    expect(result.aligned).toEqual([true]);
  });

  it('gives the same events however the bytes are split', () => {
    for (const pieces of splits(stream)) {
      expect(parse(pieces).events).toEqual(expected);
    }
  });

  it('handles CRLF and lone CR line endings, also split between the CR and the LF', () => {
    const crlf = 'data: one\r\n\r\ndata: two\r\ndata: three\r\n\r\n';
    for (const pieces of [[crlf], ...splits(crlf)]) {
      expect(parse(pieces).events.map((e) => e.data)).toEqual(['one', 'two\nthree']);
    }
    const cr = 'data: one\r\rdata: two\r\r';
    expect(parse([cr]).events.map((e) => e.data)).toEqual(['one', 'two']);
    expect(parse([cr]).events[0].raw).toBe('data: one\r\r');
  });

  it('decodes a multi-byte character split across chunks', () => {
    const text = Buffer.from('data: héllo wörld 🚀\n\n');
    const cut = text.indexOf(0xc3) + 1; // inside "é"
    expect(parse([text.subarray(0, cut), text.subarray(cut)]).events[0].data).toBe('héllo wörld 🚀');
  });

  it('accepts "data" without a space and a field with no colon', () => {
    expect(parse(['data:x\n\ndata\n\n']).events.map((e) => e.data)).toEqual(['x', '']);
  });

  it('ignores fields other than data, and a "database:" field is not data', () => {
    expect(parse(['database: nope\nretry: 10\n\n']).events).toEqual([{ raw: 'database: nope\nretry: 10\n\n', data: null }]);
  });

  it('reports a chunk that is not aligned to event boundaries', () => {
    const result = parse(['data: a\n\ndata: b', '\n\n']);
    expect(result.aligned).toEqual([false, false]);
    expect(result.events.map((e) => e.data)).toEqual(['a', 'b']);
  });

  it('emits an unterminated last event at flush, and says something was left', () => {
    const result = parse(['data: {"a":1}\n\ndata: {"trunc']);
    expect(result.events.map((e) => e.data)).toEqual(['{"a":1}', '{"trunc']);
    expect(result.events[1].raw).toBe('data: {"trunc\n\n');
    expect(result.leftover).toBe(true);
  });

  it('treats only whitespace left at the end as nothing', () => {
    expect(parse(['data: a\n\n\n']).leftover).toBe(false);
  });

  it('keeps bytes pending until the event completes', () => {
    const parser = new SseParser();
    const seen: string[] = [];
    parser.push(Buffer.from('data: par'), (_raw, data) => seen.push(String(data)));
    expect(seen).toEqual([]);
    expect(parser.pendingBytes).toBe(9);
    parser.push(Buffer.from('tial\n\n'), (_raw, data) => seen.push(String(data)));
    expect(seen).toEqual(['partial']);
    expect(parser.pendingBytes).toBe(0);
  });
});
