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

/** A recovered answer as a whole answer's content. */
export function segmentContent(segments: readonly Segment[], idPrefix: string): AssistantPart[] {
  return segments.map(
    (segment): AssistantPart =>
      segment.type === 'call'
        ? { type: 'tool_call', id: newId(idPrefix), name: segment.name, arguments: segment.arguments }
        : { type: 'text', text: segment.text },
  );
}
