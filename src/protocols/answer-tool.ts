import type { AssistantPart, NeutralEvent, NeutralResponse, ResponseFormat } from './neutral.js';
import type { EventFacts, StreamDecoder } from './types.js';

/**
 * Structured output for a server that has no response format but can be made to call a tool
 * (Anthropic Messages): the answer is the input of a tool the request forces, and on the way
 * back that tool call becomes the answer's text again — streamed, its argument pieces as text
 * deltas — so the client gets JSON that parses against its schema, never prose.
 */
export const ANSWER_TOOL = 'json_answer';

/** The forced tool for a response format; null for plain text, Unsupported-worthy when the schema is not an object. */
export function answerTool(format: ResponseFormat): { name: string; description: string; input_schema: Record<string, unknown> } | { unsupported: string } | null {
  if (format.type === 'text') return null;
  const schema = format.type === 'json_object' ? { type: 'object' } : format.schema;
  // A tool's input is an object: a schema of another type has no tool to carry it.
  if (schema.type !== 'object') return { unsupported: 'a json_schema response format whose top level is not an object cannot be carried by an Anthropic tool' };
  return { name: ANSWER_TOOL, description: 'Give your final answer by calling this tool: its input is the answer, as JSON.', input_schema: schema };
}

/** A stream decoder that turns the answer tool's call into text; other tool calls are renumbered around it. */
export class AnswerToolDecoder implements StreamDecoder {
  private readonly events: NeutralEvent[] = [];
  private answerIndex = -1;
  private otherCalls = 0;
  /** Upstream tool-call index → the client's. */
  private readonly renumbered = new Map<number, number>();

  constructor(private readonly inner: StreamDecoder, private readonly name: string) {}

  decode(facts: EventFacts, out: NeutralEvent[]): void {
    this.events.length = 0;
    this.inner.decode(facts, this.events);
    for (const event of this.events) {
      if (event.type === 'tool_call_start') {
        if (event.name === this.name && this.answerIndex < 0) {
          this.answerIndex = event.index;
          continue;
        }
        const index = this.otherCalls++;
        this.renumbered.set(event.index, index);
        out.push({ ...event, index });
      } else if (event.type === 'tool_call_delta') {
        if (event.index === this.answerIndex) out.push({ type: 'text', delta: event.delta });
        else out.push({ ...event, index: this.renumbered.get(event.index) ?? event.index });
      } else if (event.type === 'finish' && event.reason === 'tool_calls' && this.otherCalls === 0) {
        // The forced call was the answer, not a tool the client has to run.
        out.push({ type: 'finish', reason: 'stop' });
      } else {
        out.push(event);
      }
    }
  }
}

/** A whole answer with the answer tool's call as its text. */
export function unwrapAnswerTool(response: NeutralResponse, name: string): NeutralResponse {
  let answered = false;
  const content = response.content.map((part): AssistantPart => {
    if (part.type !== 'tool_call' || part.name !== name || answered) return part;
    answered = true;
    return { type: 'text', text: part.arguments };
  });
  if (!answered) return response;
  const others = content.some((part) => part.type === 'tool_call');
  return { ...response, content, finishReason: response.finishReason === 'tool_calls' && !others ? 'stop' : response.finishReason };
}
