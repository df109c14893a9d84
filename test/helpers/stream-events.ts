import type { FinishReason } from '../../src/protocols/core/neutral.js';
import type { StreamPart } from '../../src/protocols/core/stream-part.js';
import type { Usage } from '../../src/protocols/core/usage.js';

/**
 * The flat neutral events the stream tests were first written in, before the stream became
 * parts with blocks and ids: a projection of parts onto them (blocks' starts and ends and
 * opaque content dropped, tool calls numbered in the order they start), so those tests'
 * expectations stay as they were written. The parts themselves are tested in each protocol room's reader.test.ts (test/unit/protocols/).
 */
export type NeutralEvent =
  | { type: 'text'; delta: string }
  | { type: 'reasoning'; delta: string }
  | { type: 'reasoning_signature'; signature: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; delta: string }
  | { type: 'finish'; reason: FinishReason }
  | { type: 'usage'; usage: Partial<Usage> }
  | { type: 'error'; message: string };

/** Parts as the flat events. */
export function eventsOf(parts: readonly StreamPart[]): NeutralEvent[] {
  const calls = new Map<string, number>();
  const events: NeutralEvent[] = [];
  for (const part of parts) {
    switch (part.type) {
      case 'text-delta':
        events.push({ type: 'text', delta: part.delta });
        break;
      case 'reasoning-delta':
        events.push({ type: 'reasoning', delta: part.delta });
        break;
      case 'reasoning-end':
        if (part.signature !== undefined) events.push({ type: 'reasoning_signature', signature: part.signature });
        break;
      case 'tool-input-start':
        calls.set(part.id, calls.size);
        events.push({ type: 'tool_call_start', index: calls.get(part.id) as number, id: part.id, name: part.toolName });
        break;
      case 'tool-input-delta':
        events.push({ type: 'tool_call_delta', index: calls.get(part.id) ?? -1, delta: part.delta });
        break;
      case 'finish':
        events.push({ type: 'finish', reason: part.reason });
        break;
      case 'usage':
      case 'error':
        events.push(part);
        break;
      default:
        break;
    }
  }
  return events;
}

/**
 * Flat events as parts, one for one: deltas with no starts or ends (a renderer opens a block at
 * its first delta and closes it when another kind comes), a signature as its block's end.
 */
export function partsOf(events: readonly NeutralEvent[]): StreamPart[] {
  const ids = new Map<number, string>();
  return events.map((event): StreamPart => {
    switch (event.type) {
      case 'text':
        return { type: 'text-delta', id: 'text', delta: event.delta };
      case 'reasoning':
        return { type: 'reasoning-delta', id: 'reasoning', delta: event.delta };
      case 'reasoning_signature':
        return { type: 'reasoning-end', id: 'reasoning', signature: event.signature };
      case 'tool_call_start':
        ids.set(event.index, event.id);
        return { type: 'tool-input-start', id: event.id, toolName: event.name };
      case 'tool_call_delta':
        return { type: 'tool-input-delta', id: ids.get(event.index) ?? `call_${event.index}`, delta: event.delta };
      default:
        return event;
    }
  });
}
