import { describe, expect, it } from 'vitest';
import { chatWire } from '../../../../src/protocols/chat/wire.js';
import { chatClient } from '../../../../src/protocols/chat/client.js';
import type { StreamPart } from '../../../../src/protocols/core/stream-part.js';
import { toolTextScope } from '../../../../src/protocols/tool-text/scope.js';
import { TextCallReader } from '../../../../src/protocols/tool-text/text-call-reader.js';
import { EVENT_BAD_TOOL_CALL, EVENT_CONTENT, EVENT_ERROR, EVENT_REWRITTEN, newFacts } from '../../../../src/protocols/core/event-facts.js';
import { chunk } from '../../../helpers/fake-upstream.js';
import { CHAT_TOOLS } from '../../../helpers/tool-text-kit.js';
import { HERMES } from '../../../helpers/tool-text-forms.js';

// The hold as a reader: what the commit rule (EVENT_CONTENT) sees of each Chat event.
function readerFor(last = false, holdsReasoning = true) {
  const parsed = chatClient.parse({ model: 'chat', messages: [{ role: 'user', content: 'x' }], tools: CHAT_TOOLS }, {});
  if (!parsed.ok) throw new Error(parsed.message);
  const scope = toolTextScope(parsed.request, chatClient);
  if (!scope) throw new Error('no scope');
  return { reader: new TextCallReader(chatWire.reader(), scope, { name: 'local', isLast: () => last }, holdsReasoning), scope };
}

function feed(reader: TextCallReader, pieces: string[]) {
  const facts = newFacts();
  const events = [chunk({ role: 'assistant', content: '' }), ...pieces.map((content) => chunk({ content })), chunk({}, 'stop')];
  return events.map((event) => {
    reader.read(JSON.stringify(event), facts);
    return { flags: facts.flags, parts: [...facts.parts] as StreamPart[] };
  });
}

describe('TextCallReader', () => {
  it('holds a Hermes call however it is cut, and commits once, on the event that closes it, with the call', () => {
    for (let size = 1; size <= 24; size++) {
      const pieces = HERMES.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [];
      const read = feed(readerFor().reader, pieces);
      const firstContent = read.findIndex((r) => r.flags & EVENT_CONTENT);
      expect(firstContent, `pieces of ${size}`).toBe(pieces.length); // the last piece closes the form
      expect(read[firstContent].flags & EVENT_REWRITTEN).toBeTruthy();
      const parts = read.flatMap((r) => r.parts);
      expect(parts.filter((p) => p.type === 'text-delta')).toEqual([]);
      expect(parts.filter((p) => p.type === 'tool-input-start')).toEqual([{ type: 'tool-input-start', id: expect.stringMatching(/^call_/), toolName: 'Bash' }]);
      expect(
        parts
          .filter((p) => p.type === 'tool-input-delta')
          .map((p) => (p as { delta: string }).delta)
          .join(''),
      ).toBe('{"command":"ls -la"}');
      expect(parts.filter((p) => p.type === 'finish')).toEqual([{ type: 'finish', reason: 'tool_calls' }]);
    }
  });

  it('lets a plain answer through at its first character, parts untouched', () => {
    const read = feed(readerFor().reader, ['Hello', ' world']);
    expect(read[1].flags & EVENT_CONTENT).toBeTruthy();
    expect(read[1].parts).toEqual([
      { type: 'text-start', id: 'text-0' },
      { type: 'text-delta', id: 'text-0', delta: 'Hello' },
    ]);
  });

  it('gives held whitespace and an opener-like start back, in order, when the text turns out plain', () => {
    const read = feed(readerFor().reader, ['\n', '<', 'b>bold</b>']);
    expect(read.slice(0, 3).every((r) => !(r.flags & EVENT_CONTENT))).toBe(true);
    // Held as one growing delta, given back whole before what follows.
    expect(read[3].parts.filter((p) => p.type === 'text-delta').map((p) => (p as { delta: string }).delta)).toEqual(['\n<b>bold</b>']);
  });

  it("a form's first bytes are held as a form (the TTFT is met); a hold cut short is a bad call, or on the last tier the text as written", () => {
    const facts = newFacts();
    const { reader, scope } = readerFor();
    expect(reader.heldForm()).toBe(0);
    reader.read(JSON.stringify(chunk({ content: '<tool_' })), facts);
    // Even a prefix of an opener is the form's first bytes: no TTFT release, the attempt holds it on progress.
    expect(reader.heldForm()).toBe(6);
    expect(reader.ttftEnded(facts)).toBeNull();
    reader.read(JSON.stringify(chunk({ content: 'call>\n{"name": "Bash"' })), facts);
    expect(reader.heldForm()).toBe(27);
    expect(reader.holdEnded(facts, 'stalled')).toEqual({ badCall: 'a hermes form stalled' });
    expect(scope.reports).toEqual([{ tier: 'local', format: 'hermes', calls: 0, repaired: false, result: 'failed_over' }]);
    // On the last tier the held text comes back as one event's content, to commit.
    const { reader: last, scope: lastScope } = readerFor(true);
    last.read(JSON.stringify(chunk({ content: '<tool_call>\n{"name"' })), facts);
    expect(last.holdEnded(facts, 'stalled')).toBe('released');
    expect(facts.flags & EVENT_CONTENT).toBeTruthy();
    expect(facts.parts.filter((p) => p.type === 'text-delta')).toEqual([{ type: 'text-delta', id: 'text-0', delta: '<tool_call>\n{"name"' }]);
    expect(lastScope.reports).toMatchObject([{ result: 'passed_as_text', calls: 0 }]);
  });

  it('a bad call is an error event for the attempt; on the last tier, the text as written', () => {
    const bad = HERMES.replace('Bash', 'Nope');
    const failing = feed(readerFor().reader, [bad]);
    expect(failing[1].flags & (EVENT_ERROR | EVENT_BAD_TOOL_CALL)).toBe(EVENT_ERROR | EVENT_BAD_TOOL_CALL);
    const last = feed(readerFor(true).reader, [bad]);
    const delivered = last
      .flatMap((r) => r.parts)
      .filter((p) => p.type === 'text-delta')
      .map((p) => (p as { delta: string }).delta)
      .join('');
    expect(delivered).toBe(bad);
  });

  it('a relayed stream holds reasoning with the text; when ttft_ms ends on reasoning alone it goes out (no failure)', () => {
    const { reader } = readerFor();
    const facts = newFacts();
    reader.read(JSON.stringify(chunk({ reasoning_content: 'thinking…' })), facts);
    expect(facts.flags & EVENT_CONTENT).toBe(0);
    expect(reader.ttftEnded(facts)).toBe('released');
    expect(facts.flags & EVENT_CONTENT).toBeTruthy();
    expect(facts.parts.filter((p) => p.type === 'reasoning-delta')).toEqual([{ type: 'reasoning-delta', id: 'reasoning-0', delta: 'thinking…' }]);
  });

  it('a rendered stream commits on reasoning as before, still converts a form after it, and passes a bad one as text (no failover after commit)', () => {
    const good = readerFor(false, false).reader;
    const facts = newFacts();
    good.read(JSON.stringify(chunk({ reasoning_content: 'plan' })), facts);
    expect(facts.flags & EVENT_CONTENT).toBeTruthy();
    good.read(JSON.stringify(chunk({ content: HERMES })), facts);
    expect(facts.parts.map((p) => p.type)).toContain('tool-input-start');

    const { reader: bad, scope } = readerFor(false, false);
    bad.read(JSON.stringify(chunk({ reasoning_content: 'plan' })), facts);
    bad.read(JSON.stringify(chunk({ content: HERMES.replace('Bash', 'Nope') })), facts);
    bad.read(JSON.stringify(chunk({}, 'stop')), facts);
    expect(facts.flags & EVENT_ERROR).toBe(0);
    expect(scope.reports).toEqual([{ tier: 'local', format: 'hermes', calls: 0, repaired: false, result: 'passed_as_text' }]);
  });
});
