import { newId } from '../core/ids.js';
import { type NeutralResponse, settledFinish } from '../core/neutral.js';
import { toResponsesUsage } from './usage.js';

// A whole answer (not streamed) in the Responses protocol; a stream's events are render.ts's.

/** A whole neutral answer as a Responses object. */
export function renderResponsesResponse(response: NeutralResponse, model: string, namespaces: ReadonlyMap<string, string> = new Map()): string {
  const output: Record<string, unknown>[] = [];
  let text = '';
  for (const part of response.content) {
    if (part.type === 'reasoning') output.push({ id: newId('rs_'), type: 'reasoning', summary: [{ type: 'summary_text', text: part.text }] });
    else if (part.type === 'tool_call') {
      const namespace = namespaces.get(part.name);
      output.push({
        id: newId('fc_'),
        type: 'function_call',
        status: 'completed',
        call_id: part.id,
        name: part.name,
        arguments: part.arguments,
        ...(namespace ? { namespace } : {}),
      });
    } else {
      text += part.text;
      output.push({
        id: newId('msg_'),
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: part.text, annotations: [] }],
      });
    }
  }
  const finish = settledFinish(
    response.finishReason,
    response.content.some((part) => part.type === 'tool_call'),
  );
  const incomplete = finish === 'length' || finish === 'content_filter';
  return JSON.stringify({
    id: newId('resp_'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: incomplete ? 'incomplete' : 'completed',
    model,
    output,
    output_text: text,
    error: null,
    incomplete_details: incomplete ? { reason: finish === 'length' ? 'max_output_tokens' : 'content_filter' } : null,
    usage: toResponsesUsage(response.usage),
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
  });
}
