import { describe, expect, it } from 'vitest';
import type { StreamPart } from '../../../../src/protocols/core/stream-part.js';
import { EVENT_HELD, EVENT_REWRITTEN } from '../../../../src/protocols/core/event-facts.js';
import { CommittedText, type LaterForm } from '../../../../src/protocols/tool-text/committed-text.js';
import { MessagesHandover } from '../../../../src/protocols/messages/handover.js';
import { MessagesRenderer } from '../../../../src/protocols/messages/render.js';
import { HERMES, MISTRAL, MISTRAL_ARGS, PYTHON_TAG, TOOLS } from '../../../helpers/tool-text-forms.js';

// An answer's text after commit, read for forms that come later (committed-text.ts): what each
// event's parts become, and the flags that tell a relay to wait (EVENT_HELD) or to render from
// here on (EVENT_REWRITTEN).

function reader() {
  const forms: LaterForm[] = [];
  const text = new CommittedText(
    TOOLS,
    'call_',
    (form) => forms.push(form),
    (finish) => finish,
  );
  return { text, forms };
}

const delta = (d: string): StreamPart => ({ type: 'text-delta', id: 'text-0', delta: d });

/** Feeds each piece as one event's text (the last event also finishes); what each event became, and its flags. */
function feed(text: CommittedText, pieces: string[], finish = true) {
  return pieces.map((piece, i) => {
    const last = i === pieces.length - 1;
    const parts: StreamPart[] = [delta(piece)];
    if (last && finish) parts.push({ type: 'finish', reason: 'stop' });
    const out = text.read(parts, false, false);
    // null: the event goes on untouched, as its own parts.
    return { out, flags: out ? text.flags : 0, sent: out ?? parts };
  });
}

function shown(parts: Array<readonly StreamPart[] | null>): string {
  return parts
    .flat()
    .map((part) => {
      if (!part) return '';
      if (part.type === 'text-delta') return part.delta;
      if (part.type === 'tool-input-start') return `[call ${part.toolName}`;
      if (part.type === 'tool-input-delta') return ` ${part.delta}`;
      if (part.type === 'tool-input-end') return ']';
      return '';
    })
    .join('');
}

describe('forms after committed text', () => {
  it('text goes on untouched (no copy) until an event holds `<` or `[`; a tail that may open waits (HELD); the opener makes the rest rendered (REWRITTEN)', () => {
    const { text, forms } = reader();
    const read = feed(text, ['Let me check. ', 'Use ', '<', 'tool_call>\n{"name": "Bash", ', '"arguments": {"command": "ls"}}\n</tool_call>', '\nDone.']);
    expect(read[0].out).toBeNull(); // the byte relay's fast path
    expect(read[1].out).toBeNull();
    expect(read[2]).toMatchObject({ out: [], flags: EVENT_HELD });
    expect(read[3].flags).toBe(EVENT_REWRITTEN);
    expect(shown(read.map((r) => r.sent))).toBe('Let me check. Use [call Bash {"command":"ls"}]\nDone.');
    expect(forms).toEqual([{ format: 'hermes', calls: 1, repaired: false, asText: false }]);
  });

  it('a tail that turns out plain comes back as text in the next event (not rewritten): `<b>`, `[link]`, `<tool>`', () => {
    const { text, forms } = reader();
    const read = feed(text, ['a ', '<', 'b> and ', '[TOOL', 'S] and ', '<tool', '> end']);
    expect(read.map((r) => r.flags)).toEqual([0, EVENT_HELD, 0, EVENT_HELD, 0, EVENT_HELD, 0]);
    expect(shown(read.map((r) => r.sent))).toBe('a <b> and [TOOLS] and <tool> end');
    expect(forms).toEqual([]);
  });

  it('every tagged form after text, each token by token: Hermes, Mistral, Mistral v11, Llama python_tag (these two run to the end)', () => {
    for (const [form, format] of [
      [HERMES, 'hermes'],
      [MISTRAL, 'mistral'],
      [MISTRAL_ARGS, 'mistral_args'],
      [PYTHON_TAG, 'python_tag'],
    ] as const) {
      const { text, forms } = reader();
      const pieces = `Sure.\n${form}`.match(/[\s\S]{1,3}/g) ?? [];
      const read = feed(text, pieces);
      expect(shown(read.map((r) => r.sent)), format).toBe('Sure.\n[call Bash {"command":"ls -la"}]');
      expect(forms, format).toEqual([{ format, calls: 1, repaired: false, asText: false }]);
    }
  });

  it('two calls in a row: the whitespace between and after them is dropped, text after them kept', () => {
    const { text, forms } = reader();
    const read = feed(text, [`Two:\n${HERMES}\n\n`, `${HERMES.replace('ls -la', 'pwd')}\n`, ' ']);
    expect(shown(read.map((r) => r.sent))).toBe('Two:\n[call Bash {"command":"ls -la"}][call Bash {"command":"pwd"}]');
    expect(forms.map((f) => f.calls)).toEqual([1, 1]);
  });

  it('a form that holds no call the client can run goes on as the text it was; one left open at the end is read as closed', () => {
    const bad = reader();
    const wrong = HERMES.replace('Bash', 'Nope');
    expect(shown(feed(bad.text, ['Hm. ', wrong]).map((r) => r.sent))).toBe(`Hm. ${wrong}`);
    expect(bad.forms).toEqual([{ format: 'hermes', calls: 0, repaired: false, asText: true }]);
    const open = reader();
    expect(shown(feed(open.text, ['So: ', '<tool_call>\n{"name": "Bash", "arguments": {"command": "ls"']).map((r) => r.sent))).toBe(
      'So: [call Bash {"command":"ls"}]',
    );
    expect(open.forms).toEqual([{ format: 'hermes', calls: 1, repaired: true, asText: false }]);
  });

  it('a text block end lets a held tail go as text; a native call stops the reading', () => {
    const { text } = reader();
    feed(text, ['x <tool'], false);
    const out = text.read([{ type: 'text-end', id: 'text-0' }], false, false);
    expect(out).toEqual([delta('<tool'), { type: 'text-end', id: 'text-0' }]);
    expect(text.read([{ type: 'tool-input-start', id: 'call_1', toolName: 'Bash' }], false, false)).toBeNull();
    expect(text.stopped).toBe(true);
  });
});

describe('a Messages relay handed over to a renderer', () => {
  it('goes on in the open text block, numbers the call after the blocks the client saw, and ends the message the relay began', () => {
    const handover = new MessagesHandover(() => new MessagesRenderer('chat'));
    const usage = { prompt_tokens: 25, completion_tokens: 1 };
    handover.relayed({ type: 'message_start', message: { id: 'msg_1' } }, [{ type: 'usage', usage }]);
    handover.relayed({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }, []);
    handover.relayed({ type: 'content_block_stop', index: 0 }, []);
    handover.relayed({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }, []);
    handover.relayed({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Sure' } }, []);
    const renderer = handover.renderer();
    const out =
      renderer.render([
        delta('.\n'),
        { type: 'tool-input-start', id: 'toolu_1', toolName: 'Bash' },
        { type: 'tool-input-delta', id: 'toolu_1', delta: '{"command":"ls"}' },
        { type: 'tool-input-end', id: 'toolu_1' },
        { type: 'text-end', id: '1' },
        { type: 'usage', usage: { completion_tokens: 9 } },
        { type: 'finish', reason: 'stop' },
      ]) + renderer.end();
    const events = out
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
    expect(events.map((e) => [e.type, e.index])).toEqual([
      ['content_block_delta', 1],
      ['content_block_stop', 1],
      ['content_block_start', 2],
      ['content_block_delta', 2],
      ['content_block_stop', 2],
      ['message_delta', undefined],
      ['message_stop', undefined],
    ]);
    expect(events[0].delta).toEqual({ type: 'text_delta', text: '.\n' });
    expect(events.find((e) => e.type === 'message_delta')).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: 25, output_tokens: 9 } });
  });
});
