import { describe, expect, it } from 'vitest';
import type { StreamPart } from '../../../../src/protocols/core/stream-part.js';
import { clientCodec } from '../../../../src/protocols/registry.js';
import { type EventFacts, newFacts, type PartStage } from '../../../../src/protocols/core/event-facts.js';
import { RAW, type StreamRenderer } from '../../../../src/protocols/core/stream-output.js';
import { RelayOutput } from '../../../../src/protocols/stream-output/relay-output.js';
import { TranslatedOutput } from '../../../../src/protocols/stream-output/translated-output.js';
import { render } from '../read-parts.js';

/** A renderer that writes each part it is given as one line, so what reached it is plain to see. */
class LineRenderer implements StreamRenderer {
  render(parts: readonly StreamPart[]): string {
    return parts.map((part) => `${JSON.stringify(part)}\n`).join('');
  }
  end(): string {
    return 'END\n';
  }
  error(message: string): string {
    return `ERROR ${message}\n`;
  }
}

function factsWith(parts: StreamPart[]): EventFacts {
  const facts = newFacts();
  facts.parts = parts;
  return facts;
}

const lines = (buffer: Buffer | null): string[] => (buffer?.toString() ?? '').split('\n').filter(Boolean);

describe('TranslatedOutput', () => {
  it("renders each event's parts, choice 0's alone, and nothing at all for an event without any", () => {
    const output = new TranslatedOutput(new LineRenderer());
    expect(
      lines(
        output.event(
          factsWith([
            { type: 'text-delta', id: 't', delta: 'A' },
            { type: 'text-delta', id: 't', delta: 'B', choice: 1 },
          ]),
        ),
      ),
    ).toEqual(['{"type":"text-delta","id":"t","delta":"A"}']);
    expect(output.event(factsWith([]))).toBeNull();
    expect(output.event(factsWith([{ type: 'text-delta', id: 't', delta: 'x', choice: 2 }]))).toBeNull();
  });

  it('renders what waited for a decision in one piece, in order', () => {
    const output = new TranslatedOutput(new LineRenderer());
    const joined = output.renderAll([[{ type: 'text-start', id: 't' }], [], [{ type: 'text-delta', id: 't', delta: 'hi' }]]);
    expect(lines(joined)).toEqual(['{"type":"text-start","id":"t"}', '{"type":"text-delta","id":"t","delta":"hi"}']);
    expect(output.renderAll([[], []])).toBeNull();
  });

  it('passes the parts through its stage, which may reshape them', () => {
    const upper: PartStage = {
      decode(facts, out) {
        for (const part of facts.parts) out.push(part.type === 'text-delta' ? { ...part, delta: part.delta.toUpperCase() } : part);
      },
    };
    const output = new TranslatedOutput(new LineRenderer(), upper);
    expect(lines(output.event(factsWith([{ type: 'text-delta', id: 't', delta: 'quiet' }])))).toEqual(['{"type":"text-delta","id":"t","delta":"QUIET"}']);
  });

  it("ends with the renderer's close, adds no keep-alive of its own, and words an upstream's error in the client's protocol", () => {
    const output = new TranslatedOutput(new LineRenderer());
    expect(output.relays).toBe(false);
    expect(output.keepAlive()).toBeNull();
    expect(output.complete().toString()).toBe('END\n');
    expect(output.upstreamError(Buffer.from('upstream bytes'), factsWith([{ type: 'error', message: 'overloaded' }])).toString()).toBe(
      'ERROR upstream error after the first token: overloaded\n',
    );
    expect(output.upstreamError(Buffer.from(''), factsWith([])).toString()).toBe('ERROR upstream error after the first token: unknown error\n');
    expect(output.interrupted('stalled').toString()).toBe('ERROR stalled\n');
  });
});

describe('RelayOutput', () => {
  it("passes the upstream's bytes on, adds the terminator only to a stream that finished without one", () => {
    const output = new RelayOutput(Buffer.from('data: [DONE]\n\n'), (message) => `error: ${message}`);
    expect(output.relays).toBe(true);
    expect(output.event(newFacts())).toBe(RAW);
    const ping = Buffer.from(': ping\n\n');
    expect(output.keepAlive(ping)).toBe(ping);
    expect(output.upstreamError(ping)).toBe(ping);
    expect(output.complete(true)).toBeNull();
    expect(output.complete(false)?.toString()).toBe('data: [DONE]\n\n');
    expect(output.interrupted('gone').toString()).toBe('error: gone');
  });
});

const responses = (type: string, data: Record<string, unknown> = {}) => ({ type, ...data });

describe("renderers follow the parts' blocks", () => {
  const twoMessages = [
    responses('response.output_item.added', { output_index: 0, item: { id: 'msg_1', type: 'message' } }),
    responses('response.output_text.delta', { output_index: 0, item_id: 'msg_1', delta: 'one' }),
    responses('response.output_item.done', { output_index: 0, item: { id: 'msg_1', type: 'message' } }),
    responses('response.output_item.added', { output_index: 1, item: { id: 'msg_2', type: 'message' } }),
    responses('response.output_text.delta', { output_index: 1, item_id: 'msg_2', delta: 'two' }),
    responses('response.output_item.done', { output_index: 1, item: { id: 'msg_2', type: 'message' } }),
    responses('response.completed', { response: { status: 'completed' } }),
  ];

  it('two text blocks upstream are two content blocks for a Messages client, each closed at its end', () => {
    const events = render('messages', 'responses', twoMessages)
      .split('\n\n')
      .filter(Boolean)
      .map((e) => JSON.parse(e.split('\ndata: ')[1]) as Record<string, unknown>);
    const blocks = events
      .filter((e) => e.type === 'content_block_start' || e.type === 'content_block_stop')
      .map((e) => `${e.type as string}:${e.index as number}`);
    expect(blocks).toEqual(['content_block_start:0', 'content_block_stop:0', 'content_block_start:1', 'content_block_stop:1']);
  });

  it('a block closes where its end part is, not when the answer ends', () => {
    const codec = clientCodec('responses');
    const parsed = codec.parse({ model: 'r', input: 'x', stream: true }, {});
    if (!parsed.ok) throw new Error(parsed.message);
    const renderer = codec.renderer(parsed.request, parsed.request.model);
    renderer.render([
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Hi' },
    ]);
    expect(renderer.render([{ type: 'text-end', id: 't' }])).toContain('response.output_text.done');
  });
});
