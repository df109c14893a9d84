import { eventObject } from '../core/json.js';
import { settledFinish } from '../core/neutral.js';
import { readFactsOfParts } from '../core/part-facts.js';
import { BlockRuns, type StreamPart } from '../core/stream-part.js';
import type { EventFacts, StreamReader } from '../core/event-facts.js';
import { googleError } from './errors.js';
import { answerFinish, callId, firstCandidate, partsOf, readGeminiPart } from './parts.js';
import { geminiUsage } from './usage.js';

/**
 * Reads Gemini's `streamGenerateContent?alt=sse` stream: each `data:` a whole
 * `GenerateContentResponse` chunk, and no terminator. Like Chat it has no blocks on the wire: a
 * run of text or of thought text is one block, closed when the other kind starts, a call comes
 * or the answer ends. A function call comes whole: start, its arguments as one delta, end.
 * `usageMetadata` is cumulative (each chunk's replaces the last); the chunk with a
 * `finishReason` ends the answer (`STOP` after calls is settled as tool calls, as Gemini says
 * `STOP` there). A prompt Gemini blocked ends it as a content filter; an `{"error":…}` chunk is
 * an error inside the stream. Content (the commit point) is what the parts make it: text,
 * thought text, a call or a finish; a chunk of empty text or of a signature alone is not.
 */
export class GeminiReader implements StreamReader {
  private readonly parts: StreamPart[] = [];
  private readonly runs = new BlockRuns(this.parts);
  private calls = 0;
  private finished = false;

  read(data: string, facts: EventFacts): void {
    const parts = this.parts;
    parts.length = 0;
    facts.parts = parts;
    const chunk = eventObject(data, facts);
    if (chunk === null) return;
    if (chunk.error !== undefined) {
      parts.push({ type: 'error', message: googleError(chunk)?.message ?? 'the upstream reported an error' });
      readFactsOfParts(parts, facts);
      return;
    }
    const candidate = firstCandidate(chunk);
    for (const raw of partsOf(candidate)) {
      const part = readGeminiPart(raw);
      if (part === null) continue;
      if (part.kind === 'text') this.runs.run('text', part.text);
      else if (part.kind === 'thought') this.runs.run('reasoning', part.text);
      else if (part.kind === 'call') this.runs.wholeCall(callId(part.id, chunk.responseId, this.calls++), part.name, part.arguments);
      else parts.push({ type: 'opaque' });
    }
    const finish = answerFinish(chunk, candidate);
    if (finish !== undefined) this.runs.close();
    const usage = geminiUsage(chunk.usageMetadata);
    if (usage) parts.push({ type: 'usage', usage });
    // One finish an answer: a chunk after it (usage alone) adds nothing to it.
    if (finish !== undefined && !this.finished) {
      this.finished = true;
      parts.push({ type: 'finish', reason: settledFinish(finish, this.calls > 0) });
    }
    readFactsOfParts(parts, facts);
  }
}
