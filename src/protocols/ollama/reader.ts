import { isRecord } from '../../util/is-record.js';
import { stringField } from '../core/fields.js';
import { eventObject } from '../core/json.js';
import { readFactsOfParts } from '../core/part-facts.js';
import { BlockRuns, type StreamPart } from '../core/stream-part.js';
import { EVENT_DONE, type EventFacts, type StreamReader } from '../core/event-facts.js';
import { ollamaFinish } from './decode.js';
import { ollamaUsage } from './usage.js';

/**
 * Reads Ollama's NDJSON stream: message pieces (/api/generate's: `response` and `thinking` at
 * the top), the final `done` line, or `{"error":…}`. Like
 * Chat it has no blocks on the wire: a run of thinking or of content is one block, closed when
 * the other kind starts, a tool call comes or the answer is done. Tool calls come whole (name and
 * arguments as an object): start, the arguments as one delta, end. Ollama says
 * `done_reason: "stop"` even after tool calls, which the renderers settle as tool calls.
 */
export class OllamaReader implements StreamReader {
  private readonly parts: StreamPart[] = [];
  private readonly runs = new BlockRuns(this.parts);
  private calls = 0;

  read(data: string, facts: EventFacts): void {
    const parts = this.parts;
    parts.length = 0;
    facts.parts = parts;
    const line = eventObject(data, facts);
    if (line === null) return;
    if (line.error != null) {
      parts.push({ type: 'error', message: typeof line.error === 'string' ? line.error : 'the upstream reported an error' });
    } else {
      // /api/chat's `message`, else /api/generate's line itself (its `response` is the content).
      if (isRecord(line.message)) this.readMessage(line.message, line.message.content);
      else this.readMessage(line, line.response);
      if (line.done === true) {
        this.runs.close();
        const usage = ollamaUsage(line);
        if (usage) parts.push({ type: 'usage', usage });
        parts.push({ type: 'finish', reason: ollamaFinish(line.done_reason) });
        facts.flags = EVENT_DONE;
      }
    }
    readFactsOfParts(parts, facts);
  }

  private readMessage(message: Record<string, unknown>, content: unknown): void {
    if (typeof message.thinking === 'string' && message.thinking !== '') this.runs.run('reasoning', message.thinking);
    if (typeof content === 'string' && content !== '') this.runs.run('text', content);
    if (!Array.isArray(message.tool_calls)) return;
    for (const call of message.tool_calls) {
      const fn = isRecord(call) && isRecord(call.function) ? call.function : undefined;
      if (!fn) continue;
      const id = (isRecord(call) ? stringField(call.id) : undefined) || `call_${this.calls}`;
      this.calls++;
      this.runs.wholeCall(id, stringField(fn.name) ?? '', typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}));
    }
  }
}
