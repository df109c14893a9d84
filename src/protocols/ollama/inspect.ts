import { isRecord } from '../../util/is-record.js';
import {
  EVENT_CONTENT, EVENT_DONE, EVENT_ERROR, EVENT_FINISH, EVENT_USAGE, type EventFacts,
} from '../types.js';
import { eventObject } from '../json.js';
import { ollamaUsage } from './usage.js';

/** Reads one line of Ollama's NDJSON stream: a message piece, the final `done` line, or `{"error":…}`. */
export function inspectOllamaLine(data: string, out: EventFacts): void {
  const line = eventObject(data, out);
  if (line === null) return;
  if (line.error != null) {
    out.flags = EVENT_ERROR;
    return;
  }
  let flags = 0;
  const message = isRecord(line.message) ? line.message : undefined;
  if (message) {
    let text = '';
    if (typeof message.thinking === 'string') text += message.thinking;
    if (typeof message.content === 'string') text += message.content;
    const calls = Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
    if (text !== '' || calls) {
      flags |= EVENT_CONTENT;
      out.text = calls ? `${text}${JSON.stringify(message.tool_calls)}` : text;
    }
  }
  if (line.done === true) {
    flags |= EVENT_FINISH | EVENT_CONTENT | EVENT_DONE;
    const usage = ollamaUsage(line);
    if (usage) {
      out.usage = usage;
      flags |= EVENT_USAGE;
    }
  }
  out.flags = flags;
}
