import { eventData } from '../../sse/parser.js';
import type { EventFacts } from '../core/event-facts.js';
import type { StreamOutput } from '../core/stream-output.js';
import { RelayOutput } from '../stream-output/relay-output.js';
import { streamErrorJson } from './error-body.js';
import { ArrayFrames, SseFrames } from './frames.js';

/**
 * A stream relayed from a `gemini` tier (called with `alt=sse`) to a Gemini client. With
 * `alt=sse` its events go out as they came: a Gemini stream has no terminator to add, and an
 * upstream's error chunk is already the last one. Without it, each event's data becomes an
 * element of the JSON array the client asked for, as it came.
 */
export function geminiRelay(sse: boolean): StreamOutput {
  if (sse) {
    const frames = new SseFrames();
    return new RelayOutput(null, (message) => frames.error(streamErrorJson(message)));
  }
  return new ArrayRelay();
}

class ArrayRelay implements StreamOutput {
  readonly relays = true;
  private readonly frames = new ArrayFrames();

  event(_facts: EventFacts, raw: Buffer): Buffer | null {
    const data = eventData(raw);
    return data === null ? null : Buffer.from(this.frames.chunk(data));
  }

  keepAlive(): null {
    // A JSON array has no comments: SSE keep-alives have no place in it.
    return null;
  }

  complete(): Buffer {
    return Buffer.from(this.frames.end());
  }

  upstreamError(raw: Buffer): Buffer {
    return Buffer.from(this.frames.error(eventData(raw) ?? streamErrorJson('upstream error after the first token')));
  }

  interrupted(message: string): Buffer {
    return Buffer.from(this.frames.error(streamErrorJson(message)));
  }
}
