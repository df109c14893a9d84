import type { AssistantPart, NeutralResponse, ResponseFormat } from '../core/neutral.js';
import type { StreamPart } from '../core/stream-part.js';
import type { EventFacts, PartStage } from '../core/event-facts.js';

/**
 * Structured output for a server that has no response format but can be made to call a tool
 * (Anthropic Messages): the answer is the input of a tool the request forces, and on the way
 * back that tool call becomes the answer's text again — streamed, its argument pieces as text
 * deltas — so the client gets JSON that parses against its schema, never prose.
 */
export const ANSWER_TOOL = 'json_answer';

/** The forced tool for a response format; null for plain text, Unsupported-worthy when the schema is not an object. */
export function answerTool(
  format: ResponseFormat,
): { name: string; description: string; input_schema: Record<string, unknown> } | { unsupported: string } | null {
  if (format.type === 'text') return null;
  const schema = format.type === 'json_object' ? { type: 'object' } : format.schema;
  // A tool's input is an object: a schema of another type has no tool to carry it.
  if (schema.type !== 'object') return { unsupported: 'a json_schema response format whose top level is not an object cannot be carried by an Anthropic tool' };
  return { name: ANSWER_TOOL, description: 'Give your final answer by calling this tool: its input is the answer, as JSON.', input_schema: schema };
}

/**
 * A stage that turns the answer tool's call into a text block (its input deltas the text);
 * other tool calls pass as they are (renderers number calls in the order they start).
 */
export class AnswerToolStage implements PartStage {
  private readonly parts: StreamPart[] = [];
  private answerId: string | null = null;
  private otherCalls = 0;

  constructor(
    private readonly inner: PartStage,
    private readonly name: string,
  ) {}

  decode(facts: EventFacts, out: StreamPart[]): void {
    this.parts.length = 0;
    this.inner.decode(facts, this.parts);
    for (const part of this.parts) {
      switch (part.type) {
        case 'tool-input-start':
          if (part.toolName === this.name && this.answerId === null) {
            this.answerId = part.id;
            out.push({ type: 'text-start', id: part.id });
          } else {
            this.otherCalls++;
            out.push(part);
          }
          break;
        case 'tool-input-delta':
          out.push(part.id === this.answerId ? { type: 'text-delta', id: part.id, delta: part.delta } : part);
          break;
        case 'tool-input-end':
          out.push(part.id === this.answerId ? { type: 'text-end', id: part.id } : part);
          break;
        case 'finish':
          // The forced call was the answer, not a tool the client has to run.
          out.push(part.reason === 'tool_calls' && this.otherCalls === 0 ? { type: 'finish', reason: 'stop' } : part);
          break;
        default:
          out.push(part);
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
