import type { StreamPart } from './stream-part.js';
import { EVENT_CONTENT, EVENT_ERROR, EVENT_FINISH, EVENT_PROGRESS, EVENT_USAGE, type EventFacts } from './event-facts.js';

/**
 * The commit facts of one event, read from the parts its reader decoded (one rule for every
 * wire, so what commits a stream is what a translation renders). Content: a non-empty text or
 * reasoning delta, a tool call's start or input, a finish, an opaque piece of content. A
 * block's start or end, usage and errors are not. `facts.text` gathers the generated text
 * (deltas, tool names) for a token estimate. ORs into `facts.flags`: the reader sets the
 * wire's own flags (done, malformed, usage-only). Content is also progress (EVENT_PROGRESS),
 * what ends a committed stream's silence: keep-alives (a ping, an empty delta, a usage-only
 * chunk, a line with no content) have none, so they neither end a silence nor count as a gap.
 */
export function readFactsOfParts(parts: readonly StreamPart[], facts: EventFacts): void {
  let flags = facts.flags;
  let text: string | undefined;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    let piece: string | undefined;
    switch (part.type) {
      case 'text-delta':
      case 'reasoning-delta':
      case 'tool-input-delta':
        if (part.delta === '') continue;
        piece = part.delta;
        break;
      case 'tool-input-start':
        piece = part.toolName;
        break;
      case 'opaque':
        piece = part.text ?? '';
        break;
      case 'finish':
        flags |= EVENT_FINISH | EVENT_CONTENT | EVENT_PROGRESS;
        continue;
      case 'usage':
        flags |= EVENT_USAGE;
        facts.usage = part.usage;
        continue;
      case 'error':
        flags |= EVENT_ERROR;
        continue;
      default:
        continue;
    }
    flags |= EVENT_CONTENT | EVENT_PROGRESS;
    text = text === undefined ? piece : text + piece;
  }
  facts.flags = flags;
  facts.text = text;
}
