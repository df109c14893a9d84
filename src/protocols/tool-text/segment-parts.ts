import { newId } from '../core/ids.js';
import type { AssistantPart } from '../core/neutral.js';
import type { StreamPart } from '../core/stream-part.js';
import type { Segment } from './recover.js';

/** A recovered answer as stream parts, as a native one streams: each call a tool-input block (its arguments one delta), text a text block. */
export function segmentParts(segments: readonly Segment[], idPrefix: string): StreamPart[] {
  const parts: StreamPart[] = [];
  for (const segment of segments) {
    if (segment.type === 'call') {
      const id = newId(idPrefix);
      parts.push(
        { type: 'tool-input-start', id, toolName: segment.name },
        { type: 'tool-input-delta', id, delta: segment.arguments },
        { type: 'tool-input-end', id },
      );
    } else {
      const id = newId('text-');
      parts.push({ type: 'text-start', id }, { type: 'text-delta', id, delta: segment.text }, { type: 'text-end', id });
    }
  }
  return parts;
}

/** Stream parts of text and calls (as committed-text.ts writes them) as a whole answer's content: each call one part, each run of text one. */
export function partsContent(parts: readonly StreamPart[]): AssistantPart[] {
  const content: AssistantPart[] = [];
  const calls = new Map<string, { type: 'tool_call'; id: string; name: string; arguments: string }>();
  for (const part of parts) {
    if (part.type === 'text-delta') {
      const last = content.at(-1);
      if (last?.type === 'text') last.text += part.delta;
      else content.push({ type: 'text', text: part.delta });
    } else if (part.type === 'tool-input-start') {
      const call = { type: 'tool_call' as const, id: part.id, name: part.toolName, arguments: '' };
      calls.set(part.id, call);
      content.push(call);
    } else if (part.type === 'tool-input-delta') {
      const call = calls.get(part.id);
      if (call) call.arguments += part.delta;
    }
  }
  return content;
}
